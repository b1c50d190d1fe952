#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hints at a cloud device: the same lcloud-target cloud back end, hint-aware
(--hints use) against hint-blind (--hints ignore), under the same load, in
the current VM lane's guest (Linux 7, its own nvme-tcp host connected to
lcloud-target over loopback). The model is gp3 (3,000 IOPS, 125 MiB/s, 256
KiB to the operation, 1 ms latency) with its rates multiplied and its
latency divided by SCALE, so that the caps and not the emulated CPU bind;
the guest's NVMe I/O timeout is scaled alike (30 s / SCALE), and a run in
which the guest's host gave up on a command and reset the controller fails.
One guest per table; the modes alternate (ignore use use ignore ... for
ROUNDS rounds) so that a drift in the guest's life weighs on both alike.

  readahead  a sequential buffered reader (32 files of 4 MiB on ext4, read in
             another order than they lie on the device, as a tree walk meets them)
             beside a reader that waits on every read (16 KiB O_DIRECT reads at
             random in a 64 MiB file), with the device's own read-ahead (up to
             1 MiB ahead, 8 MiB cache): back-end bytes read per byte delivered,
             the waiting reader's p50/p99, the sequential reader's throughput
  journal    a commit loop (a 4 KiB O_DIRECT write and fdatasync, io_uring
             write stream 2: the journal placement handle) beside a background
             writer (256 KiB O_DIRECT writes, 8 at a time, write stream 4: the
             background handle) that fills the caps, on an FDP namespace with
             handles 0=data 1=journal 2=metadata 3=background: commit p50/p99
             and the background writer's throughput
  mariadb    MariaDB 11.8 (the crash lab's root and template data directory,
             tests/vm/mariadb-root.sh) under sysbench oltp_write_only, 8
             threads, with a backup copying its data files round after round:
             the data files on namespace 1 (use data), the redo log on
             namespace 2 (use journal: MariaDB's writes cannot carry a write
             stream, so the log has its own namespace, as a DBA gives redo its
             own volume) and the copy on namespace 3 (use background), one
             volume: TPS and p95/p99 latency

