#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7), one boot. NVMe geometries and block
stacks against readings the project did not write (nvme-cli's id-ns and
id-ctrl, sysfs, dmsetup's table, /sys/block/*/stat), every namespace with
queue/nomerges 2:

  - a namespace whose 32 KiB atomic boundaries start at NABO 8 KiB: the
    whole namespace, a partition at 1 MiB, and dm-linear devices on that
    partition shifted by 4 KiB and 8 KiB. plain_direct keeps only the
    naturally aligned sizes that cannot cross a boundary where the write
    lands on the namespace (worked out here from id-ns, sysfs start and
    the dm table); passthrough gives the boundary in the target's terms;
    Linux drops RWF_ATOMIC for NABO != 0, and rwf_atomic follows sysfs;
  - a namespace promising 64 KiB (NAWUPF) under a 32 KiB MDTS: the kernel
    refuses a 64 KiB passthrough write (nvme-cli's own write fails), so
    passthrough is untorn only up to max_hw_sectors_kb;
  - a namespace with 8 bytes of metadata per block: no passthrough (its
    commands carry no metadata), the other paths as without it, and
    write --atomic takes io_uring there by itself; one whose metadata is
    interleaved in each block (extended LBA): capacity 0, "no" on every path;
  - a controller AWUPF of 64 KiB with NSABP clear: Linux 7 ignores AWUPF
    (unit max one block), the device promise still stands for
    plain_direct and passthrough;
  - dm-crypt, dm-thin and a loop device with 4 KiB sectors and direct I/O
    over atomic namespaces, and a partition on md raid1: rwf_atomic is
    sysfs's (a 16 KiB RWF_ATOMIC write through dm-crypt reaches the namespace
    as one write); plain_direct follows dm-crypt (one write of the same size
    at its offset, as Linux 7.3 writes it) to the namespace's promise, and
    the loop device to its backing namespace, whose one 4 KiB block is all
    that stays whole in the loop queue's merged requests; it claims nothing
    through dm-thin, which moves data it does not follow; for the md
    partition, what its start and the members' data offsets allow;
  - two namespaces shared by two controllers (NVMe multipath) whose AWUPF
    differ, one with NSABP clear and one with its own NAWUPF: under the
    round-robin policy Identify Controller through a head is answered by
    either, and no probe may claim more than the smaller AWUPF, which
    nvme-cli reads from each controller; NAWUPF stands;
  - each target again as an unprivileged user who may open the device it
    names (not the ones below a dm or md device): root's answer where the
    user read the same evidence, unknown below it where not, never more."""
import os
import re

from vmlib import run_guest_once
from hostlib import main

GUEST = r'''
set +u
for m in dm_crypt dm_thin_pool loop raid1; do modprobe $m; done
q() { for f in logical_block_size max_sectors_kb max_hw_sectors_kb atomic_write_unit_max_bytes; do
        echo "$f $(cat /sys/block/$1/queue/$f)"; done > /out/queue-$2; }
mk() { [ -e /dev/$1 ] || mknod /dev/$1 b $(tr : ' ' < /sys/class/block/$1/dev); }
dmn() { for x in /sys/block/dm-*; do [ "$(cat $x/dm/name)" = "$1" ] && basename $x; done; }
writes() { set -- $(cat /sys/block/$1/stat); echo "$5 $7"; }
P() { # DEVICE NAME: probe as root, then as nobody (allowed to open it)
    "$LCLOUDCTL" probe --format json $1 > /out/probe-$2.json 2> /out/probe-$2.err
    chmod 666 $1
    /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "$LCLOUDCTL" probe --format json $1 \
        > /out/user-$2.json 2> /out/user-$2.err
}
B=${LCVM_NVME0}n1; M=${LCVM_NVME1}n1; X=${LCVM_NVME2}n1; A=${LCVM_NVME3}n1; S0=${LCVM_NVME4}n1; S1=${LCVM_NVME5}n1
for n in B M X A S0 S1; do
    eval d=\$$n
    echo 2 > /sys/block/${d#/dev/}/queue/nomerges
    nvme id-ns $d > /out/id-ns-$n.txt; nvme id-ctrl ${d%n1} > /out/id-ctrl-$n.txt
    q ${d#/dev/} $n
done

P $B nabo
echo 'start=256, size=2048' | /usr/sbin/sfdisk -q $B; mk ${B#/dev/}p1
cat /sys/class/block/${B#/dev/}p1/start > /out/start-nabo-p1
P ${B}p1 nabo-p1
for s in 8 16; do
    echo "0 8192 linear ${B}p1 $s" | dmsetup create --noudevsync onpart$s; d=$(dmn onpart$s); mk $d
    dmsetup table onpart$s > /out/table-onpart$s; P /dev/$d onpart$s
done

P $M mdts
dd if=/dev/zero of=/tmp/z bs=64K count=1 2>/dev/null
nvme write $M --start-block=0 --block-count=15 --data-size=65536 --data=/tmp/z > /out/write64k.txt 2>&1
echo $? > /out/write64k.rc
nvme write $M --start-block=0 --block-count=7 --data-size=32768 --data=/tmp/z > /out/write32k.txt 2>&1
echo $? > /out/write32k.rc
P $X meta
P $A awupf

# separate metadata: an atomic write with the default backend, and what reached the namespace
before=$(writes ${X#/dev/})
"$LCLOUDCTL" write --atomic -O 0 -l 16K -p 0x5a $X > /out/write-meta.txt 2> /out/write-meta.err
echo $? > /out/write-meta.rc
echo "$before $(writes ${X#/dev/})" > /out/write-meta-writes
dd if=/dev/zero bs=16384 count=1 2>/dev/null | tr '\000' '\132' > /tmp/pattern5a
dd if=$X of=/tmp/read-meta bs=16384 count=1 iflag=direct 2>/dev/null
cmp /tmp/pattern5a /tmp/read-meta > /out/read-meta.txt 2>&1; echo $? > /out/read-meta.rc

# extended LBA (metadata interleaved): its block device and generic node, found through the controller
c=${LCVM_NVME7#/dev/}
E=/dev/$(ls /sys/class/nvme/$c/ | grep -E '^nvme[0-9]+n[0-9]+$'); G=/dev/$(ls /sys/class/nvme/$c/ | grep -E '^ng[0-9]+n[0-9]+$')
echo "$E $G" > /out/ext-nodes
nvme id-ns $E > /out/id-ns-E.txt 2>&1
cat /sys/block/${E#/dev/}/size > /out/size-E
for t in $E $G; do
    n=$(basename $t)
    "$LCLOUDCTL" check --size 16K $t > /out/check-$n.txt 2> /out/check-$n.err; echo $? > /out/check-$n.rc
    "$LCLOUDCTL" probe --format json $t > /out/probe-ext-$n.json 2> /out/probe-ext-$n.err
done
"$LCLOUDCTL" list -n -o NAME,SIZE,UNTORN --size 16K ${E#/dev/} > /out/list-E.txt 2>&1

key=0000000000000000000000000000000000000000000000000000000000000000
echo "0 16384 crypt aes-xts-plain64 $key 0 $S0 0" | dmsetup create --noudevsync cr; d=$(dmn cr); mk $d
q $d crypt; P /dev/$d crypt
before=$(writes ${S0#/dev/})
"$DIRECT_WRITE" /dev/$d 16384 65536 0 atomic > /out/crypt-atomic.txt 2>&1; echo $? > /out/crypt-atomic.rc
echo "$before $(writes ${S0#/dev/})" > /out/crypt-writes
dmsetup remove cr

dd if=/dev/zero of=$S0 bs=4096 count=1 2>/dev/null
echo "0 32768 thin-pool $S0 $S1 128 0" | dmsetup create --noudevsync pool && mk $(dmn pool) &&
    dmsetup message pool 0 "create_thin 0" &&
    echo "0 16384 thin /dev/$(dmn pool) 0" | dmsetup create --noudevsync thin
d=$(dmn thin); mk $d; q $d thin; P /dev/$d thin
dmsetup remove thin; dmsetup remove pool

L=$(/usr/sbin/losetup --find --show --sector-size 4096 --direct-io=on $S1)
echo $S1 > /out/loop-backing
q ${L#/dev/} loop; P $L loop; /usr/sbin/losetup -d $L

dd if=/dev/zero of=$S0 bs=1M count=4 2>/dev/null; dd if=/dev/zero of=$S1 bs=1M count=4 2>/dev/null
mdadm --create /dev/md1 --run --level=1 --raid-devices=2 --assume-clean $S0 $S1 > /out/mdadm.txt 2>&1
for m in $S0 $S1; do echo "${m#/dev/} $(cat /sys/block/md1/md/dev-${m#/dev/}/offset)"; done > /out/md-offsets
echo 'start=2050, size=4096' | /usr/sbin/sfdisk -q /dev/md1; mk md1p1
cat /sys/class/block/md1p1/start > /out/start-md1p1
P /dev/md1p1 md1p1
mdadm --stop /dev/md1 > /dev/null 2>&1

# one namespace, two controllers (AWUPF 15 and 3): Identify through the head takes either path
# and a second namespace on them with its own NAWUPF
c=${LCVM_NVME6#/dev/}
heads=$(ls /sys/class/nvme/$c/ | sed -n 's/^nvme\([0-9]*\)c[0-9]*n\([0-9]*\)$/nvme\1n\2/p' | sort -u)
echo $heads > /out/mp-heads
for s in /sys/class/nvme-subsystem/*; do
    [ -e $s/$c ] && echo round-robin > $s/iopolicy && cat $s/iopolicy > /out/mp-iopolicy
done
for h in $heads; do
    ls /sys/block/$h/multipath/ > /out/mp-paths-$h
    for x in /sys/block/$h/multipath/*; do
        k=$(basename $(readlink -f $x/device))
        nvme id-ctrl /dev/$k | sed -n 's/^awupf *: *//p'
    done > /out/mp-awupf-$h
    cat /sys/block/$h/nsid > /out/mp-nsid-$h
    nvme id-ns /dev/$h > /out/id-ns-$h.txt
    # round-robin takes the next path for every command through the head: one read of a block between
    # the second and third probe makes two neighbouring probes start on different paths, whether a
    # probe sends an odd or an even number of commands
    for i in 1 2 3 4; do
        "$LCLOUDCTL" probe --format json /dev/$h > /out/probe-$h-$i.json 2> /out/probe-$h-$i.err
        if [ $i = 2 ]; then dd if=/dev/$h of=/dev/null bs=4096 count=1 iflag=direct 2> /dev/null; fi
    done
done
'''

ATOMIC = "atomic.nawun=3,atomic.nawupf=3"
DEVICES = ["--nvme", "lbs=4096,size=16M,serial=dsB,atomic.nawun=3,atomic.nawupf=3,atomic.nabsn=7,"
           "atomic.nabspf=7,atomic.nabo=2",
           "--nvme", "lbs=4096,size=16M,serial=dsM,atomic.nawun=15,atomic.nawupf=15,ctrl.mdts=3",
           "--nvme", "lbs=4096,size=16M,serial=dsX,ms=8," + ATOMIC,
           "--nvme", "lbs=4096,size=16M,serial=dsA,ctrl.atomic.awun=15,ctrl.atomic.awupf=15",
           "--nvme", "lbs=4096,size=32M,serial=dsS0," + ATOMIC,
           "--nvme", "lbs=4096,size=32M,serial=dsS1," + ATOMIC,
           "--nvme", "lbs=4096,size=16M,serial=dsP,subsys.fdp=off,ctrl.atomic.awun=15,ctrl.atomic.awupf=15",
           "--nvme", "lbs=4096,size=16M,serial=dsP,ctrl.subsys=nvmesubsys6,ctrl.atomic.awun=3,ctrl.atomic.awupf=3,"
           "atomic.nawun=7,atomic.nawupf=7",
           "--nvme", "lbs=4096,size=16M,serial=dsE,ms=8,mset=1," + ATOMIC,
           "--module", "dm_crypt", "--module", "dm_thin_pool", "--module", "loop", "--module", "raid1",
           "--copy", "/usr/sbin/sfdisk", "--copy", "/usr/sbin/losetup", "--copy", "/usr/bin/setpriv"]
PATHS = ("rwf_atomic", "passthrough", "plain_direct")
TARGETS = ("nabo", "nabo-p1", "onpart8", "onpart16", "mdts", "meta", "awupf", "crypt", "thin", "loop", "md1p1")


def guest():
    direct_write = os.path.realpath(os.environ["DIRECT_WRITE"])
    return run_guest_once(GUEST, DEVICES + ["--copy", direct_write, "--env", "DIRECT_WRITE=" + direct_write],
                          lane="current")


def nvme_field(text, name):
    m = re.search(r"^%s\s*:\s*(0x[0-9a-f]+|\d+)" % name, text, re.M)
    assert m, (name, text[:400])
    return int(m.group(1), 0)


def in_use_lbaf(text):
    m = re.search(r"^lbaf\s+\d+\s*:\s*ms:(\d+)\s+lbads:(\d+).*in use", text, re.M)
    assert m, text[:400]
    return int(m.group(1)), 1 << int(m.group(2))


def queue(run, name):
    return {k: int(v) for k, v in (line.split() for line in run.text("queue-" + name).splitlines())}


def verdict(run, name, user=False):
    return run.json("%s-%s.json" % ("user" if user else "probe", name))["probes"][0]["verdict"]


def natural_fit(promise, boundary, nabo, start):
    """Largest power of two <= the promise (and the boundary) that an aligned
    write placed at START on the namespace keeps inside one boundary."""
    size = min(promise, boundary)
    while size & (size - 1):
        size &= size - 1
    while size > 1 and ((start - nabo) % boundary) % size:
        size //= 2
    return size


def test_nabo_partition_and_dm_offsets():
    run = guest()
    idns = run.text("id-ns-B.txt")
    ms, lba = in_use_lbaf(idns)
    nsfeat = nvme_field(idns, "nsfeat")
    assert nsfeat & 2, "NSABP must be set for the namespace fields to count"
    promise = (nvme_field(idns, "nawupf") + 1) * lba
    boundary = (nvme_field(idns, "nabspf") + 1) * lba
    nabo = nvme_field(idns, "nabo") * lba
    assert (promise, boundary, nabo) == (16384, 32768, 8192)
    part = int(run.text("start-nabo-p1")) * 512
    starts = {"nabo": 0, "nabo-p1": part}
    for s in (8, 16):
        table = run.text("table-onpart%d" % s).split()
        assert table[2] == "linear", table
        starts["onpart%d" % s] = part + int(table[4]) * 512
    # Linux does not use a namespace whose boundaries start off 0 for RWF_ATOMIC
    assert queue(run, "B")["atomic_write_unit_max_bytes"] == 0
    expect = {}
    for name, start in starts.items():
        v = verdict(run, name)
        expect[name] = natural_fit(promise, boundary, nabo, start)
        assert v["plain_direct"]["max_untorn_bytes"] == expect[name], (name, start, v["plain_direct"])
        assert v["rwf_atomic"]["max_untorn_bytes"] == 0, (name, v["rwf_atomic"])
        if name.startswith("nabo"):
            pt = v["passthrough"]
            assert pt["max_untorn_bytes"] == min(promise, boundary), (name, pt)
            assert pt["boundary_bytes"] == boundary
            assert pt["boundary_offset_bytes"] == (nabo - start) % boundary, (name, pt)
        else:
            assert v["passthrough"]["max_untorn_bytes"] == 0
    # the four starts give three different answers: the test tells them apart
    assert sorted(expect.values()) == [4096, 8192, 8192, 16384], expect


def test_transfer_limit_below_the_promise():
    run = guest()
    idns, idctrl, q = run.text("id-ns-M.txt"), run.text("id-ctrl-M.txt"), queue(run, "M")
    ms, lba = in_use_lbaf(idns)
    promise = (nvme_field(idns, "nawupf") + 1) * lba
    mdts = (1 << nvme_field(idctrl, "mdts")) * 4096  # QEMU's minimum memory page: 4 KiB
    assert promise == 65536 and mdts == 32768 == q["max_hw_sectors_kb"] * 1024, (promise, mdts, q)
    # the kernel refuses a command above the transfer limit, and takes one at it
    assert int(run.text("write64k.rc")) != 0, run.text("write64k.txt")
    assert int(run.text("write32k.rc")) == 0, run.text("write32k.txt")
    v = verdict(run, "mdts")
    assert v["passthrough"]["max_untorn_bytes"] == mdts, v["passthrough"]
    assert any("max_hw_sectors_kb" in r["reason"] for r in v["passthrough"]["reasons"])
    assert v["plain_direct"]["max_untorn_bytes"] == q["max_sectors_kb"] * 1024 == mdts
    assert v["rwf_atomic"]["max_untorn_bytes"] == q["atomic_write_unit_max_bytes"] == mdts


def test_metadata_and_controller_awupf():
    run = guest()
    ms, lba = in_use_lbaf(run.text("id-ns-X.txt"))
    assert ms == 8
    v = verdict(run, "meta")
    assert v["passthrough"]["max_untorn_bytes"] == 0
    assert any("metadata" in r["reason"] for r in v["passthrough"]["reasons"])
    assert v["rwf_atomic"]["max_untorn_bytes"] == queue(run, "X")["atomic_write_unit_max_bytes"] == 16384
    assert v["plain_direct"]["max_untorn_bytes"] == 16384

    idns, idctrl = run.text("id-ns-A.txt"), run.text("id-ctrl-A.txt")
    ms, lba = in_use_lbaf(idns)
    assert not nvme_field(idns, "nsfeat") & 2
    awupf = (nvme_field(idctrl, "awupf") + 1) * lba
    assert awupf == 65536
    v = verdict(run, "awupf")
    # Linux 7 ignores AWUPF: RWF_ATOMIC is one block; the controller's promise still covers the rest
    assert v["rwf_atomic"]["max_untorn_bytes"] == queue(run, "A")["atomic_write_unit_max_bytes"] == lba
    assert v["passthrough"]["max_untorn_bytes"] == awupf
    assert v["plain_direct"]["max_untorn_bytes"] == awupf


def test_extended_lba_and_separate_metadata():
    """An extended LBA format (QEMU ms=8,mset=1: the metadata interleaved in
    each block) leaves the block device at capacity 0 in Linux: check on it
    and on its generic node answers "no" (exit 6) with the reason, not a
    usage error, and every path of the probe is 0 for it; list says no.
    With separate metadata (ms=8), write --atomic with the default backend
    takes io_uring, which RWF_ATOMIC makes untorn, instead of passthrough,
    which carries no metadata: one 16 KiB write reaches the namespace."""
    run = guest()
    idns = run.text("id-ns-E.txt")
    ms, lba = in_use_lbaf(idns)
    assert ms == 8 and nvme_field(idns, "flbas") & 0x10, idns[:400]
    assert int(run.text("size-E")) == 0, "Linux gave the extended-LBA namespace a capacity"
    block, generic = run.text("ext-nodes").split()
    assert generic.startswith("/dev/ng"), generic
    for node in (block, generic):
        n = os.path.basename(node)
        out = run.text("check-%s.txt" % n)
        assert int(run.text("check-%s.rc" % n)) == 6, (n, out, run.text("check-%s.err" % n))
        assert "extended LBA format" in out and "capacity 0" in out, out
        # each path's line says what stops that path
        for path in PATHS + ("buffered",):
            line = re.search(r"^  %s .*$" % path, out, re.M).group(0)
            assert ("metadata inside every buffer" if path == "passthrough" else "capacity 0") in line, (path, out)
        v = run.json("probe-ext-%s.json" % n)["probes"][0]["verdict"]
        for path in PATHS + ("buffered",):
            assert v[path]["max_untorn_bytes"] == 0, (n, path, v[path])
            assert any("extended LBA format" in r["reason"] for r in v[path]["reasons"]), (n, path, v[path])
    name, size, untorn = run.text("list-E.txt").split()
    # a size as lsblk writes it: 0B
    assert (name, size, untorn) == (os.path.basename(block), "0B", "no"), run.text("list-E.txt")

    idns = run.text("id-ns-X.txt")
    ms, lba = in_use_lbaf(idns)
    assert ms == 8 and not nvme_field(idns, "flbas") & 0x10
    assert int(run.text("write-meta.rc")) == 0, (run.text("write-meta.txt"), run.text("write-meta.err"))
    assert "via io_uring (atomic)" in run.text("write-meta.txt"), run.text("write-meta.txt")
    assert "not passthrough" in run.text("write-meta.err") and "metadata" in run.text("write-meta.err")
    w0, s0, w1, s1 = map(int, run.text("write-meta-writes").split())
    assert (w1 - w0, s1 - s0) == (1, 32), (w0, s0, w1, s1)
    # what the namespace holds now is the pattern (0x5a is 'Z', octal 132)
    assert int(run.text("read-meta.rc")) == 0, run.text("read-meta.txt")


def test_crypt_thin_loop_md():
    run = guest()
    promise = (nvme_field(run.text("id-ns-S0.txt"), "nawupf") + 1) * 4096
    for name in ("crypt", "thin", "loop"):
        v = verdict(run, name)
        assert v["rwf_atomic"]["max_untorn_bytes"] == queue(run, name)["atomic_write_unit_max_bytes"], (name, v)
        assert v["passthrough"]["max_untorn_bytes"] == 0
    reasons = {name: " ".join(r["reason"] for r in verdict(run, name)["plain_direct"]["reasons"])
               for name in ("crypt", "thin", "loop")}
    # dm-crypt over S0, merging nothing: the namespace's own promise, through one write of the same size
    assert verdict(run, "crypt")["plain_direct"]["max_untorn_bytes"] == promise == 16384, reasons["crypt"]
    assert "dm-crypt encrypts a write into one write of the same size" in reasons["crypt"], reasons["crypt"]
    # dm-thin: not followed
    assert verdict(run, "thin")["plain_direct"]["max_untorn_bytes"] == 0
    assert "through a thin-pool target" in reasons["thin"], reasons["thin"]
    # the loop device's queue merges requests (its nomerges 0, max_sectors_kb above 16 KiB): one block of S1
    loop = verdict(run, "loop")["plain_direct"]
    assert loop["max_untorn_bytes"] == 4096 and loop["merge_gap_below_bytes"] == 0, loop
    assert "writes each request directly to its backing file" in reasons["loop"], reasons["loop"]
    assert run.json("probe-loop.json")["probes"][0]["layers"][0]["backing_file"]["layers"][0]["name"] == \
        os.path.basename(run.text("loop-backing").strip()), run.text("loop-backing")
    # dm-crypt passes atomic writes on (Linux 7): one write of the whole 16 KiB reached the namespace
    assert queue(run, "crypt")["atomic_write_unit_max_bytes"] == 16384
    assert int(run.text("crypt-atomic.rc")) == 0, run.text("crypt-atomic.txt")
    w0, s0, w1, s1 = map(int, run.text("crypt-writes").split())
    assert (w1 - w0, s1 - s0) == (1, 32), (w0, s0, w1, s1)
    assert queue(run, "thin")["atomic_write_unit_max_bytes"] == 0
    assert queue(run, "loop")["atomic_write_unit_max_bytes"] == 0

    assert "started" in run.text("mdadm.txt"), run.text("mdadm.txt")
    start = int(run.text("start-md1p1")) * 512
    offsets = [int(line.split()[1]) * 512 for line in run.text("md-offsets").splitlines()]
    fit = min(natural_fit(16384, 1 << 40, 0, start + off) for off in offsets)
    v = verdict(run, "md1p1")
    assert start % 16384 and fit == 8192, (start, offsets, fit)
    assert v["plain_direct"]["max_untorn_bytes"] == fit, v["plain_direct"]


def test_shared_namespaces():
    """Two controllers (AWUPF 15 and 3) sharing two namespaces, one with
    NSABP clear and one with its own NAWUPF 7. Under the round-robin policy
    Identify Controller through a head is answered by either controller: every
    probe of the first claims the smaller AWUPF, which nvme-cli reads from
    each controller, and no more (the library reads each controller's own
    device too); the second keeps its NAWUPF, and each head's verdict rests on
    its own namespace's Identify data."""
    run = guest()
    assert run.text("mp-iopolicy").strip() == "round-robin"
    heads = run.text("mp-heads").split()
    assert len(heads) == 2, heads
    kinds = set()
    for h in heads:
        assert len(run.text("mp-paths-" + h).split()) == 2, run.text("mp-paths-" + h)
        awupfs = [int(x) for x in run.text("mp-awupf-" + h).split()]
        assert sorted(awupfs) == [3, 15], awupfs
        idns = run.text("id-ns-%s.txt" % h)
        ms, lba = in_use_lbaf(idns)
        own = nvme_field(idns, "nsfeat") & 2
        if own:
            kinds.add("nawupf")
            promise = (nvme_field(idns, "nawupf") + 1) * lba
            assert promise == 32768
        else:
            kinds.add("awupf")
            promise = (min(awupfs) + 1) * lba
        read = set()
        for i in range(1, 5):
            p = run.json("probe-%s-%d.json" % (h, i))["probes"][0]
            nvme = [l for l in p["layers"] if l["layer"] == "nvme"][0]["facts"]
            assert nvme["multipath_paths"] == 2, nvme
            # a head's name counts heads, not NSIDs: sysfs has the NSID
            assert nvme["nsid"] == int(run.text("mp-nsid-" + h)), (h, nvme["nsid"])
            read.add(nvme["atomic_write_power_fail_bytes"])
            for path in PATHS:
                assert p["verdict"][path]["max_untorn_bytes"] <= promise, (h, i, path, p["verdict"][path])
            assert p["verdict"]["passthrough"]["max_untorn_bytes"] == promise, (h, i, p["verdict"]["passthrough"])
            if not own:
                assert nvme["atomic_write_power_fail_bytes_every_path"] == promise, nvme
        if own:
            assert read == {promise}, read
        else:
            # the probes did read both controllers' AWUPF: the case is real
            assert read == {(a + 1) * lba for a in awupfs}, read
    assert kinds == {"awupf", "nawupf"}, kinds


def test_unprivileged_claims_no_more_than_root():
    """Linux lets a user who may open a namespace read its Identify data (not
    its partitions', nor a device's the user cannot open); dm tables need
    root. Each path is root's answer where the user read the same evidence,
    and unknown below root's where not: never more."""
    run = guest()
    seen = set()
    for name in TARGETS:
        root, user = verdict(run, name), verdict(run, name, user=True)
        for path in PATHS:
            r, u = root[path], user[path]
            assert u["above_max"] != "untorn", (name, path, u)
            if u["max_untorn_bytes"] == r["max_untorn_bytes"]:
                seen.add("same")
                continue
            assert u["max_untorn_bytes"] < r["max_untorn_bytes"], (name, path, r, u)
            assert u["above_max"] == "unknown" and u["unknown_reason"], (name, path, u)
            seen.add(u["unknown_reason"].split(":")[1].split("(")[0].strip())
    # both kinds of unreadable evidence occurred, and so did evidence the user could read
    assert "same" in seen and len(seen) >= 3, seen


if __name__ == "__main__":
    main([test_nabo_partition_and_dm_offsets, test_transfer_limit_below_the_promise,
          test_metadata_and_controller_awupf, test_extended_lba_and_separate_metadata, test_crypt_thin_loop_md, test_shared_namespaces,
          test_unprivileged_claims_no_more_than_root])
