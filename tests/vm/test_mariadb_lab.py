#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7), a real database. MariaDB (Debian 13's,
from an ext4 image the guest mounts and chroots into, tests/vm/mariadb-root.sh)
runs sysbench oltp_write_only with innodb_flush_method=O_DIRECT on four NVMe
namespaces with 4 KiB LBAs, each under the write log:

  A  NAWUPF 16 KiB (32 KiB boundary), ext4 bigalloc 16 KiB clusters, the
     block layer merging no writes (queue/nomerges 2, as plain_direct needs),
     innodb_doublewrite as `lcloudctl advise --db mariadb` says (OFF);
  B  the same device, innodb_doublewrite ON: the cost of the buffer;
  C  no atomic parameters (one 4 KiB block), plain ext4, innodb_doublewrite
     OFF although advise keeps it ON: the negative control;
  D  NAWUPF 16 KiB (32 KiB boundary), XFS with 16 KiB blocks (block size
     above the 4 KiB memory page, Linux 6.12 and later), nomerges 2,
     innodb_doublewrite as advise says (OFF).

On the host, innodb_pages.py finds every InnoDB page write in each log by its
content (page number, LSN in header and trailer) and judges it with the log
oracle's rules under the device model the test itself configured (not one
read by lcloudctl): A and D must have no tearable page write; C must have some, and
a crash image cut in the middle of one (`lcloudctl replay --base --cut
--tear`) must hold a page that MariaDB's innochecksum rejects, while the same
file in the final image passes. A second guest then runs MariaDB's own crash
recovery, doublewrite OFF, on crash images of A and D cut in the middle of
the load (every page verified first with innochecksum; it must start and
CHECK TABLE must pass) and on C's torn one (it must not come back clean).
The log's write count and bytes are compared
with `lcloudctl replay`'s reading and with the guest's /sys/block/*/stat.
Every server of the load has liblcloud's MariaDB plugin (bindings/mariadb,
built here against 11.8's plugin headers and this build's liblcloud) loaded:
its status variables and error-log lines must say doublewrite is not needed
on A, B and D and needed on C, as advise, the write logs and the crash
recovery found; B's first run, whose namespace the server's user may not
open, must say "unknown" with the reason.
Figures (TCG: emulation bound) go to OUTDIR/figures.json when
MARIADB_LAB_OUT is set. MARIADB_LAB_SECONDS (20) sets each load's length; MARIADB_LAB_KEEP=1 keeps the
images, MARIADB_LAB_RESULTS=OUTDIR/res judges a kept run again."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from vmlib import GuestRun, keep, run_guest, LCLOUDCTL, HERE
from hostlib import main

sys.path.insert(0, os.path.join(HERE, "..", "mariadb"))
import mdserver  # noqa: E402

SECONDS = int(os.environ.get("MARIADB_LAB_SECONDS", "20"))
SOURCE_ROOT = os.environ.get("SOURCE_ROOT", os.path.join(HERE, "..", ".."))
BUILD_ROOT = os.environ.get("BUILD_ROOT", os.path.dirname(os.path.dirname(os.path.realpath(LCLOUDCTL or "/"))))
ATOMIC = "atomic.nawun=3,atomic.nawupf=3,atomic.nabsn=7,atomic.nabspf=7"
# the model each namespace was given above, in bytes: (lba, atomic unit, boundary)
MODEL = {"A": (4096, 16384, 32768), "B": (4096, 16384, 32768), "C": (4096, 4096, 0), "D": (4096, 16384, 32768)}
# each namespace's file system: (type, made by make_image)
FS = {"A": "ext4-bigalloc", "B": "ext4-bigalloc", "C": "ext4", "D": "xfs-16k"}

GUEST = r'''
set -u
R=/r
fail() { echo "$*" >> /out/fail; }
modprobe xfs || fail "cannot load xfs"
for n in 0 1 2 3; do eval d=\${LCVM_NVME$n}n1; cat /sys/block/${d##*/}/stat > /out/stat-boot-$n; done
mkdir -p $R && mount -t ext4 -o ro $LCVM_VIRTIO0 $R || { fail "cannot mount the MariaDB root"; exit 1; }
mount -t tmpfs tmpfs $R/tmp && mount -t tmpfs tmpfs $R/mnt && mount -t proc proc $R/proc &&
    mount -t sysfs sys $R/sys && mount -o bind /dev $R/dev || { fail "cannot set up the chroot"; exit 1; }