Each load is checked against the caps: the time the caps need to let its
back-end operations and bytes through back to back (the two buckets of
target/caps.c run on the load's own commands, read from lcloud-target's
trace over the load's window) must be within 10 % of the window, else the
emulation or the load, not the caps, bounded it and the run fails. For a
load of one kind of command this is its operations or bytes per second over
the binding cap; a mix of small and large commands fills neither bucket
alone, and this counts each command at the cost that holds the next back.

Usage (root, after a build): tests/bench/run-hints-vm.py [BUILD_DIR]
Environment: BENCH (readahead journal mariadb), SCALE (0.02), SECONDS (40 per
load; MARIADB_SECONDS 120), ROUNDS (2), READ_AHEAD_KB (the guest's, 1024),
THREADS (sysbench's, 8); FIGURES=FILE writes the figures as JSON;
NO_README=1 leaves tests/bench/README.md alone; FROM_FIGURES=FILE writes a
run's figures into the README without a new run; SHORT=1 one round of 12 s
(tests/vm/test_current_target_hints.py)."""
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VM = os.path.join(HERE, "..", "vm")
sys.path.insert(0, VM)
build = os.path.realpath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "build"))
os.environ.setdefault("LCLOUDCTL", os.path.join(build, "cli", "lcloudctl"))
import vmlib  # noqa: E402  (after LCLOUDCTL is known)

SHORT = bool(os.environ.get("SHORT"))
BENCH = os.environ.get("BENCH", "readahead journal mariadb").split()
SCALE = os.environ.get("SCALE", "0.02")
SECONDS = int(os.environ.get("SECONDS", "12" if SHORT else "40"))
MARIADB_SECONDS = int(os.environ.get("MARIADB_SECONDS", "120"))
ROUNDS = int(os.environ.get("ROUNDS", "1" if SHORT else "2"))
READ_AHEAD_KB = int(os.environ.get("READ_AHEAD_KB", "1024"))
THREADS = int(os.environ.get("THREADS", "8"))
LATENCY_US = 1000  # gp3: "single-digit millisecond" latency; the back end divides it by SCALE
IO_TIMEOUT = round(30 / float(SCALE))  # Linux's NVMe I/O timeout (30 s), scaled as the device's times are
MODES = []
for r in range(ROUNDS):
    MODES += ["ignore", "use"] if r % 2 == 0 else ["use", "ignore"]
MODEL = ["--disk-model", "gp3", "--disk-model-scale", SCALE, "--latency", str(LATENCY_US)]
TARGET = os.path.join(build, "target", "lcloud-target")
HINT_LOAD = os.path.join(build, "tests", "bench", "hint_load")
TRACE_COLS = ["seq", "opcode", "nsid", "slba", "nlb", "fua", "lr", "dsm", "dtype", "dspec", "sub", "comp", "status",
              "class", "dispatched", "backend_bytes", "backend_ops"]

# start TAG COUNT OPTIONS...: lcloud-target with COUNT namespaces (given in OPTIONS), the guest's nvme-tcp
# connected to it; $devs holds its namespaces' devices in NSID order. stop: disconnect, SIGTERM (the counters).
COMMON = r'''
set -u
fail() { echo "$*" >> /out/fail; }
ip link set lo up
modprobe nvme-tcp || fail "modprobe nvme-tcp failed"
# the host's I/O timeout scaled as the device's times are: Linux's 30 s at SCALE 0.02 is 1500 s, else a
# command the scheduler keeps waiting (up to its wait limit, 1 s / SCALE) makes the host reset the controller
echo $IO_TIMEOUT > /sys/module/nvme_core/parameters/io_timeout || fail "cannot set nvme_core io_timeout"
HOSTID=5e6f7081-92a3-44b5-86c7-d8e9fa0b1c2d
NQN=nqn.2026-12.org.liblcloud:hints
n=0
start() {
    tag=$1 count=$2; shift 2
    n=$((n + 1))
    # the device has a processor of its own: the guest's load must not slow the target down (nice -20 for
    # it and every thread it makes; busybox has renice, not nice)
    sh -c 'renice -n -20 -p $$ > /dev/null && exec "$@"' sh "$LCLOUD_TARGET" --nqn $NQN --listen 127.0.0.1:4440 \
        --serial hints$n --trace /out/trace-$tag "$@" > /tmp/listen 2> /out/target-$tag.log &
    pid=$!
    i=0; until grep -q '^listening' /tmp/listen 2>/dev/null; do
        i=$((i + 1)); [ $i -gt 200 ] && { fail "target $tag did not listen"; break; }; sleep 0.05; done
    nvme connect -t tcp -a 127.0.0.1 -s 4440 -n $NQN --hostnqn=nqn.2014-08.org.nvmexpress:uuid:$HOSTID \
        --hostid=$HOSTID > /dev/null 2>&1 || fail "connect $tag"
    devs=
    i=0; while [ $(echo $devs | wc -w) -lt $count ] && [ $i -lt 200 ]; do
        devs=$(for d in /sys/block/nvme*n*; do
            [ -e "$d" ] || continue
            case ${d##*/} in *c*) continue ;; esac
            [ "$(tr -d ' ' < $d/device/serial 2>/dev/null)" = hints$n ] && echo "$(cat $d/nsid) ${d##*/}"
        done | sort -n | awk '{ print "/dev/" $2 }' | tr '\n' ' ')
        i=$((i + 1)); sleep 0.05
    done
    devs=$(echo $devs)
    for d in $devs; do echo 2 > /sys/block/${d#/dev/}/queue/nomerges; done
    first=${devs%% *}
    cat /sys/block/${first#/dev/}/queue/io_timeout > /out/io_timeout_ms
}
stop() {
    nvme disconnect -n $NQN > /dev/null 2>&1
    kill -TERM $pid; wait $pid; echo "$tag $?" >> /out/target-rcs
}
# the guest's load, and whether its NVMe host ever gave up on a command (a reset: nothing served for 10 s)
finish() {
    cat /proc/loadavg > /out/guest-loadavg
    dmesg | grep -E 'nvme nvme[0-9]+: (I/O tag .*timeout|starting error recovery|Reconnecting)' > /out/nvme-resets
    true  # none found is what grep says with its status
}
'''

READAHEAD = COMMON + r'''
mkdir -p /srv /mnt/fs /tmp/files && mount -t tmpfs -o size=600M tmpfs /srv
# the file system, made with its files (mke2fs -d): 32 of 4 MiB and one of 64 MiB
head -c 4194304 /dev/urandom > /srv/chunk
for i in $(seq 0 31); do cp /srv/chunk /tmp/files/s$(printf %02d $i); done
for i in $(seq 16); do cat /srv/chunk; done > /tmp/files/rand
rm /srv/chunk
/usr/sbin/mke2fs -q -F -t ext4 -b 4096 -d /tmp/files /srv/ra.img 320M || fail "mke2fs"
rm -rf /tmp/files
# the reader's order: not the files' order on the device (mke2fs -d lays them out in name order)
ORDER="17 03 28 09 21 00 14 31 06 25 11 19 02 30 08 23 13 27 05 16 01 24 10 29 07 20 12 26 04 18 15 22"
k=0
for mode in $MODES; do
    k=$((k + 1)); t=ra-$k-$mode
    start $t 1 --ns /srv/ra.img $MODEL --device-read-ahead 1M --hints $mode
    echo $READ_AHEAD_KB > /sys/block/${devs#/dev/}/queue/read_ahead_kb
    cat /sys/block/${devs#/dev/}/queue/read_ahead_kb > /out/read_ahead_kb
    mount -o ro $devs /mnt/fs || fail "mount $t"
    [ $k = 1 ] && /usr/sbin/filefrag -e /mnt/fs/s00 /mnt/fs/s01 /mnt/fs/s02 > /out/filefrag 2>&1
    "$HINT_LOAD" randread $SECONDS /mnt/fs/rand 16K > /out/randread-$t &
    c=$!
    "$HINT_LOAD" seqread $SECONDS $(for i in $ORDER; do echo /mnt/fs/s$i; done) > /out/seqread-$t
    wait $c
    umount /mnt/fs
    stop
done
finish
'''

JOURNAL = COMMON + r'''
mkdir -p /srv && mount -t tmpfs -o size=300M tmpfs /srv
truncate -s 256M /srv/j.img
k=0
for mode in $MODES; do
    k=$((k + 1)); t=j-$k-$mode
    start $t 1 --ns /srv/j.img --fdp 4 --placement-use 0=data,1=journal,2=metadata,3=background --mdts 6 \
        $MODEL --hints $mode
    cat /sys/block/${devs#/dev/}/queue/max_write_streams > /out/max_write_streams
    # write stream 2 is placement handle 1 (journal), stream 4 handle 3 (background)
    "$HINT_LOAD" commit $SECONDS $devs 0 2 > /out/commit-$t &
    c=$!
    "$HINT_LOAD" background $SECONDS $devs 16M 200M 256K 8 4 > /out/background-$t
    wait $c
    stop
done
finish
'''

MARIADB = COMMON + r'''
R=/r
mkdir -p $R /srv && mount -t ext4 -o ro $LCVM_VIRTIO0 $R || { fail "cannot mount the MariaDB root"; exit 1; }
mount -t tmpfs tmpfs $R/tmp && mount -t tmpfs tmpfs $R/mnt && mount -t proc proc $R/proc &&
    mount -t sysfs sys $R/sys && mount -o bind /dev $R/dev || { fail "cannot set up the chroot"; exit 1; }
mount -t tmpfs -o size=700M tmpfs /srv
dd if=$LCVM_VIRTIO1 of=/srv/data.img bs=1M 2>/dev/null && dd if=$LCVM_VIRTIO2 of=/srv/redo.img bs=1M 2>/dev/null &&
    dd if=$LCVM_VIRTIO3 of=/srv/backup.img bs=1M 2>/dev/null || fail "copying the images"
mkdir -p $R/mnt/data $R/mnt/redo $R/mnt/backup
sb() { chroot $R sysbench oltp_write_only --db-driver=mysql --mysql-socket=/tmp/lab.sock --mysql-user=root \
        --tables=2 --table-size=20000 --threads=$THREADS --percentile=99 "$@"; }
k=0
for mode in $MODES; do
    k=$((k + 1)); t=db-$k-$mode
    start $t 3 --ns /srv/data.img --ns /srv/redo.img --ns /srv/backup.img \
        --namespace-use 1=data,2=journal,3=background $MODEL --hints $mode
    set -- $devs
    for d in $devs; do echo $READ_AHEAD_KB > /sys/block/${d#/dev/}/queue/read_ahead_kb; done
    # noinit_itable: no lazy zeroing of inode tables (Write Zeroes) behind the load's back
    o=noinit_itable
    mount -t ext4 -o $o $1 $R/mnt/data && mount -t ext4 -o $o $2 $R/mnt/redo && mount -t ext4 -o $o $3 $R/mnt/backup ||
        { fail "mount $t"; stop; continue; }
    chroot $R mariadbd --defaults-file=/etc/mysql/lab.cnf --datadir=/mnt/data/mysql \
        --innodb-log-group-home-dir=/mnt/redo/redo > /out/server-$t.log 2>&1 &
    spid=$! i=0
    while ! chroot $R mariadb-admin --socket=/tmp/lab.sock ping > /dev/null 2>&1; do
        i=$((i + 1)); [ $i -gt 900 ] && { fail "server $t did not start"; break; }; sleep 0.5
    done
    chroot $R mariadb --socket=/tmp/lab.sock -N -e "SELECT @@innodb_log_group_home_dir, @@innodb_flush_method" > /out/vars-$t
    sb --time=8 run > /out/warmup-$t.txt 2>&1 || fail "warm-up $t"
    # the backup, from 2 s before the measured load to 2 s after
    "$HINT_LOAD" copy $((MARIADB_SECONDS + 4)) $R/mnt/backup $R/mnt/data/mysql/ibdata1 $R/mnt/data/mysql/sbtest/*.ibd \
        > /out/copy-$t &
    cpid=$!
    sleep 2
    "$HINT_LOAD" now > /out/start-$t
    sb --time=$MARIADB_SECONDS --histogram=on run > /out/sysbench-$t.txt 2>&1 || fail "sysbench $t"
    "$HINT_LOAD" now > /out/end-$t
    wait $cpid || fail "copy $t"
    chroot $R mariadb-admin --socket=/tmp/lab.sock shutdown || fail "shutdown $t"
    wait $spid
    umount $R/mnt/data $R/mnt/redo $R/mnt/backup
    stop
done
finish
'''


def kv(line):
    return {k: v for k, v in (w.split("=", 1) for w in line.split() if "=" in w)}


def load_line(run, name):
    lines = [l for l in run.text(name).splitlines() if l.startswith("load=")]
    if not lines:
        raise AssertionError("%s: no figures:\n%s" % (name, run.text(name)))
    return kv(lines[-1])


def trace(run, tag):
    """(started_us, rows, the '# backend config' line's values) of a load's trace."""
    started, rows, config = 0, [], {}
    for line in run.text("trace-" + tag).splitlines():
        if line.startswith("# clock monotonic start_us"):
            started = int(line.split()[4])
        elif line.startswith("# backend config"):
            config = kv(line)
        elif not line.startswith("#"):
            rows.append(dict(zip(TRACE_COLS, line.split())))
    return started, rows, config


def caps_time(costs, iops, bps):
    """Seconds the caps need to let COSTS ((operations, bytes) in order) through back to back: two leaky buckets
    that admit while each holds at most 0.1 s of its rate and then take the cost, as target/caps.c does."""
    t, ops_level, bytes_level = 0.0, 0.0, 0.0

    def admit(t, ops_level, bytes_level):
        wait = max((ops_level - iops * 0.1) / iops, (bytes_level - bps * 0.1) / bps, 0.0)
        return t + wait, max(ops_level - iops * wait, 0.0), max(bytes_level - bps * wait, 0.0)
    for ops, nbytes in costs:
        t, ops_level, bytes_level = admit(t, ops_level, bytes_level)
        ops_level += ops
        bytes_level += nbytes
    return admit(t, ops_level, bytes_level)[0]


def window(run, tag, t0, t1):
    """The back end over [T0, T1] (the loads' clock, µs): bytes and operations, what the host was given,
    and the use of the binding cap."""
    started, rows, config = trace(run, tag)
    w = {"backend_read_bytes": 0, "backend_written_bytes": 0, "backend_ops": 0, "delivered_bytes": 0,
         "written_bytes": 0, "commands": 0}
    waits, classes, costs = [], {}, []
    iops, bps = int(config["iops"]), int(config["bytes_per_s"])
    for r in sorted(rows, key=lambda r: int(r["dispatched"])):
        if not t0 <= started + int(r["dispatched"]) <= t1:
            continue
        waits.append((started + int(r["sub"]), started + int(r["dispatched"])))
        classes[r["class"]] = classes.get(r["class"], 0) + 1
        w["commands"] += 1
        moved, ops = int(r["backend_bytes"]), int(r["backend_ops"])
        w["backend_ops"] += ops
        costs.append((ops, moved))
        if r["opcode"] == "0x02":
            w["backend_read_bytes"] += moved
            w["delivered_bytes"] += int(r["nlb"]) * 4096
        elif r["opcode"] == "0x01":
            w["backend_written_bytes"] += moved
            w["written_bytes"] += int(r["nlb"]) * 4096
    secs = (t1 - t0) / 1e6
    # how much of the window a command was waiting for the caps: near 1 when they bind
    busy, reach = 0, t0
    for a, b in sorted(waits):
        a = max(a, reach)
        if b > a:
            busy += b - a
            reach = b
    w["waiting_fraction"] = busy / (t1 - t0)
    w["classes"] = classes
    ops_use = w["backend_ops"] / secs / iops
    bytes_use = (w["backend_read_bytes"] + w["backend_written_bytes"]) / secs / bps
    # a mix of small and large commands fills neither bucket alone: the use is the time the caps need to let
    # the window's commands through back to back over the window's length, 1 when they bound the load
    w.update(seconds=secs, iops_cap=iops, bps_cap=bps, ops_use=ops_use, bytes_use=bytes_use,
             cap_use=caps_time(costs, iops, bps) / secs, bound="iops" if ops_use >= bytes_use else "bytes")
    w["cap_check"] = 0.9 <= w["cap_use"] <= 1.1
    return w


def guest(script, devices, env, timeout):
    args = ["--copy", TARGET, "--env", "LCLOUD_TARGET=" + TARGET, "--copy", HINT_LOAD, "--env", "HINT_LOAD=" + HINT_LOAD,
            "--module", "nvme-tcp", "--env", "MODES=" + " ".join(MODES), "--env", "MODEL=" + " ".join(MODEL),
            "--env", "SECONDS=%d" % SECONDS, "--env", "IO_TIMEOUT=%d" % IO_TIMEOUT] + devices
    for k, v in env.items():
        args += ["--env", "%s=%s" % (k, v)]
    run = vmlib.run_guest(script, args, timeout=timeout, lane="current")
    if run.exists("fail"):
        raise AssertionError("guest failures:\n" + run.text("fail"))
    resets = run.text("nvme-resets").strip()
    assert not resets, "the guest's NVMe host gave up on commands and reset the controller:\n" + resets
    assert run.text("io_timeout_ms").strip() == str(IO_TIMEOUT * 1000), run.text("io_timeout_ms")
    rcs = run.text("target-rcs").split("\n")
    # a back end's target ends on SIGTERM with status 0; the set-up's, without one, is killed by it
    assert all(l.split()[1] == "0" for l in rcs if l.strip() and l.split()[0] != "setup"), \
        "a target did not end cleanly: %s" % rcs
    return run


def per_mode(loads, keys):
    out = {}
    for mode in ("ignore", "use"):
        these = [l for l in loads if l["mode"] == mode]
        out[mode] = {k: statistics.mean(l[k] for l in these) for k in keys}
    return out


def measure_readahead():
    run = guest(READAHEAD, ["--copy", "/usr/sbin/mke2fs", "--copy", "/usr/sbin/filefrag", "--mem", "1536"],
                {"READ_AHEAD_KB": READ_AHEAD_KB},
                300 + len(MODES) * (SECONDS + 60))
    loads = []
    for k, mode in enumerate(MODES, 1):
        t = "ra-%d-%s" % (k, mode)
        seq, rnd = load_line(run, "seqread-" + t), load_line(run, "randread-" + t)
        assert "error" not in seq and "error" not in rnd, (seq, rnd)
        t0 = min(int(seq["start_us"]), int(rnd["start_us"]))
        t1 = max(int(seq["end_us"]), int(rnd["end_us"]))
        w = window(run, t, t0, t1)
        loads.append({"tag": t, "mode": mode, "window": w, "waiting": w["waiting_fraction"],
                      "bytes_per_delivered": w["backend_read_bytes"] / w["delivered_bytes"],
                      "rand_p50_ms": int(rnd["p50_us"]) / 1000, "rand_p99_ms": int(rnd["p99_us"]) / 1000,
                      "rand_reads": int(rnd["ops"]), "seq_mb_s": float(seq["bytes_per_s"]) / 1e6,
                      "seq_files": int(seq["files"]), "cap_use": w["cap_use"], "bound": w["bound"],
                      "cap_check": w["cap_check"]})
    keys = ["bytes_per_delivered", "rand_p50_ms", "rand_p99_ms", "seq_mb_s", "cap_use"]
    m = per_mode(loads, keys)
    f = {"loads": loads, "modes": m, "read_ahead_kb": run.text("read_ahead_kb").strip(),
         "filefrag": run.text("filefrag"),
         "checks_pass": all(l["cap_check"] for l in loads)}
    f["targets"] = {
        "bytes_per_delivered_with_hints": (m["use"]["bytes_per_delivered"], m["use"]["bytes_per_delivered"] <= 1.1),
    }
    return f


def measure_journal():
    run = guest(JOURNAL, ["--mem", "1024"], {}, 300 + len(MODES) * (SECONDS + 40))
    loads = []
    for k, mode in enumerate(MODES, 1):
        t = "j-%d-%s" % (k, mode)
        com, bg = load_line(run, "commit-" + t), load_line(run, "background-" + t)
        assert "error" not in com and "error" not in bg, (com, bg)
        w = window(run, t, int(bg["start_us"]), int(bg["end_us"]))
        loads.append({"tag": t, "mode": mode, "window": w, "commit_p50_ms": int(com["p50_us"]) / 1000,
                      "commit_p99_ms": int(com["p99_us"]) / 1000, "commits": int(com["ops"]),
                      "background_mb_s": float(bg["bytes_per_s"]) / 1e6, "cap_use": w["cap_use"],
                      "bound": w["bound"], "cap_check": w["cap_check"]})
    m = per_mode(loads, ["commit_p50_ms", "commit_p99_ms", "background_mb_s", "cap_use", "commits"])
    p99_ratio = m["ignore"]["commit_p99_ms"] / m["use"]["commit_p99_ms"]
    bg_ratio = m["use"]["background_mb_s"] / m["ignore"]["background_mb_s"]
    return {"loads": loads, "modes": m, "max_write_streams": run.text("max_write_streams").strip(),
            "checks_pass": all(l["cap_check"] for l in loads),
            "targets": {"commit_p99_blind_over_aware": (p99_ratio, p99_ratio >= 2),
                        "background_aware_over_blind": (bg_ratio, abs(bg_ratio - 1) <= 0.1)}}


def sysbench_figures(text):
    """TPS, and p95/p99 latency (ms) from sysbench's histogram (--histogram=on)."""
    tps = float(re.search(r"transactions:\s+\d+\s+\(([\d.]+) per sec", text).group(1))
    trans = int(re.search(r"transactions:\s+(\d+)", text).group(1))
    hist = [(float(v), int(c)) for v, c in re.findall(r"^\s*([\d.]+) \|\**\s+(\d+)\s*$", text, re.M)]
    total = sum(c for _, c in hist)

    def pct(p):
        want, seen = math.ceil(p * total), 0
        for v, c in hist:
            seen += c
            if seen >= want:
                return v
        return hist[-1][0]
    return {"tps": tps, "transactions": trans, "p95_ms": pct(0.95), "p99_ms": pct(0.99),
            "p99_sysbench_ms": float(re.search(r"99th percentile:\s+([\d.]+)", text).group(1))}


def mariadb_images(tmp):
    """The data directory without its redo log (namespace 1), the redo log alone (namespace 2), an empty file
    system for the copy (namespace 3): ext4 images made from the crash lab's template."""
    from test_mariadb_lab import make_image, mariadb_cache
    cache = mariadb_cache()
    data, redo, backup = (os.path.join(tmp, n + ".img") for n in ("data", "redo", "backup"))
    make_image(data, os.path.join(cache, "datadir"), "ext4")
    for img, size in ((redo, "64M"), (backup, "256M")):
        subprocess.run(["mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-E", "lazy_itable_init=0,lazy_journal_init=0",
                        img, size], check=True)
    mnt_data, mnt_redo = data + ".mnt", redo + ".mnt"
    os.makedirs(mnt_data)
    os.makedirs(mnt_redo)
    subprocess.run(["mount", "-o", "loop", data, mnt_data], check=True)
    try:
        subprocess.run(["mount", "-o", "loop", redo, mnt_redo], check=True)
        try:
            log = os.path.join(mnt_data, "mysql", "ib_logfile0")
            st = os.stat(log)
            os.makedirs(os.path.join(mnt_redo, "redo"))
            subprocess.run(["cp", "-a", "--sparse=never", log, os.path.join(mnt_redo, "redo")], check=True)
            os.chown(os.path.join(mnt_redo, "redo"), st.st_uid, st.st_gid)
            os.unlink(log)
        finally:
            subprocess.run(["umount", mnt_redo], check=True)
    finally:
        subprocess.run(["umount", mnt_data], check=True)
    os.rmdir(mnt_data)
    os.rmdir(mnt_redo)
    return cache, data, redo, backup


def measure_mariadb():
    tmp = tempfile.mkdtemp(prefix="lcloud-hints-mariadb-")
    try:
        cache, data, redo, backup = mariadb_images(tmp)
        devices = ["--virtio", "image=%s,drive.readonly=on" % os.path.join(cache, "root.ext4")]
        for img in (data, redo, backup):
            devices += ["--virtio", "image=%s,drive.readonly=on" % img]
        run = guest(MARIADB, devices + ["--mem", "2048"],
                    {"MARIADB_SECONDS": MARIADB_SECONDS, "THREADS": THREADS, "READ_AHEAD_KB": READ_AHEAD_KB},
                    600 + len(MODES) * (MARIADB_SECONDS + 240))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    loads = []
    for k, mode in enumerate(MODES, 1):
        t = "db-%d-%s" % (k, mode)
        sb = sysbench_figures(run.text("sysbench-%s.txt" % t))
        t0, t1 = int(run.text("start-" + t)), int(run.text("end-" + t))
        w = window(run, t, t0, t1)
        copy = load_line(run, "copy-" + t)
        loads.append(dict(sb, tag=t, mode=mode, window=w, cap_use=w["cap_use"], bound=w["bound"],
                          cap_check=w["cap_check"], copy_mb_s=float(copy["bytes_per_s"]) / 1e6,
                          redo_dir=run.text("vars-" + t).split()[0]))
    m = per_mode(loads, ["tps", "p95_ms", "p99_ms", "copy_mb_s", "cap_use"])
    tps_ratio = m["use"]["tps"] / m["ignore"]["tps"]
    p99_ratio = m["ignore"]["p99_ms"] / m["use"]["p99_ms"]
    return {"loads": loads, "modes": m, "mariadb": open(os.path.join(cache, "version")).read().strip(),
            "threads": THREADS, "read_ahead_kb": READ_AHEAD_KB,
            "checks_pass": all(l["cap_check"] for l in loads),
            "targets": {"tps_aware_over_blind": (tps_ratio, tps_ratio > 1),
                        "p99_blind_over_aware": (p99_ratio, p99_ratio > 1)}}


MEASURE = {"readahead": measure_readahead, "journal": measure_journal, "mariadb": measure_mariadb}


def header(f, what):
    return ("Command (root, after a build): `tests/bench/run-hints-vm.py build` (BENCH=%s, SCALE=%s, %d s per load, "
            "modes %s), %s UTC, one guest of the current VM lane (Linux 7 under TCG, its nvme-tcp host connected to "
            "lcloud-target over loopback, %.0f min). Model: `%s` (gp3 scaled: %s IOPS, %.2f MiB/s, 256 KiB to the "
            "operation, latency %.0f ms; the guest's NVMe I/O timeout %s s, Linux's 30 s scaled alike). Load "
            "average of the host before / after the run: %s / %s." % (
                what, f["scale"], f["mariadb_seconds"] if what == "mariadb" else f["seconds"], " ".join(f["order"]),
                f["date"], f["minutes"], " ".join("%g" % f["scale"] if a == SCALE else a for a in MODEL),
                f["iops"], f["bps"] / 1048576, f["latency_ms"], f.get("io_timeout", 30), f["loadavg_before"],
                f["loadavg_after"]))


def caps_line(loads):
    return ", ".join("%s %.2f (%s)%s" % (l["mode"], l["cap_use"], l["bound"], "" if l["cap_check"] else " FAILS")
                     for l in loads)


def verdict(ok):
    return "meets" if ok else "**misses**"


def mode_table(f, columns):
    """The two modes' means and their ratio, hint-aware over hint-blind: COLUMNS are (heading, key, format)."""
    m = f["modes"]
    out = ["| device | %s | cap use (bound) per load |" % " | ".join(c[0] for c in columns),
           "|---|%s---|" % ("---:|" * len(columns))]
    for mode, name in (("ignore", "hint-blind (`--hints ignore`)"), ("use", "hint-aware (`--hints use`)")):
        out.append("| %s | %s | %s |" % (name, " | ".join(fmt % m[mode][k] for _, k, fmt in columns),
                                         caps_line([l for l in f["loads"] if l["mode"] == mode])))
    out.append("| aware / blind | %s | |" % " | ".join("**%.2f**" % (m["use"][k] / m["ignore"][k]) for _, k, _ in columns))
    return out


def cap_sentence(f):
    return ("Cap check (the time the caps need for each load's back-end operations and bytes within 10 %% of the "
            "load's window; bound: the cap its operations or bytes used more of): %s." % (
                "passes for every load" if f["checks_pass"] else
                "**fails**: there the emulation or the load, not the caps, bounded it"))


def render_readahead(f):
    m, t = f["modes"], f["targets"]
    out = [header(f, "readahead"), ""] + mode_table(f, [
        ("back-end bytes / delivered", "bytes_per_delivered", "%.3f"), ("waiting reader p50 ms", "rand_p50_ms", "%.0f"),
        ("p99 ms", "rand_p99_ms", "%.0f"), ("sequential reader MB/s", "seq_mb_s", "%.2f")])
    out += ["", "Target: back-end bytes per delivered byte at most 1.1 with hints: %.3f, %s (hint-blind %.3f). %s" % (
        t["bytes_per_delivered_with_hints"][0], verdict(t["bytes_per_delivered_with_hints"][1]),
        m["ignore"]["bytes_per_delivered"], cap_sentence(f)),
        "", "Guest read_ahead_kb %s; device read-ahead up to 1 MiB, cache 8 MiB. Per load: %s." % (
            f["read_ahead_kb"], "; ".join("%s %.3f B/B, p50 %.0f / p99 %.0f ms (%d reads), %.2f MB/s (%d files)" % (
                l["tag"], l["bytes_per_delivered"], l["rand_p50_ms"], l["rand_p99_ms"], l["rand_reads"],
                l["seq_mb_s"], l["seq_files"]) for l in f["loads"]))]
    return "\n".join(out)


def render_journal(f):
    t = f["targets"]
    out = [header(f, "journal"), ""] + mode_table(f, [
        ("commit p50 ms", "commit_p50_ms", "%.0f"), ("commit p99 ms", "commit_p99_ms", "%.0f"),
        ("commits", "commits", "%.0f"), ("background MB/s", "background_mb_s", "%.2f")])
    out += ["", "Targets: commit p99 at least 2x lower with journal priority: %.2fx lower, %s; background throughput "
            "within 10 %%: aware / blind %.3f, %s. %s The namespace's max_write_streams in the guest: %s." % (
                t["commit_p99_blind_over_aware"][0], verdict(t["commit_p99_blind_over_aware"][1]),
                t["background_aware_over_blind"][0], verdict(t["background_aware_over_blind"][1]), cap_sentence(f),
                f["max_write_streams"])]
    return "\n".join(out)


def render_mariadb(f):
    t = f["targets"]
    out = [header(f, "mariadb") + " MariaDB %s, sysbench oltp_write_only (2 tables x 20000 rows, %d threads, %d s per "
           "load after 8 s not measured), innodb_flush_method=O_DIRECT, 8 MiB buffer pool, innodb_flush_log_at_trx_commit=1; "
           "data on namespace 1 (data), redo log on namespace 2 (journal), a copy of the data files round after round "
           "on namespace 3 (background); guest read_ahead_kb %d." % (
               f["mariadb"].split()[2] if len(f["mariadb"].split()) > 2 else f["mariadb"], f["threads"],
               f["mariadb_seconds"], f["read_ahead_kb"]), ""]
    out += mode_table(f, [("tps", "tps", "%.2f"), ("p95 ms", "p95_ms", "%.0f"), ("p99 ms", "p99_ms", "%.0f"),
                          ("copy MB/s", "copy_mb_s", "%.2f")])
    out += ["", "Target: TPS or p99 better with hints: TPS aware / blind %.2f, p99 blind / aware %.2f: %s. %s "
            "Per load: %s." % (t["tps_aware_over_blind"][0], t["p99_blind_over_aware"][0],
                               verdict(t["tps_aware_over_blind"][1] or t["p99_blind_over_aware"][1]), cap_sentence(f),
                               "; ".join("%s %.2f tps (%d), p95 %.0f / p99 %.0f ms" % (
                                   l["tag"], l["tps"], l["transactions"], l["p95_ms"], l["p99_ms"]) for l in f["loads"]))]
    return "\n".join(out)


RENDER = {"readahead": render_readahead, "journal": render_journal, "mariadb": render_mariadb}
SECTIONS = {"readahead": ("hints_readahead_vm", "Hints at a cloud device: read-ahead interference"),
            "journal": ("hints_journal_vm", "Hints at a cloud device: journal priority"),
            "mariadb": ("hints_mariadb_vm", "Hints at a cloud device: MariaDB with a backup beside it")}


def main():
    if os.environ.get("FROM_FIGURES"):
        figures = json.load(open(os.environ["FROM_FIGURES"]))
    else:
        figures = {}
        for b in BENCH:
            before = " ".join(open("/proc/loadavg").read().split()[:3])
            t0 = time.time()
            f = MEASURE[b]()
            scale = float(SCALE)
            f.update(scale=scale, seconds=SECONDS, mariadb_seconds=MARIADB_SECONDS, order=MODES,
                     minutes=(time.time() - t0) / 60, date=time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                     loadavg_before=before, loadavg_after=" ".join(open("/proc/loadavg").read().split()[:3]),
                     iops=int(3000 * scale + 0.5), bps=int((125 << 20) * scale + 0.5),
                     latency_ms=LATENCY_US / scale / 1000, io_timeout=IO_TIMEOUT)
            figures[b] = f
    if os.environ.get("FIGURES"):
        json.dump(figures, open(os.environ["FIGURES"], "w"), indent=1)
    ok = True
    for b, f in figures.items():
        section = RENDER[b](f)
        print(section + "\n")
        ok &= f["checks_pass"]
        if not os.environ.get("NO_README") and not SHORT:
            name, title = SECTIONS[b]
            subprocess.run([os.path.join(HERE, "readme-section"), os.path.join(HERE, "README.md"), name, title],
                           input=section, text=True, check=True)
    return 0 if ok else 2


if __name__ == "__main__":
    sys.exit(main())