# liblcloud's plugin and the libraries the root lacks (plugin_bundle())
mkdir $R/mnt/lcloud && tar -xf /lcloud-plugin.tar -C $R/mnt/lcloud || fail "cannot unpack the plugin"
# The plugin probes as the server's user, who must open a namespace to read
# its Identify data (a udev rule GROUP="mysql", MODE="0640" does it on a host).
mysql_gid=$(sed -n 's/^mysql:[^:]*:\([0-9]*\):.*/\1/p' $R/etc/group)
readable_by_mysql() { chown root:$mysql_gid $1 && chmod 640 $1 || fail "cannot let mysql read $1"; }
n=0
for x in A B C D; do
    eval d=\${LCVM_NVME$n}n1
    t=ext4; [ $x = D ] && t=xfs
    mkdir $R/mnt/$x && mount -t $t $d $R/mnt/$x || fail "cannot mount $x"
    # the proved device merges no writes, as plain_direct needs (lcloud(7)); C keeps the default
    [ $x = C ] || echo 2 > /sys/block/${d##*/}/queue/nomerges
    cat /sys/block/${d##*/}/queue/nomerges > /out/nomerges-$x
    cat /sys/block/${d##*/}/queue/atomic_write_unit_max_bytes > /out/unit-$x
    # B stays root's for its first run
    [ $x = B ] || readable_by_mysql $d
    "$LCLOUDCTL" advise --db mariadb $R/mnt/$x/mysql --format json > /out/advise-$x.json; echo $? > /out/advise-$x.rc
    n=$((n + 1))
done
advised() { sed -n 's/.*"innodb_doublewrite": "\([A-Za-z]*\)".*/\1/p' /out/advise-$1.json; }
load() { # RUN NAME DOUBLEWRITE NVME-INDEX
    t=$1 x=$2 dw=$3; eval d=\${LCVM_NVME$4}n1; s=/sys/block/${d##*/}/stat
    echo $dw > /out/doublewrite-$t
    LD_LIBRARY_PATH=/mnt/lcloud/lib chroot $R mariadbd --defaults-file=/etc/mysql/lab.cnf --datadir=/mnt/$x/mysql \
        --innodb-doublewrite=$dw --plugin-dir=/mnt/lcloud/plugin --plugin-load-add=lcloud > /out/server-$t.log 2>&1 &
    pid=$! i=0
    while ! chroot $R mariadb-admin --socket=/tmp/lab.sock ping > /dev/null 2>&1; do
        i=$((i + 1)); [ $i -gt 300 ] && { fail "server $t did not start"; return 1; }; sleep 0.5
    done
    chroot $R mariadb --socket=/tmp/lab.sock -N -e "SELECT @@innodb_doublewrite, @@innodb_flush_method, @@innodb_page_size, @@innodb_checksum_algorithm" > /out/vars-$t
    chroot $R mariadb --socket=/tmp/lab.sock -N -e "SELECT SPACE, NAME FROM information_schema.INNODB_SYS_TABLESPACES" > /out/spaces-$t
    chroot $R mariadb --socket=/tmp/lab.sock -N -e "SHOW GLOBAL STATUS LIKE 'lcloud%'" > /out/lcloud-$t
    # a short load first, not measured: the first run in a guest otherwise pays for cold caches
    chroot $R sysbench oltp_write_only --db-driver=mysql --mysql-socket=/tmp/lab.sock --mysql-user=root \
        --tables=2 --table-size=20000 --threads=1 --time=8 run > /out/warmup-$t.txt 2>&1 || fail "warm-up $t"
    cat $s > /out/stat-before-$t
    chroot $R sysbench oltp_write_only --db-driver=mysql --mysql-socket=/tmp/lab.sock --mysql-user=root \
        --tables=2 --table-size=20000 --threads=1 --time=$SECONDS run > /out/sysbench-$t.txt 2>&1 || fail "sysbench $t"
    cat $s > /out/stat-after-$t
    chroot $R mariadb-admin --socket=/tmp/lab.sock shutdown || fail "shutdown $t"
    wait $pid
}
# OFF and ON in the order A B B A, so that a drift during the guest's life
# (caches warming, the host's load) weighs on both alike
load A1 A "$(advised A)" 0
load B1 B ON 1
eval d=\${LCVM_NVME1}n1; readable_by_mysql $d
load B2 B ON 1
load A2 A "$(advised A)" 0
load C C OFF 2
load D D "$(advised D)" 3
sync
n=0
for x in A B C D; do
    umount $R/mnt/$x || fail "umount $x"
    eval d=\${LCVM_NVME$n}n1; cat /sys/block/${d##*/}/stat > /out/stat-end-$n
    n=$((n + 1))
done
'''


def plugin_bundle(cache, tmp):
    """The plugin for the lab's servers, as a tar the guest unpacks into the
    chroot: plugin/lcloud.so, built with its Makefile against MariaDB 11.8's
    plugin headers and libmysqlservices.a (the cached Debian 13 root of
    tests/mariadb/md118-root.sh) and against this build's liblcloud, the one
    the guest's lcloudctl runs, so the plugin and advise answer from one
    library; lib/: that liblcloud, libnvme, and those of their libraries
    the lab root lacks (the root's own stay first for mariadbd). Built from
    the tree under test on every run (seconds): nothing of it is cached."""
    p = subprocess.run([os.path.join(HERE, "..", "mariadb", "md118-root.sh")], capture_output=True, text=True)
    assert p.returncode == 0, "md118-root.sh failed:\n" + p.stderr[-3000:]
    headers = p.stdout.strip().splitlines()[-1] + "/root"
    bundle = os.path.join(tmp, "plugin-bundle")
    os.makedirs(os.path.join(bundle, "lib"))
    plugins = mdserver.build_plugin(SOURCE_ROOT, BUILD_ROOT, tmp, [
        "MARIADB_INCLUDE=%s/usr/include/mariadb/server" % headers,
        "MYSQLSERVICES=%s/usr/lib/x86_64-linux-gnu/libmysqlservices.a" % headers])
    os.rename(plugins, os.path.join(bundle, "plugin"))
    p = subprocess.run(["debugfs", "-R", "ls -p /usr/lib/x86_64-linux-gnu", os.path.join(cache, "root.ext4")],
                       capture_output=True, text=True, check=True)
    in_root = {line.split("/")[5] for line in p.stdout.splitlines() if line.count("/") >= 6}
    assert "libc.so.6" in in_root, p.stdout[-2000:]
    # liblcloud, what it links, and libnvme, which it opens with dlopen() (lib/nvme/nvme_transport.c)
    # for NVMe Identify: without it every NVMe answer is "unknown"
    with open(os.path.join(SOURCE_ROOT, "lib", "nvme", "nvme_transport.c")) as f:
        libnvme = re.search(r'^#define LIBNVME_SONAME "(\S+)"', f.read(), re.M).group(1)
    p = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True)
    found = re.search(r"^\s*%s \(libc6,x86-64\) => (\S+)$" % re.escape(libnvme), p.stdout, re.M)
    assert found, "no %s on this host: install libnvme (scripts/install-deps does)" % libnvme
    libs = {"liblcloud.so.0": os.path.join(BUILD_ROOT, "lib", "liblcloud.so.0"), libnvme: found.group(1)}
    for lib in list(libs.values()):
        p = subprocess.run(["ldd", lib], capture_output=True, text=True, check=True)
        for m in re.finditer(r"^\s*(\S+) => (/\S+)", p.stdout, re.M):
            libs.setdefault(m.group(1), m.group(2))
    for name, path in libs.items():
        if name not in in_root:
            shutil.copy(path, os.path.join(bundle, "lib", name))
    tar = os.path.join(tmp, "lcloud-plugin.tar")
    subprocess.run(["tar", "-C", bundle, "-cf", tar, "."], check=True)
    return tar


def mariadb_cache():
    p = subprocess.run([os.path.join(HERE, "mariadb-root.sh")], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError("mariadb-root.sh failed:\n" + p.stderr[-3000:])
    return p.stdout.strip()


def make_image(path, datadir, fs):
    """An ext4 or XFS image holding DATADIR as /mysql, every block of every
    file written: mke2fs -d would leave a data file's zero blocks as holes, and
    an O_DIRECT page write into a bigalloc cluster that is part hole reaches
    the device in two commands (seen in this lab), which is not what a data
    directory MariaDB made itself looks like."""
    if fs == "xfs-16k":  # XFS needs 300 MB at least
        subprocess.run(["truncate", "-s", "320M", path], check=True)
        # the sector size of the namespace it will be on (4 KiB LBAs), not a file's 512 bytes
        subprocess.run(["mkfs.xfs", "-q", "-f", "-b", "size=16384", "-s", "size=4096", path], check=True)
    else:
        opts = ["-O", "bigalloc", "-C", "16384"] if fs == "ext4-bigalloc" else []
        subprocess.run(["mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096"] + opts + [path, "256M"], check=True)
    mnt = path + ".mnt"
    os.makedirs(mnt)
    subprocess.run(["mount", "-o", "loop", path, mnt], check=True)
    try:
        subprocess.run(["cp", "-a", "--sparse=never", datadir, os.path.join(mnt, "mysql")], check=True)
        subprocess.run(["sync", "-f", mnt], check=True)
        # independent reading: no data file of the image may have a hole
        ibdata = os.path.join(mnt, "mysql", "ibdata1")
        assert os.stat(ibdata).st_blocks * 512 >= os.path.getsize(ibdata) >= 12582912, ibdata
    finally:
        subprocess.run(["umount", mnt], check=True)
        os.rmdir(mnt)


def data_file_blocks(image, fs):
    """{4 KiB device block: file under /mysql} for every InnoDB data file
    (ibdata1, *.ibd) of IMAGE, read with FIEMAP (filefrag) on the image
    mounted read-only: the file system's own map, not the lab's."""
    mnt = tempfile.mkdtemp(prefix="lcloud-mariadb-map-")
    opts = "loop,ro" + (",norecovery" if fs.startswith("xfs") else "")
    subprocess.run(["mount", "-o", opts, image, mnt], check=True)
    owner = {}
    try:
        for top, _dirs, files in os.walk(os.path.join(mnt, "mysql")):
            for name in files:
                if not re.search(r"(ibdata1|\.ibd)$", name):
                    continue
                path = os.path.join(top, name)
                p = subprocess.run(["filefrag", "-b4096", "-e", path], capture_output=True, text=True, check=True)
                for m in re.finditer(r"^\s*\d+:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.\s*(\d+):", p.stdout, re.M):
                    for b in range(int(m.group(1)), int(m.group(2)) + 1):
                        owner[b] = os.path.relpath(path, mnt)
    finally:
        subprocess.run(["umount", mnt], check=True)
        os.rmdir(mnt)
    return owner


_state = {}


def lab():
    if _state:
        return _state
    cache = mariadb_cache()
    tmp = tempfile.mkdtemp(prefix="lcloud-mariadb-")
    if os.environ.get("MARIADB_LAB_RESULTS"):  # judge a kept run again (MARIADB_LAB_KEEP) without booting
        return finish(GuestRun(os.environ["MARIADB_LAB_RESULTS"]), cache, tmp)
    imgs = {}
    for x in "ABCD":
        imgs[x] = os.path.join(tmp, x + ".img")
        make_image(imgs[x], os.path.join(cache, "datadir"), FS[x])
    devices = ["--nvme", "lbs=4096,serial=mdA,log=1,image=%s,%s" % (imgs["A"], ATOMIC),
               "--nvme", "lbs=4096,serial=mdB,log=1,image=%s,%s" % (imgs["B"], ATOMIC),
               "--nvme", "lbs=4096,serial=mdC,log=1,image=%s" % imgs["C"],
               "--nvme", "lbs=4096,serial=mdD,log=1,image=%s,%s" % (imgs["D"], ATOMIC),
               "--virtio", "image=%s,drive.readonly=on" % os.path.join(cache, "root.ext4"),
               "--copy", plugin_bundle(cache, tmp) + ":/lcloud-plugin.tar",
               "--env", "SECONDS=%d" % SECONDS, "--mem", "1024", "--module", "xfs"]
    return finish(run_guest(GUEST, devices, timeout=600, lane="current"), cache, tmp)


def finish(run, cache, tmp):
    _state.update(run=run, cache=cache, tmp=tmp, logs={})
    for i, x in enumerate("ABCD"):
        with open(os.path.join(run.outdir, "logs", "nvme%d-n1.json" % i)) as f:
            j = json.load(f)
        for k in ("log", "start_image", "final_image"):
            j[k] = j[k] and os.path.join(run.outdir, "logs", j[k])
        _state["logs"][x] = j
    return _state


def pages(x):
    key = "pages-" + x
    if key not in _state:
        s = lab()
        lba, unit, boundary = MODEL[x]
        p = subprocess.run(["python3", os.path.join(HERE, "innodb_pages.py"), s["logs"][x]["log"], "--lba", str(lba),
                            "--atomic-bytes", str(unit), "--boundary", str(boundary)], capture_output=True, text=True)
        assert p.returncode in (0, 11), p.stderr
        _state[key] = json.loads(p.stdout)
    return _state[key]


RUNS = {"A": ("A1", "A2"), "B": ("B1", "B2"), "C": ("C",), "D": ("D",)}


def sysbench(t):
    text = lab()["run"].text("sysbench-%s.txt" % t)
    m = re.search(r"transactions:\s+(\d+)\s+\(([\d.]+) per sec", text)
    assert m, text[-2000:]
    return int(m.group(1)), float(m.group(2))


def written_bytes(run, before, after):
    b = [int(v) for v in run.text(before).split()]
    a = [int(v) for v in run.text(after).split()]
    return (a[6] - b[6]) * 512


def test_guest_ran_mariadb_as_configured():
    run = lab()["run"]
    assert not run.exists("fail"), run.text("fail")
    for x in "ABCD":
        for t in RUNS[x]:
            dw, method, page, algo = run.text("vars-" + t).split()
            assert (method, page, algo) == ("O_DIRECT", "16384", "full_crc32"), run.text("vars-" + t)
            assert dw == {"A": run.text("doublewrite-A1").strip(), "B": "ON", "C": "OFF",
                          "D": run.text("doublewrite-D").strip()}[x], (t, dw)
            sysbench(t)
    # the proved devices: the guest's kernel sees a 16 KiB atomic unit, advise turns the buffer off
    for x in "AD":
        assert run.text("unit-" + x).strip() == "16384", (x, run.text("unit-" + x))
        assert run.text("nomerges-" + x).strip() == "2", (x, run.text("nomerges-" + x))
        assert run.json("advise-%s.json" % x)["settings"]["innodb_doublewrite"] == "OFF", run.text("advise-%s.json" % x)
        assert run.text("doublewrite-%s" % RUNS[x][0]).strip() == "OFF"
        # and it cites the crash lab's proof of this very stack
        assert any("proved in liblcloud's crash lab" in line for line in run.json("advise-%s.json" % x)["advice"]), \
            run.text("advise-%s.json" % x)
    assert run.text("unit-C").strip() == "4096", run.text("unit-C")
    assert run.json("advise-C.json")["settings"]["innodb_doublewrite"] == "ON", run.text("advise-C.json")


def test_log_read_agrees_with_lcloudctl_and_the_guest():
    s = lab()
    for i, x in enumerate("ABCD"):
        mine = pages(x)
        p = subprocess.run([LCLOUDCTL, "replay", s["logs"][x]["log"], "--lba", "4096", "--format", "json"],
                           capture_output=True, text=True)
        assert p.returncode in (0, 11), p.stderr
        theirs = json.loads(p.stdout)
        log = theirs["logs"][0]
        assert (mine["write_entries"], mine["flush_entries"], mine["bytes_written"]) == \
            (log["writes"], log["flushes"], log["bytes_written"]), (x, mine, log)
        # every byte the guest's block layer sent to the namespace is in the log
        guest = written_bytes(s["run"], "stat-boot-%d" % i, "stat-end-%d" % i)
        assert mine["bytes_written"] == guest, (x, mine["bytes_written"], guest)


def no_tearable_page_write(x):
    r = pages(x)
    assert r["page_writes"] >= 100, (x, r)  # the load really wrote pages
    assert r["tearable"] == 0, json.dumps(r, indent=1)[:4000]
    assert r["atomic"] == r["page_writes"]
    # A header-like block that did not verify must not be a page's start in a
    # data file (a page write the tool could not judge): the file system's own
    # map tells whose block it is; there a page starts on a 16 KiB device
    # offset (16 KiB clusters or blocks).
    owner = data_file_blocks(lab()["logs"][x]["final_image"], FS[x])
    assert len(owner) * 4096 >= 12582912, len(owner)  # the map really covers ibdata1 at least
    in_data = [u for u in r["unverified"] if u["device_offset"] // 4096 in owner]
    assert not [u for u in in_data if u["device_offset"] % 16384 == 0], in_data[:20]
    _state["unverified-" + x] = {"total": r["unverified_heads"], "inside_data_file_pages": len(in_data)}


def test_no_tearable_innodb_page_write_on_the_proved_ext4_bigalloc():
    no_tearable_page_write("A")


def test_no_tearable_innodb_page_write_on_the_proved_xfs_16k():
    no_tearable_page_write("D")


def test_negative_control_tears_and_innochecksum_rejects_the_page():
    s = lab()
    r = pages("C")
    assert r["tearable"] > 0, r
    log = s["logs"]["C"]
    # SPACE -> file under the data directory (innodb_system: ibdata1; db/table: db/table.ibd)
    spaces = {}
    for line in s["run"].text("spaces-C").splitlines():
        sid, name = line.split("\t", 1)
        spaces[sid] = "ibdata1" if name == "innodb_system" else name + ".ibd"
    spaces.setdefault("0", "ibdata1")
    tool = os.path.join(s["cache"], "tools", "run-innochecksum")
    shown = []
    for w in r["tearable_writes"][:10]:
        name = spaces.get(str(w["space_id"]))
        if not name:
            continue
        crash = os.path.join(s["tmp"], "crash.img")
        cut = w["tearing_cut"]
        subprocess.run([LCLOUDCTL, "replay", log["log"], "--lba", "4096", "--base", log["start_image"], "--out", crash,
                        "--cut", str(cut["cut"]), "--tear", str(cut["tear_blocks"])], check=True, capture_output=True)
        rel = "/mysql/" + name
        verdict = {}
        for which, image in (("crash", crash), ("final", log["final_image"])):
            out = os.path.join(s["tmp"], which + ".ibd")
            subprocess.run(["debugfs", "-R", "dump -p %s %s" % (rel, out), image], check=True, capture_output=True)
            p = subprocess.run([tool, "-p", str(w["page_no"]), out], capture_output=True, text=True)
            verdict[which] = (p.returncode, (p.stdout + p.stderr).strip()[-300:])
        shown.append((w, verdict))
        if verdict["crash"][0] != 0 and verdict["final"][0] == 0:
            s["rejected"] = {"page": w, "file": rel, "innochecksum": verdict}
            s["rejected_image"] = os.path.join(s["tmp"], "C-torn.img")
            os.rename(crash, s["rejected_image"])
            return
    raise AssertionError("no crash image showed a rejected page: %s" % json.dumps(shown)[:4000])


RECOVERY_GUEST = r'''
set -u
R=/r
fail() { echo "$*" >> /out/fail; }
modprobe xfs || fail "cannot load xfs"
mkdir -p $R && mount -t ext4 -o ro $LCVM_VIRTIO0 $R || { fail "cannot mount the MariaDB root"; exit 1; }
mount -t tmpfs tmpfs $R/tmp && mount -t tmpfs tmpfs $R/mnt && mount -t proc proc $R/proc &&
    mount -t sysfs sys $R/sys && mount -o bind /dev $R/dev || { fail "cannot set up the chroot"; exit 1; }
n=0
for name in $IMAGES; do
    eval d=\${LCVM_NVME$n}n1; n=$((n + 1))
    t=ext4; case $name in D*) t=xfs;; esac
    # mounting replays the file system's journal, as a boot after the power cut would
    mkdir $R/mnt/$name && mount -t $t $d $R/mnt/$name || { fail "cannot mount $name"; continue; }
    # every page of every data file as the power cut left it, before recovery rewrites any;
    # in ibdata1 not the doublewrite area (two 64-page blocks named in the TRX_SYS page,
    # page 5), which holds copies of other files' pages, not pages of its own
    set -- $(od -An -tx1 -j $((5 * 16384 + 16184 + 10)) -N 12 $R/mnt/$name/mysql/ibdata1)
    [ $# = 12 ] && set -- $((0x$1$2$3$4)) $((0x$5$6$7$8)) $((0x$9${10}${11}${12}))
    echo "$*" > /out/doublewrite-area-$name
    for f in $(cd $R/mnt/$name/mysql && ls ibdata1 */*.ibd); do
        o=/out/innochecksum-$name-$(echo $f | tr / _)
        if [ $f = ibdata1 ] && [ "${1:-}" = 536853855 ] && [ "$3" = $(($2 + 64)) ]; then
            chroot $R innochecksum -e $(($2 - 1)) /mnt/$name/mysql/$f > $o 2>&1 &&
                chroot $R innochecksum -s $(($3 + 64)) /mnt/$name/mysql/$f >> $o 2>&1
        else
            chroot $R innochecksum /mnt/$name/mysql/$f > $o 2>&1
        fi
        echo "$? $f"
    done > /out/innochecksum-$name
    chroot $R mariadbd --defaults-file=/etc/mysql/lab.cnf --datadir=/mnt/$name/mysql --innodb-doublewrite=OFF \
        > /out/recovery-$name.log 2>&1 &
    pid=$! i=0 up=1
    while ! chroot $R mariadb-admin --socket=/tmp/lab.sock ping > /dev/null 2>&1; do
        kill -0 $pid 2> /dev/null || { up=0; break; }
        i=$((i + 1)); [ $i -gt 400 ] && { up=0; kill -9 $pid; break; }; sleep 0.5
    done
    echo $up > /out/up-$name
    if [ $up = 1 ]; then
        chroot $R timeout 300 mariadb --socket=/tmp/lab.sock -N -e \
            "CHECK TABLE sbtest.sbtest1, sbtest.sbtest2 EXTENDED; SELECT COUNT(*) FROM sbtest.sbtest1" \
            > /out/check-$name 2>&1; echo $? > /out/check-$name.rc
        chroot $R mariadb-admin --socket=/tmp/lab.sock shutdown || kill -9 $pid
    fi
    wait $pid; echo $? > /out/exit-$name
    umount $R/mnt/$name || fail "umount $name"
done
'''


def crash_cuts(x):
    """Two power cuts in the middle of namespace X's load, as the device's
    model allows them: after 40 % of the logged entries; and inside the first
    command past 60 % that is larger than the atomic unit and starts on one,
    with only its first unit written (or, if the run has no such command,
    before the first write past 60 %)."""
    log = read_log_entries(lab()["logs"][x]["log"])
    lba, unit, _boundary = MODEL[x]
    writes = [e for e in log if e[2] > 0]
    n = len(log)
    first = [e for e in writes if e[0] >= n * 4 // 10][0]
    torn = [e for e in writes if e[0] >= n * 6 // 10 and e[2] > unit and e[1] % unit == 0]
    if not torn:  # no such command in this run: the cut before the first write past 60 %
        return [(first[0], 0), ([e for e in writes if e[0] >= n * 6 // 10][0][0], 0)]
    return [(first[0], 0), (torn[0][0], unit // lba)]


def read_log_entries(path):
    sys.path.insert(0, HERE)
    import innodb_pages
    return innodb_pages.read_log(path)[2]


def recovery():
    """MariaDB's own crash recovery, with the doublewrite buffer OFF, on crash
    images of the proved namespaces and on the negative control's torn one, in
    a second guest: {image name: (cut, tear)}, GuestRun."""
    s = lab()
    if "recovery" in s:
        return s["recovery"]
    images, devices = {}, []
    for x in "AD":
        log = s["logs"][x]
        for i, (cut, tear) in enumerate(crash_cuts(x)):
            name = "%s%d" % (x, i + 1)
            out = os.path.join(s["tmp"], name + "-crash.img")
            subprocess.run([LCLOUDCTL, "replay", log["log"], "--lba", "4096", "--base", log["start_image"], "--out",
                            out, "--cut", str(cut), "--tear", str(tear)], check=True, capture_output=True)
            images[name] = ((cut, tear), out)
    if s.get("rejected_image"):
        cut = s["rejected"]["page"]["tearing_cut"]
        images["C1"] = ((cut["cut"], cut["tear_blocks"]), s["rejected_image"])
    for name in images:
        devices += ["--nvme", "lbs=4096,serial=rc%s,image=%s" % (name, images[name][1])]
    devices += ["--virtio", "image=%s,drive.readonly=on" % os.path.join(s["cache"], "root.ext4"),
                "--env", "IMAGES=" + " ".join(images), "--mem", "1024", "--module", "xfs"]
    s["recovery"] = ({k: v[0] for k, v in images.items()}, run_guest(RECOVERY_GUEST, devices, timeout=900, lane="current"))
    return s["recovery"]


def test_mariadb_recovers_crash_images_of_the_proved_stacks():
    """A power cut in the middle of the load, on the proved stacks, with the
    doublewrite buffer OFF: every page of every data file verifies as the cut
    left it (innochecksum, before recovery touches a page), MariaDB runs its
    crash recovery, starts, and CHECK TABLE finds both tables sound."""
    cuts, run = recovery()
    assert not run.exists("fail"), run.text("fail")
    for name in cuts:
        if name.startswith("C"):
            continue
        # only the doublewrite area was left out of ibdata1's check, where TRX_SYS says it is
        magic, b1, b2 = [int(v) for v in run.text("doublewrite-area-" + name).split()]
        assert magic == 536853855 and b2 == b1 + 64, run.text("doublewrite-area-" + name)
        files = [line.split(" ", 1) for line in run.text("innochecksum-" + name).splitlines()]
        assert len(files) >= 3 and all(rc == "0" for rc, _ in files), (name, cuts[name], files)
        log = run.text("recovery-%s.log" % name)
        assert run.text("up-" + name).strip() == "1", (name, cuts[name], log[-3000:])
        # the image was a crash, not a clean shutdown: recovery really ran
        assert re.search(r"crash recovery|Starting final batch to recover|to recover", log), (name, log[-3000:])
        assert not re.search(r"corrupt|\[ERROR\]", log, re.I), (name, cuts[name], log[-3000:])
        check = run.text("check-" + name)
        assert run.text("check-%s.rc" % name).strip() == "0", (name, check)
        status = re.findall(r"^sbtest\.sbtest\d\tcheck\t(\w+)\t(.*)$", check, re.M)
        assert len(status) == 2 and all(s == ("status", "OK") for s in status), (name, check)
        assert int(check.strip().splitlines()[-1]) == 20000, (name, check)
        lab().setdefault("recovered", {})[name] = {"cut": cuts[name][0], "tear_blocks": cuts[name][1]}


def test_mariadb_recovery_of_the_torn_negative_control_is_not_clean():
    """The negative control's crash image, with the page innochecksum rejected:
    the guest's innochecksum, after the file system's own journal recovery,
    rejects it too, and MariaDB without the doublewrite buffer cannot come
    back clean (it refuses to start, logs the corruption, or CHECK TABLE
    fails)."""
    s = lab()
    assert s.get("rejected_image"), "the negative control found no rejected page"
    cuts, run = recovery()
    rel = s["rejected"]["file"][len("/mysql/"):]
    files = dict(reversed(line.split(" ", 1)) for line in run.text("innochecksum-C1").splitlines())
    assert files.get(rel) not in (None, "0"), (rel, files)
    log = run.text("recovery-C1.log")
    up = run.text("up-C1").strip() == "1"
    check = run.text("check-C1") if up else ""
    clean = recovered_clean(run, "C1")
    s["negative_recovery"] = {"started": up, "log": [l for l in log.splitlines() if re.search(r"corrupt|ERROR", l, re.I)][:5],
                              "check": check.strip().splitlines()[:4]}
    assert not clean, (log[-3000:], check)


def recovered_clean(run, name):
    """Crash image NAME came back clean: the server started, logged no corruption or error, and
    CHECK TABLE found both tables sound."""
    if run.text("up-" + name).strip() != "1":
        return False
    log, check = run.text("recovery-%s.log" % name), run.text("check-" + name)
    return not re.search(r"corrupt|\[ERROR\]", log, re.I) and len(re.findall(r"\tstatus\tOK$", check, re.M)) == 2


def plugin_answer(t):
    """Server T's lcloud status variables {name: value} and the plugin's error-log lines [(severity, text)]."""
    run = lab()["run"]
    status = dict(line.split("\t", 1) for line in run.text("lcloud-" + t).splitlines())
    lines = []
    for severity, text in re.findall(r"\[(Note|Warning|ERROR)\] mariadbd: lcloud: (.*)$",
                                     run.text("server-%s.log" % t), re.M):
        if text.startswith("(continued) ") and lines:  # the server cuts a message at 512 bytes
            lines[-1] = (severity, lines[-1][1] + " " + text[len("(continued) "):])
        else:
            lines.append((severity, text))
    return {k.lower(): v for k, v in status.items()}, lines


def plugin_line(lines, role, path):
    found = [(sev, text) for sev, text in lines if "the %s (%s)" % (role, path) in text]
    assert len(found) == 1, (role, path, lines)
    return found[0]


def test_plugin_answers_as_the_lab_found():
    """liblcloud's MariaDB plugin in every server of the load: doublewrite not
    needed on the proved stacks (A, B, D), where advise turns it off, the
    write logs hold no tearable page write and crash images recover with it
    OFF; needed on the negative control (C), where advise keeps it, pages tore
    and the torn image did not recover clean. B1 ran while the server's user
    could not open its namespace: "unknown", with the reason, never "no"."""
    s = lab()
    run = s["run"]
    cuts, rec = recovery()
    # the lab's own results, each stack's: advise, the write log, the crash recovery
    for x in "AD":
        assert run.json("advise-%s.json" % x)["settings"]["innodb_doublewrite"] == "OFF"
        assert pages(x)["tearable"] == 0, pages(x)
        names = [n for n in cuts if n.startswith(x)]
        assert names and all(recovered_clean(rec, n) for n in names), (x, names)
    assert run.json("advise-C.json")["settings"]["innodb_doublewrite"] == "ON"
    assert pages("C")["tearable"] > 0 and "C1" in cuts and not recovered_clean(rec, "C1")
    answers = {}
    for x in "ABCD":
        for t in RUNS[x]:
            status, lines = plugin_answer(t)
            answers[t] = status.get("lcloud_doublewrite_needed")
            datadir = "/mnt/%s/mysql" % x
            dw = run.text("doublewrite-" + t).strip()
            assert (status["lcloud_page_size"], status["lcloud_io_path"], status["lcloud_checks"]) == \
                ("16384", "plain_direct", "1"), (t, status)
            assert not [l for l in lines if l[0] == "ERROR"], (t, lines)
            for role, path in (("system tablespace", datadir + "/ibdata1"), ("file-per-table directory", datadir)):
                severity, text = plugin_line(lines, role, path)
                # the stack as the plugin found it: the namespace, its file system, the mount
                assert re.search(r"Written plain_direct \(innodb_data_file_buffering=OFF\) to %s on /dev/nvme\d+n1 "
                                 r"mounted at /mnt/%s: " % ("xfs" if x == "D" else "ext4", x), text), (t, text)
                where = "the %s (%s)" % (role, path)
                if t == "B1":
                    want = ("Note", "whether 16384-byte page writes to %s are untorn could not be told; "
                            "innodb_doublewrite is ON. " % where)
                elif x == "C":
                    want = ("Warning", "innodb_doublewrite is OFF, but 16384-byte page writes to %s are not proved "
                            "untorn (answer: no); turn innodb_doublewrite ON. " % where)
                elif dw == "ON":
                    want = ("Note", "innodb_doublewrite is ON, but not needed for %s: 16384-byte page writes there "
                            "are untorn; " % where)
                else:
                    want = ("Note", "innodb_doublewrite is OFF, and 16384-byte page writes to %s are untorn. " % where)
                assert severity == want[0] and text.startswith(want[1]), (t, want, severity, text)
            if t == "B1":
                assert status["lcloud_doublewrite_needed"] == "unknown", (t, status)
                assert status["lcloud_max_untorn_page_write"] == "0", (t, status)
                # the reason names the namespace whose evidence the server's user could not read, and what to do
                assert re.match(r"system tablespace \(%s/ibdata1\): unknown on plain_direct: nvme\d+n1: .*; the "
                                r"server's user may not read this evidence: let it read the device " % datadir,
                                status["lcloud_reason"]), status
            elif x == "C":
                assert status["lcloud_doublewrite_needed"] == "yes", (t, status)
                assert int(status["lcloud_max_untorn_page_write"]) < 16384, (t, status)
                assert status["lcloud_reason"].startswith("system tablespace (%s/ibdata1): not untorn on "
                                                          "plain_direct: " % datadir), status
            else:
                assert status["lcloud_doublewrite_needed"] == "no", (t, status)
                assert int(status["lcloud_max_untorn_page_write"]) >= 16384, (t, status)
    s["plugin"] = answers


def test_figures():
    s = lab()
    run = s["run"]
    fig = {"seconds": SECONDS, "accelerator": "TCG (emulation bound)"}
    for x in "ABCD":
        runs = RUNS[x]
        n = sum(sysbench(t)[0] for t in runs)
        tps = [sysbench(t)[1] for t in runs]
        b = sum(written_bytes(run, "stat-before-" + t, "stat-after-" + t) for t in runs)
        fig[x] = {"doublewrite": run.text("doublewrite-" + runs[0]).strip(), "transactions": n,
                  "tps": round(sum(tps) / len(tps), 2), "tps_each": tps,
                  "device_bytes_per_transaction": round(b / n) if n else None,
                  "page_writes": pages(x)["page_writes"], "tearable": pages(x)["tearable"]}
    fig["tps_off_over_on"] = round(fig["A"]["tps"] / fig["B"]["tps"], 3) if fig["B"]["tps"] else None
    fig["rejected"] = s.get("rejected")
    fig["recovered"] = s.get("recovered")
    fig["negative_recovery"] = s.get("negative_recovery")
    fig["unverified_A"] = s.get("unverified-A")
    fig["unverified_D"] = s.get("unverified-D")
    fig["plugin_doublewrite_needed"] = s.get("plugin")
    print(json.dumps(fig, indent=1))
    out = os.environ.get("MARIADB_LAB_OUT")
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "figures.json"), "w") as f:
            json.dump(fig, f, indent=1)
    assert fig["A"]["transactions"] > 0 and fig["B"]["transactions"] > 0


if __name__ == "__main__":
    try:
        main([test_guest_ran_mariadb_as_configured, test_log_read_agrees_with_lcloudctl_and_the_guest,
              test_no_tearable_innodb_page_write_on_the_proved_ext4_bigalloc,
              test_no_tearable_innodb_page_write_on_the_proved_xfs_16k,
              test_negative_control_tears_and_innochecksum_rejects_the_page,
              test_mariadb_recovers_crash_images_of_the_proved_stacks,
              test_mariadb_recovery_of_the_torn_negative_control_is_not_clean, test_plugin_answers_as_the_lab_found,
              test_figures])
    finally:
        if os.environ.get("MARIADB_LAB_KEEP"):
            for r in (_state.get("run"), (_state.get("recovery") or (None, None))[1]):
                if r:
                    keep(r)
        if _state.get("tmp") and not os.environ.get("MARIADB_LAB_KEEP"):
            shutil.rmtree(_state["tmp"], ignore_errors=True)
            if _state.get("run") and not os.environ.get("MARIADB_LAB_RESULTS"):  # the guest's results: logs and images, ~1.5 GB
                shutil.rmtree(os.path.dirname(_state["run"].outdir), ignore_errors=True)
            if _state.get("recovery"):
                shutil.rmtree(os.path.dirname(_state["recovery"][1].outdir), ignore_errors=True)
