#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The hint census (lane: current): what a device receives, command by
command, when Linux reads and writes through each of its mechanisms, and
what liblcloud's own hinted I/O becomes there.

One guest boot runs lcloud-target (tests/vm/../../target) on files in a
tmpfs, with a volatile write cache (so that FUA is sent), an atomic promise
(so that RWF_ATOMIC is allowed), FDP with placement handles whose uses the
Linux cloud extension states, and its --trace; the guest's own nvme-tcp
host connects to it over loopback. Beside it, QEMU's NVMe with FDP, whose
own trace (-trace pci_nvme_*) shows each command's opcode, block and length
but none of its hint bits. Per row (one mechanism) the guest program
hint_census (hint_census.c) logs its actions and each read a reader waited
in, on CLOCK_MONOTONIC, the clock whose zero the target's trace states; the
guest kernel's tracepoints (nvme:nvme_setup_cmd, block:block_rq_issue) give
what the driver put in each command and the block layer's own flags.

On the host every command is put in its row (by the row's time window and
namespace, and for rows with a byte range by that range), and each row gets
the set of hint bits its commands carried (opcode, FUA, Limited Retry, DSM
byte, DTYPE/DSPEC), counts and sizes, the block layer's flags, what the
kernel refused, and for reads: which commands flagged as read-ahead (LR,
DSM prefetch) had a reader waiting on them, and which unflagged ones were
in fact speculative (no reader had asked for their bytes when they came).

    tests/vm/hint_census.py                   # the full form, compared with the committed table
    tests/vm/hint_census.py --short           # the CI form (test_hint_census.py)
    tests/vm/hint_census.py --write           # full form: rewrite hint_census.json and .md,
                                              # the table in man/lcloud-hints.7 and tests/bench/README.md

It fails (exit 1) when the device saw other bits than the committed table
says for the running kernel (major.minor), and when there is no table for
that kernel."""
import datetime
import errno
import json
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
from matrix import qemu_version  # noqa: E402
from vmlib import GuestRun, keep, run_guest  # noqa: E402

TABLE_JSON = os.path.join(HERE, "hint_census.json")
TABLE_MD = os.path.join(HERE, "hint_census.md")
MAN_PAGE = os.path.join(SOURCE, "man", "lcloud-hints.7")
BENCH_README = os.path.join(SOURCE, "tests", "bench", "README.md")
HINT_CENSUS = os.environ.get("HINT_CENSUS")
LCLOUD_TARGET = os.environ.get("LCLOUD_TARGET")
HOSTID = "5d1c7a2e-3b4f-4c6d-8e9f-0a1b2c3d4e5f"
LBA = 4096
SLOT = 4 << 20       # each row on a raw namespace has 4 MiB of its own
RAW_SIZE = 256 << 20
# the target's placement handles and what the Linux cloud extension says each is for: data is not handle 1
# and journal not handle 3 (class numbers), and background has none, so that a mapping by class number
# and one by the device's word land on different handles
PLACEMENT_USE = {0: "journal", 1: "data", 2: "metadata"}
FDP_HANDLES = 4

OPCODES = {0x00: "Flush", 0x01: "Write", 0x02: "Read", 0x08: "Write Zeroes", 0x09: "Dataset Management",
           0x12: "I/O Management Receive", 0x1d: "I/O Management Send"}
DRIVER_OPCODES = {"nvme_cmd_flush": 0x00, "nvme_cmd_write": 0x01, "nvme_cmd_read": 0x02,
                  "nvme_cmd_write_zeroes": 0x08, "nvme_cmd_dsm": 0x09, "nvme_cmd_io_mgmt_recv": 0x12,
                  "nvme_cmd_io_mgmt_send": 0x1d}

# ---------------------------------------------------------------- the rows
# dev: raw (the target's namespace 1, no file system), ext4 (namespace 2), xfs (namespace 3), qemu (QEMU's
# NVMe namespace). form: short rows run in CI as well. enforce: which commands' bits must stay as the
# committed table has them ("all", or "writes" where the kernel's own metadata reads come and go with what
# it has cached, "reads" where writes only prepare). waits_vary: whether a reader waits on a flagged read
# depends on timing (after an explicit prefetch), so only the bits are held. prep: shell run before the
# row's window, post: after it. steps: shell, with {hc} the census program and its
# log, {dev} the row's block device, {ng} the raw namespace's generic node, {off} the row's byte range on a
# raw namespace ({off1}.. one, two, three MiB into it), {ctl} lcloudctl, {mnt} the file system's mount
# point, {ra} the device's default read-ahead in sectors.
ROWS = [
    # buffered reads: the page cache's read-ahead
    dict(name="read-buffered-seq", dev="raw", form="short", what="buffered sequential reads of 4 KiB, read-ahead on",
         steps="{hc} open {dev} r drop seqread {off} 1M 4K none"),
    dict(name="read-buffered-rand", dev="raw", form="short", what="buffered random reads of 4 KiB, read-ahead on",
         steps="{hc} open {dev} r drop randread {off} 4M 4K 24 11 none"),
    dict(name="read-buffered-seq-setra0", dev="raw", form="short",
         what="buffered sequential reads of 4 KiB after blockdev --setra 0",
         steps="{hc} open {dev} r setra 0 open {dev} r drop seqread {off} 1M 4K none setra {ra}"),
    dict(name="read-buffered-rand-setra0", dev="raw", form="full",
         what="buffered random reads of 4 KiB after blockdev --setra 0",
         steps="{hc} open {dev} r setra 0 open {dev} r drop randread {off} 4M 4K 24 13 none setra {ra}"),
    dict(name="read-buffered-seq-setra0-open-before", dev="raw", form="full",
         what="blockdev --setra 0 on a descriptor opened before it (the file keeps its window)",
         steps="{hc} open {dev} r setra 0 drop seqread {off} 1M 4K none setra {ra}"),
    dict(name="read-buffered-seq-64k", dev="raw", form="full", what="buffered sequential reads of 64 KiB",
         steps="{hc} open {dev} r drop seqread {off} 2M 64K none"),
    dict(name="read-direct", dev="raw", form="short", what="O_DIRECT reads of 16 KiB",
         steps="{hc} open {dev} r+direct seqread {off} 256K 16K none"),
    dict(name="fadvise-willneed", dev="raw", form="short", waits_vary=True,
         what="posix_fadvise WILLNEED of 1 MiB, then reads of 64 KiB",
         steps="{hc} open {dev} r drop fadvise willneed {off} 1M sleep 300 seqread {off} 1M 64K none"),
    dict(name="fadvise-sequential", dev="raw", form="full",
         what="posix_fadvise SEQUENTIAL, then sequential reads of 4 KiB",
         steps="{hc} open {dev} r drop fadvise sequential 0 0 seqread {off} 1M 4K none"),
    dict(name="fadvise-random", dev="raw", form="short",
         what="posix_fadvise RANDOM, then sequential reads of 4 KiB",
         steps="{hc} open {dev} r drop fadvise random 0 0 seqread {off} 256K 4K none"),
    dict(name="fadvise-dontneed", dev="raw", form="full", waits_vary=True,
         what="buffered writes of 64 KiB, then posix_fadvise DONTNEED (writeback), then reads",
         steps="{hc} open {dev} rw write {off} 256K 64K none fadvise dontneed {off} 256K sleep 500 "
               "seqread {off} 256K 64K none"),
    dict(name="readahead-syscall", dev="raw", form="short", waits_vary=True,
         what="readahead(2) of 1 MiB, then reads of 64 KiB",
         steps="{hc} open {dev} r drop readahead {off} 1M sleep 300 seqread {off} 1M 64K none"),
    dict(name="read-dontcache", dev="raw", form="short", what="preadv2 RWF_DONTCACHE reads of 64 KiB",
         steps="{hc} open {dev} r drop seqread {off} 512K 64K dontcache"),
    # writes
    dict(name="write-dontcache", dev="raw", form="short",
         what="pwritev2 RWF_DONTCACHE buffered writes of 64 KiB (the kernel writes them back at once)",
         steps="{hc} open {dev} w write {off} 512K 64K dontcache sleep 1500"),
    dict(name="write-direct", dev="raw", form="short", what="O_DIRECT writes of 16 KiB",
         steps="{hc} open {dev} w+direct write {off} 64K 16K none"),
    dict(name="write-atomic", dev="raw", form="short", what="O_DIRECT pwritev2 RWF_ATOMIC of 16 KiB",
         steps="{hc} open {dev} w+direct write {off} 16K 16K atomic"),
    dict(name="write-odsync-buffered", dev="raw", form="short", what="O_DSYNC buffered writes of 16 KiB",
         steps="{hc} open {dev} w+dsync write {off} 32K 16K none"),
    dict(name="write-odsync-direct", dev="raw", form="short", what="O_DIRECT|O_DSYNC writes of 16 KiB",
         steps="{hc} open {dev} w+direct+dsync write {off} 32K 16K none"),
    dict(name="write-rwf-dsync-direct", dev="raw", form="full", what="O_DIRECT pwritev2 RWF_DSYNC of 16 KiB",
         steps="{hc} open {dev} w+direct write {off} 16K 16K dsync"),
    dict(name="write-buffered-fdatasync", dev="raw", form="short",
         what="buffered writes of 16 KiB, then fdatasync",
         steps="{hc} open {dev} w write {off} 64K 16K none fdatasync"),
    dict(name="write-direct-fsync", dev="raw", form="full",
         what="an O_DIRECT write, then fsync (nothing dirty: a flush only)",
         steps="{hc} open {dev} w+direct write {off} 16K 16K none fsync"),
    dict(name="write-streams", dev="raw", form="short",
         what="io_uring O_DIRECT writes on write streams 1, 2, 3, 4 and 5 (of 4)",
         steps="{hc} open {dev} w+direct stream {off} 16K 1 stream {off1} 16K 2 stream {off2} 16K 3 "
               "stream {off3} 16K 4 stream {off} 16K 5"),
    dict(name="write-stream-buffered", dev="raw", form="full", what="an io_uring buffered write on write stream 2",
         steps="{hc} open {dev} w stream {off} 16K 2 fdatasync"),
    dict(name="rw-hint-bdev-direct", dev="raw", form="short",
         what="F_SET_RW_HINT SHORT (2) on the block device, then an O_DIRECT write",
         steps="{hc} open {dev} w+direct rwhint 2 write {off} 16K 16K none rwhint 0"),
    dict(name="rw-hint-bdev-extreme", dev="raw", form="full",
         what="F_SET_RW_HINT EXTREME (5, past the 4 streams) on the block device, then an O_DIRECT write",
         steps="{hc} open {dev} w+direct rwhint 5 write {off} 16K 16K none rwhint 0"),
    dict(name="rw-hint-bdev-other-program", dev="raw", form="full",
         what="F_SET_RW_HINT SHORT (2) set on the block device by another program, then an O_DIRECT write",
         prep="{hc} open {dev} w rwhint 2", steps="{hc} open {dev} w+direct write {off} 16K 16K none",
         post="{hc} open {dev} w rwhint 0"),
    dict(name="rw-hint-bdev-buffered", dev="raw", form="full",
         what="F_SET_RW_HINT MEDIUM (3) on the block device, then buffered writes and fdatasync",
         steps="{hc} open {dev} w rwhint 3 write {off} 64K 16K none fdatasync rwhint 0"),
    # liblcloud's own hinted I/O, through each backend
    dict(name="lcloud-probe", dev="raw", form="full", what="lcloudctl probe (its own reads of the device)",
         steps="{ctl} probe {dev} > /dev/null 2>&1", region=False),
]
for _backend, _form in (("io_uring", "short"), ("passthrough", "short"), ("sync", "full")):
    for _cls in ("data", "metadata", "journal", "background"):
        ROWS.append(dict(name="lcloud-write-%s-%s" % (_backend, _cls), dev="raw",
                         form=_form if _cls in ("journal", "background") else "full",
                         what="lcloudctl write --hint %s --backend %s" % (_cls, _backend),
                         lcloud=True, steps="{ctl} write --hint %s --backend %s {%s} --offset {off} --length 16K "
                         "--pattern 1" % (_cls, _backend, "ng" if _backend == "passthrough" else "dev")))
    ROWS.append(dict(name="lcloud-write-%s-fua" % _backend, dev="raw", form="full",
                     what="lcloudctl write --fua --backend %s" % _backend, lcloud=True,
                     steps="{ctl} write --fua --backend %s {%s} --offset {off} --length 16K --pattern 1" % (
                         _backend, "ng" if _backend == "passthrough" else "dev")))
    for _kind in ("sync", "readahead"):
        ROWS.append(dict(name="lcloud-read-%s-%s" % (_backend, _kind), dev="raw",
                         form=_form if _kind == "readahead" else "full",
                         what="lcloudctl read --hint %s --backend %s" % (_kind, _backend), lcloud=True,
                         steps="{ctl} read --hint %s --backend %s {%s} --offset {off} --length 16K "
                         "--output /tmp/read-%s-%s" % (_kind, _backend, "ng" if _backend == "passthrough" else "dev", _backend, _kind)))
for _fs, _form in (("ext4", "short"), ("xfs", "short")):
    _mkfs = ("/usr/sbin/mke2fs -q -F -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 {dev}" if _fs == "ext4"
             else "/usr/sbin/mkfs.xfs -q -f {dev}")
    ROWS += [
        dict(name="%s-mkfs" % _fs, dev=_fs, enforce="writes", form="full", what="mkfs (%s)" % _fs,
             steps=_mkfs + " > /out/mkfs-%s.log 2>&1" % _fs),
        dict(name="%s-mount" % _fs, dev=_fs, enforce="writes", form="full", what="mount (%s)" % _fs,
             steps="mount -t %s {dev} {mnt}" % _fs),
        dict(name="%s-create-fsync" % _fs, dev=_fs, enforce="writes", form=_form,
             what="create a file, write 16 KiB, fsync (%s)" % _fs,
             steps="{hc} open {mnt}/a rw+create write 0 16K 16K none fsync"),
        dict(name="%s-fsync-dir" % _fs, dev=_fs, enforce="writes", form=_form,
             what="create a file in a new directory, fsync of the directory (%s)" % _fs,
             steps="mkdir {mnt}/d && {hc} open {mnt}/d/f rw+create open {mnt}/d r fsync"),
        dict(name="%s-rw-hint-file" % _fs, dev=_fs, enforce="writes", form=_form,
             what="F_SET_RW_HINT SHORT on a file, buffered write of 64 KiB, fsync (%s)" % _fs,
             steps="{hc} open {mnt}/h rw+create rwhint 2 write 0 64K 16K none fsync"),
        dict(name="%s-direct-write" % _fs, dev=_fs, enforce="writes", form="full",
             what="O_DIRECT overwrite of 16 KiB in an allocated file, fdatasync (%s)" % _fs,
             steps="{hc} open {mnt}/a rw+direct write 0 16K 16K none fdatasync"),
        dict(name="%s-atomic-write" % _fs, dev=_fs, enforce="writes", form="full",
             what="RWF_ATOMIC O_DIRECT write of 16 KiB in an allocated file (%s)" % _fs,
             steps="{hc} open {mnt}/a rw+direct write 0 16K 16K atomic"),
        dict(name="%s-dontcache-write" % _fs, dev=_fs, enforce="writes", form="full",
             what="RWF_DONTCACHE buffered writes of 64 KiB to a file (%s)" % _fs,
             steps="{hc} open {mnt}/u rw+create write 0 256K 64K dontcache sleep 1500"),
        dict(name="%s-read-file" % _fs, dev=_fs, form="full", enforce="reads",
             what="buffered sequential reads of 4 KiB from a 1 MiB file, cache dropped (%s)" % _fs,
             prep="{hc} open {mnt}/r rw+create write 0 1M 64K none fsync drop",
             steps="{hc} open {mnt}/r r fiemap seqread 0 1M 4K none"),
        dict(name="%s-umount" % _fs, dev=_fs, enforce="writes", form="full", what="umount (%s)" % _fs, steps="umount {mnt}"),
    ]
# QEMU's NVMe beside the target: the same mechanisms where its view differs (no hint bits in its trace)
ROWS += [
    dict(name="qemu-read-buffered-seq", dev="qemu", form="full", what="QEMU NVMe: buffered sequential reads of 4 KiB",
         steps="{hc} open {dev} r drop seqread {off} 1M 4K none"),
    dict(name="qemu-read-direct", dev="qemu", form="full", what="QEMU NVMe: O_DIRECT reads of 16 KiB",
         steps="{hc} open {dev} r+direct seqread {off} 256K 16K none"),
    dict(name="qemu-write-odsync-direct", dev="qemu", form="full", what="QEMU NVMe: O_DIRECT|O_DSYNC writes",
         steps="{hc} open {dev} w+direct+dsync write {off} 32K 16K none"),
    dict(name="qemu-write-streams", dev="qemu", form="full",
         what="QEMU NVMe: io_uring writes on write streams 1 to 4",
         steps="{hc} open {dev} w+direct stream {off} 16K 1 stream {off1} 16K 2 stream {off2} 16K 3 "
               "stream {off3} 16K 4", ruh=True),
    dict(name="qemu-lcloud-write-journal", dev="qemu", form="full",
         what="QEMU NVMe: lcloudctl write --hint journal --backend io_uring", lcloud=True,
         steps="{ctl} write --hint journal --backend io_uring {dev} --offset {off} --length 16K --pattern 1", ruh=True),
]
DEVICES = {"raw": ("lcloud-target", "$RAW"), "ext4": ("lcloud-target", "$EXT"), "xfs": ("lcloud-target", "$XFS"),
           "qemu": ("QEMU", "$QNS")}
NSID = {"raw": 1, "ext4": 2, "xfs": 3}


def rows_of(form):
    return [r for r in ROWS if form == "full" or r["form"] == "short"]


def slots():
    """Each raw-device row's byte range, fixed by its place in ROWS (the same in both forms)."""
    out, n = {}, {"raw": 0, "qemu": 1}  # QEMU's first slot: the kernel's scan of the namespace reads there
    for r in ROWS:
        if r["dev"] in n and r.get("region", True):
            out[r["name"]] = (n[r["dev"]] * SLOT, SLOT)
            n[r["dev"]] += 1
    return out


GUEST_SETUP = r'''
set -u
ip link set lo up
modprobe nvme-tcp || echo "modprobe nvme-tcp failed" >&2
modprobe xfs || echo "modprobe xfs failed" >&2
uname -r > /out/uname
T=/sys/kernel/tracing
mount -t tracefs tracefs $T || echo "no tracefs" >&2
echo mono > $T/trace_clock
echo 16384 > $T/buffer_size_kb
echo 1 > $T/events/nvme/nvme_setup_cmd/enable
echo 1 > $T/events/nvme/nvme_complete_rq/enable
echo 1 > $T/events/block/block_rq_issue/enable
mkdir -p /srv /mnt/ext4 /mnt/xfs && mount -t tmpfs -o size=1100M tmpfs /srv
truncate -s RAW_SIZE /srv/raw.img; truncate -s 256M /srv/ext4.img; truncate -s 320M /srv/xfs.img
"$LCLOUD_TARGET" --ns /srv/raw.img --ns /srv/ext4.img --ns /srv/xfs.img --nqn nqn.2026-12.org.liblcloud:census \
    --listen 127.0.0.1:4420 --serial census --lba-size 4096 --nawun 16K --nawupf 16K --volatile-write-cache on \
    --fdp FDP_HANDLES --placement-use PLACEMENT_USE --trace /out/trace > /out/listen 2> /out/target.log &
TPID=$!
i=0; until grep -q '^listening' /out/listen; do i=$((i+1)); [ $i -gt 100 ] && break; sleep 0.1; done
nvme connect -t tcp -a 127.0.0.1 -s 4420 -n nqn.2026-12.org.liblcloud:census \
    --hostnqn=nqn.2014-08.org.nvmexpress:uuid:HOSTID --hostid=HOSTID > /out/connect 2>&1 || echo "connect failed" >&2
i=0; until [ $(ls /sys/block | grep -c '^nvme[0-9]*n[0-9]*$') -ge NS_WANTED ]; do i=$((i+1)); [ $i -gt 100 ] && break; sleep 0.1; done
sleep 1
RAW= EXT= XFS= QNS=
for d in /sys/block/nvme*n*; do
    n=${d##*/}
    s=$(cat $d/device/serial 2>/dev/null || cat $d/device/*/serial 2>/dev/null | head -1)
    s=$(echo $s | tr -d ' ')
    echo "$n $s $(cat $d/nsid) $(cat $d/dev) $(cat $d/queue/read_ahead_kb) $(cat $d/queue/max_write_streams) $(cat $d/queue/max_hw_sectors_kb)" >> /out/disks
    case $n in *c*) continue ;; esac
    case "$s:$(cat $d/nsid)" in
        census:1) RAW=/dev/$n; NG=/dev/ng${n#nvme} ;;
        census:2) EXT=/dev/$n ;;
        census:3) XFS=/dev/$n ;;
        lcq:*) QNS=/dev/$n ;;
    esac
done
[ -n "$RAW" ] && [ -n "$EXT" ] && [ -n "$XFS" ] || echo "the target's namespaces are missing" >&2
RA=$(( $(cat /sys/block/${RAW#/dev/}/queue/read_ahead_kb) * 2 ))
L=/out/census.log
HC=$HINT_CENSUS
ruh() { [ -n "$QNS" ] && nvme fdp status $QNS -b > /out/ruh-$1.bin 2>/dev/null; }
'''

GUEST_END = r'''
cat $T/trace > /out/ftrace
grep -m1 '^# entries-in-buffer' $T/trace > /out/ftrace-entries
nvme disconnect-all > /dev/null 2>&1
kill $TPID; i=0; while kill -0 $TPID 2>/dev/null; do i=$((i+1)); [ $i -gt 50 ] && break; sleep 0.1; done
dmesg > /out/dmesg
'''


FS_SETUP = {"ext4": "/usr/sbin/mke2fs -q -F -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 $EXT > /dev/null 2>&1; "
                    "mount -t ext4 $EXT /mnt/ext4",
            "xfs": "/usr/sbin/mkfs.xfs -q -f $XFS > /dev/null 2>&1; mount -t xfs $XFS /mnt/xfs"}


def guest_script(rows):
    sl = slots()
    names = {r["name"] for r in rows}
    mounted = set()
    s = (GUEST_SETUP.replace("RAW_SIZE", str(RAW_SIZE)).replace("FDP_HANDLES", str(FDP_HANDLES))
         .replace("PLACEMENT_USE", ",".join("%d=%s" % kv for kv in sorted(PLACEMENT_USE.items())))
         .replace("HOSTID", HOSTID).replace("NS_WANTED", str(4 if any(r["dev"] == "qemu" for r in rows) else 3)))
    for r in rows:
        off = sl.get(r["name"], (0, 0))[0]
        fmt = dict(hc="$HC $L", dev=DEVICES[r["dev"]][1], ng="$NG", off=off, off1=off + (1 << 20),
                   off2=off + (2 << 20), off3=off + (3 << 20), ctl='"$LCLOUDCTL"', mnt="/mnt/" + r["dev"], ra="$RA")
        steps = r["steps"].format(**fmt)
        if r.get("lcloud"):
            steps += " > /out/lc-%s 2>&1; echo \"rc $?\" >> /out/lc-%s" % (r["name"], r["name"])
        fs = r["dev"] if r["dev"] in FS_SETUP else None
        if fs and fs not in mounted and "%s-mount" % fs not in names:
            s += "\n# the short form's %s, made and mounted outside every window\n%s\nsync\n" % (fs, FS_SETUP[fs])
            mounted.add(fs)
        if r["name"] == "%s-mount" % fs:
            mounted.add(fs)
        if r["name"] == "%s-umount" % fs:
            mounted.discard(fs)
        s += "\n# %s\n" % r["what"]
        if r.get("prep"):
            s += r["prep"].format(**fmt).replace("$HC $L", "$HC /tmp/census-prep.log") + "\nsync\n"
        if r.get("ruh"):
            s += "ruh %s-before\n" % r["name"]
        s += "$HC $L begin %s\n%s\n$HC $L end %s\n" % (r["name"], steps, r["name"])
        if r.get("post"):
            s += r["post"].format(**fmt).replace("$HC $L", "$HC /tmp/census-prep.log") + "\n"
        if r.get("ruh"):
            s += "ruh %s-after\n" % r["name"]
        s += "sync; sleep 0.2\n"  # what a row left dirty goes before the next row's window, in this row's range
    for fs in sorted(mounted):
        s += "umount /mnt/%s\n" % fs
    return s + GUEST_END


def guest_devices(rows):
    if not HINT_CENSUS or not LCLOUD_TARGET:
        raise AssertionError("HINT_CENSUS and LCLOUD_TARGET are not set (meson sets them)")
    d = ["--copy", os.path.realpath(HINT_CENSUS), "--env", "HINT_CENSUS=" + os.path.realpath(HINT_CENSUS),
         "--copy", os.path.realpath(LCLOUD_TARGET), "--env", "LCLOUD_TARGET=" + os.path.realpath(LCLOUD_TARGET),
         "--copy", "/usr/sbin/mkfs.xfs", "--copy", "/usr/sbin/mke2fs",
         "--module", "nvme-tcp", "--module", "xfs", "--mem", "2048"]
    if any(r["dev"] == "qemu" for r in rows):
        d += ["--nvme", "lbs=4096,size=%dM,serial=lcq,subsys.fdp=on,subsys.fdp.nruh=%d,subsys.fdp.runs=1M,"
              "fdp.ruhs=0-%d" % (RAW_SIZE >> 20, FDP_HANDLES, FDP_HANDLES - 1)]
        for e in ("pci_nvme_io_cmd", "pci_nvme_read", "pci_nvme_write"):
            d += ["--qemu-trace", e]
    return d


def boot(form):
    rows = rows_of(form)
    if os.environ.get("HINT_CENSUS_REUSE"):
        return rows, GuestRun(os.environ["HINT_CENSUS_REUSE"])  # a kept guest's results, analysed again
    return rows, run_guest(guest_script(rows), guest_devices(rows), timeout=1200 if form == "full" else 600,
                           lane="current")


# ---------------------------------------------------------------- readings
class Cmd:
    """One command a device received (or the driver sent): where, what, and its hint bits."""
    __slots__ = ("nsid", "opc", "slba", "nlb", "fua", "lr", "dsm", "dtype", "dspec", "t0", "t1", "status")

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    def sig(self):
        parts = [OPCODES.get(self.opc, "opcode 0x%02x" % self.opc)]
        if self.fua:
            parts.append("FUA")
        if self.lr:
            parts.append("LR")
        if self.dsm:
            parts.append("DSM 0x%02x" % self.dsm)
        if self.dtype:
            parts.append("DTYPE %d DSPEC %d" % (self.dtype, self.dspec))
        return " ".join(parts)

    def flagged(self):
        """Marked as a read-ahead the way Linux marks one (REQ_RAHEAD: Limited Retry and DSM prefetch)."""
        return bool(self.lr) or (self.dsm or 0) & 0xF == 7

    def bytes_range(self):
        return self.slba * LBA, (self.slba + self.nlb) * LBA


def read_target_trace(text):
    lines = text.splitlines()
    clock = [l.split() for l in lines[:3] if l.startswith("# clock monotonic start_us")]
    if not clock:
        raise AssertionError("the target's trace states no clock: %r" % lines[:2])
    start = int(clock[0][4])
    out = []
    for l in lines:
        if l.startswith("#"):
            continue
        f = l.split()
        out.append(Cmd(nsid=int(f[2]), opc=int(f[1], 16), slba=int(f[3]), nlb=int(f[4]), fua=int(f[5]),
                       lr=int(f[6]), dsm=int(f[7], 16), dtype=int(f[8]), dspec=int(f[9]),
                       t0=start + int(f[10]), t1=start + int(f[11]), status=int(f[12], 16)))
    return out


COMPLETE_RE = re.compile(r": nvme_complete_rq: (nvme\d+): (?:disk=\S+, )?qid=(\d+), cmdid=(\d+),")
SETUP_RE = re.compile(r"\s(\d+\.\d+): nvme_setup_cmd: (nvme\d+): (?:disk=(\S+), )?qid=(\d+), cmdid=(\d+), "
                      r"nsid=(\d+), flags=0x[0-9a-f]+, meta=0x[0-9a-f]+, cmd=\((\w+)(.*)\)$")
ISSUE_RE = re.compile(r"\s(\d+\.\d+): block_rq_issue: (\d+,\d+) (\S+) (\d+) \(.*?\) (\d+) \+ (\d+)")


def read_ftrace(text):
    """The driver's commands (nvme_setup_cmd) by controller, with their completion times (nvme_complete_rq),
    and the block layer's requests (block_rq_issue)."""
    driver, issued, open_cmds = [], [], {}
    for l in text.splitlines():
        m = COMPLETE_RE.search(l)
        if m:
            c = open_cmds.pop(m.groups(), None)
            if c:
                c.t1 = round(float(l.split(": nvme_complete_rq")[0].split()[-1]) * 1e6)
            continue
        m = SETUP_RE.search(l)
        if m and int(m.group(4)) > 0 and m.group(7) in DRIVER_OPCODES:
            f = dict(re.findall(r"(\w+)=(0x[0-9a-f]+|\d+)", m.group(8)))
            ctrl, dsm = int(f.get("ctrl", "0"), 0), int(f.get("dsmgmt", "0"), 0)
            rw = m.group(7) in ("nvme_cmd_read", "nvme_cmd_write", "nvme_cmd_write_zeroes")
            driver.append((m.group(2), Cmd(nsid=int(m.group(6)), opc=DRIVER_OPCODES[m.group(7)],
                                           slba=int(f.get("slba", 0)) if rw else 0,
                                           nlb=int(f.get("len", 0)) + 1 if rw else 0,
                                           fua=ctrl >> 14 & 1 if rw else 0, lr=ctrl >> 15 & 1 if rw else 0,
                                           dsm=dsm & 0xFF if rw else 0, dtype=ctrl >> 4 & 0xF if rw else 0,
                                           dspec=dsm >> 16 if rw else 0, t0=round(float(m.group(1)) * 1e6))))
            open_cmds[(m.group(2), m.group(4), m.group(5))] = driver[-1][1]
            continue
        m = ISSUE_RE.search(l)
        if m:
            issued.append(dict(t=round(float(m.group(1)) * 1e6), dev=m.group(2), rwbs=m.group(3),
                               sector=int(m.group(5)), sectors=int(m.group(6))))
    return driver, issued


def read_qemu_trace(text):
    """QEMU's own reading: (opcode, nsid, slba, nlb), in order; flushes carry no block."""
    out, pending = [], {}
    for l in text.splitlines():
        f = l.split()
        if not f:
            continue
        kv = dict(zip(f[1::2], f[2::2]))
        if f[0] == "pci_nvme_io_cmd":
            opc = int(kv["opc"], 16)
            if opc in (0x01, 0x02):
                pending[kv["cid"]] = opc
            else:
                out.append(Cmd(opc=opc, nsid=int(kv["nsid"], 16), slba=None, nlb=0))
        elif f[0] in ("pci_nvme_read", "pci_nvme_write"):
            opc = pending.pop(kv["cid"], 0x02 if f[0] == "pci_nvme_read" else 0x01)
            out.append(Cmd(opc=opc, nsid=int(kv["nsid"]), slba=int(kv["lba"], 16), nlb=int(kv["nlb"])))
    return out


def read_census_log(text):
    """The guest program's windows, reads and actions."""
    windows, reads, acts, extents, cur = {}, {}, {}, {}, None
    for l in text.splitlines():
        f = l.split()
        if f[0] == "begin":
            cur = f[1]
            windows[cur] = [int(f[2]), None]
            reads[cur], acts[cur], extents[cur] = [], [], []
        elif f[0] == "end":
            windows[f[1]][1] = int(f[2])
            cur = None
        elif cur and f[0] == "read":
            reads[cur].append(tuple(int(x) for x in f[1:6]))
        elif cur and f[0] == "act":
            acts[cur].append((" ".join(f[1:-3]), int(f[-1])))
        elif cur and f[0] == "extent":
            extents[cur].append(tuple(int(x) for x in f[1:4]))
    return windows, reads, acts, extents


def on_device(calls, extents):
    """Read calls (file offset, length, times, result) as the device ranges they want: through the
    file's extents when it has them (a file on a file system), else as they are (the block device)."""
    if not extents:
        return calls
    out = []
    for off, ln, t0, t1, res in calls:
        for lo, phys, n in extents:
            a, b = max(off, lo), min(off + ln, lo + n)
            if a < b:
                out.append((phys + a - lo, b - a, t0, t1, res))
    return out


def ruamw(status):
    """Each handle's reclaim unit available media writes, from a raw reclaim unit handle status."""
    n = struct.unpack_from("<H", status, 14)[0]
    return [struct.unpack_from("<HHIQ", status, 16 + 32 * i)[3] for i in range(n)]


# ---------------------------------------------------------------- analysis
def reads_waited(cmds, calls):
    """Of the read commands: flagged as read-ahead with a reader waiting on them, flagged without one,
    unflagged whose every byte a reader had asked for when it completed, unflagged none or part of whose
    bytes anyone had (speculative). A reader waited on a command when its read(2) began before the
    device completed it and wanted some of its bytes: those pages were not in memory until then."""
    out = dict(flagged_waited=0, flagged_ahead=0, unflagged_demand=0, unflagged_partly_speculative=0,
               unflagged_speculative=0)
    for c in cmds:
        if c.opc != 0x02 or c.t1 is None:
            continue  # not a read, or its completion was not seen
        lo, hi = c.bytes_range()
        asked = [(max(lo, off), min(hi, off + ln)) for off, ln, t0, t1, res in calls
                 if t0 < c.t1 and off < hi and lo < off + ln]
        if c.flagged():
            out["flagged_waited" if asked else "flagged_ahead"] += 1
            continue
        covered = sum(b - a for a, b in merge(asked))
        key = ("unflagged_demand" if covered == hi - lo else
               "unflagged_partly_speculative" if covered else "unflagged_speculative")
        out[key] += 1
    return out


def merge(spans):
    out = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def summarise(cmds):
    by = {}
    for c in cmds:
        s = by.setdefault(c.sig(), dict(count=0, bytes=0, min=None, max=None))
        n = c.nlb * LBA
        s["count"] += 1
        s["bytes"] += n
        if c.nlb:
            s["min"] = n if s["min"] is None else min(s["min"], n)
            s["max"] = n if s["max"] is None else max(s["max"], n)
    return by


def errname(r):
    return errno.errorcode.get(-r, str(r)) if r < 0 else "ok"


def analyse(run, rows):
    """The census of one boot: per row, what the device received."""
    files = run.files
    windows, reads, acts, extents = read_census_log(run.text("census.log"))
    target = read_target_trace(run.text("trace"))
    driver, issued = read_ftrace(run.text("ftrace"))
    disks = {}
    for l in run.text("disks").splitlines():
        name, serial, nsid, devnum = l.split()[:4]
        m = re.match(r"nvme(\d+)(?:c(\d+))?n\d+$", name)
        disks[name] = dict(serial=serial, nsid=int(nsid), devnum=devnum.replace(":", ","),
                           ctrl="nvme" + (m.group(2) or m.group(1)))
    ctrls = {d["ctrl"]: d["serial"] for d in disks.values()}
    qemu_nsid = next((d["nsid"] for d in disks.values() if d["serial"] == "lcq"), None)
    qemu_cmds = read_qemu_trace(open(os.path.join(run.outdir, "qemu-trace.log")).read()) \
        if os.path.exists(os.path.join(run.outdir, "qemu-trace.log")) else []
    by_name = {d["devnum"]: n for n, d in disks.items()}
    sl = slots()
    out = {}
    for r in rows:
        name = r["name"]
        if name not in windows or windows[name][1] is None:
            raise AssertionError("row %s did not run (the guest log has no window for it)" % name)
        t0, t1 = windows[name]
        rng = sl.get(name)
        if r["dev"] == "qemu":
            mine = [c for n, c in driver if ctrls.get(n) == "lcq" and t0 <= c.t0 <= t1]
        else:
            mine = [c for c in target if c.nsid == NSID[r["dev"]] and t0 <= c.t0 <= t1]
        inside, outside = [], []
        for c in mine:
            lo, hi = c.bytes_range()
            if rng and c.nlb and not (lo < rng[0] + rng[1] and rng[0] < hi):
                outside.append(c)
            else:
                inside.append(c)
        if r["dev"] != "qemu" and rng:
            # what a row's buffered writes left for the kernel to write back after its window, in its range
            late = [c for c in target if c.nsid == NSID[r["dev"]] and c.t0 > t1 and c.nlb and
                    rng[0] <= c.slba * LBA < rng[0] + rng[1] and all(not (w[0] <= c.t0 <= w[1])
                                                                    for w in windows.values() if w[1])]
        else:
            late = []
        flags = sorted({i["rwbs"] for i in issued if t0 <= i["t"] <= t1 and on_row_disk(disks.get(by_name.get(i["dev"])), r)
                        and (not rng or not i["sectors"] or rng[0] <= i["sector"] * 512 < rng[0] + rng[1])})
        res = dict(what=r["what"], device=DEVICES[r["dev"]][0], form=r["form"], enforce=r.get("enforce", "all"),
                   waits_vary=bool(r.get("waits_vary")),
                   bits=sorted({c.sig() for c in inside + late}), commands=summarise(inside + late),
                   kernel_flags=flags, refused=sorted({"%s: %s" % (a, errname(v)) for a, v in acts[name] if v < 0}),
                   reads=reads_waited(inside, on_device(reads[name], extents[name])) if reads[name] else None, read_calls=len(reads[name]), late=len(late), outside_range=summarise(outside))
        if r.get("lcloud"):
            text = run.text("lc-" + name)
            m = re.search(r"hints: (.*)", text)
            res["liblcloud"] = m.group(1) if m else text.strip().splitlines()[-2:]
        if r["dev"] == "qemu":
            res["qemu_sees"] = qemu_view(qemu_cmds, inside, qemu_nsid)
            if r.get("ruh"):
                res["ruh_written_blocks"] = ruh_delta(files, name)
        out[name] = res
    return dict(kernel=run.text("uname").strip(), rows=out, driver_agrees=driver_vs_target(driver, target, ctrls),
                ftrace_lost=ftrace_lost(run))


def on_row_disk(disk, row):
    """Whether a block device the guest listed (any path of a namespace) is the row's."""
    if not disk:
        return False
    if row["dev"] == "qemu":
        return disk["serial"] == "lcq"
    return disk["serial"] == "census" and disk["nsid"] == NSID[row["dev"]]


def qemu_view(qcmds, sent, nsid):
    """How many of the reads and writes the driver sent in a row QEMU's own trace shows with the same
    opcode, block and length (its trace has no times, and no hint bits)."""
    there = {}
    for c in qcmds:
        if c.slba is not None and c.nsid == nsid:
            k = (c.opc, c.slba, c.nlb)
            there[k] = there.get(k, 0) + 1
    rw = [c for c in sent if c.opc in (0x01, 0x02)]
    found = 0
    for c in rw:
        k = (c.opc, c.slba, c.nlb)
        if there.get(k):
            there[k] -= 1
            found += 1
    return dict(reads_writes=len(rw), in_qemu_trace=found)


def ruh_delta(files, name):
    try:
        with open(os.path.join(files, "ruh-%s-before.bin" % name), "rb") as f:
            before = ruamw(f.read())
        with open(os.path.join(files, "ruh-%s-after.bin" % name), "rb") as f:
            after = ruamw(f.read())
    except (OSError, struct.error):
        return None
    return {str(i): b - a for i, (b, a) in enumerate(zip(before, after)) if b != a}


def driver_vs_target(driver, target, ctrls):
    """Every I/O command the driver set up for the target's controller, as the target received it."""
    key = lambda c: (c.nsid, c.opc, c.slba, c.nlb, c.fua, c.lr, c.dsm, c.dtype, c.dspec)  # noqa: E731
    sent = sorted(key(c) for n, c in driver if ctrls.get(n) == "census")
    got = sorted(key(c) for c in target)
    missing = len([k for k in sent if k not in got])
    return dict(sent=len(sent), received=len(got), equal=sent == got, sent_not_received=missing)


def ftrace_lost(run):
    m = re.search(r"entries-in-buffer/entries-written: (\d+)/(\d+)", run.text("ftrace-entries"))
    return int(m.group(2)) - int(m.group(1)) if m else None


def totals(census):
    """Reads over every read row of the target: the counts lcloud-hints(7) states."""
    t = dict(flagged_waited=0, flagged_ahead=0, unflagged_demand=0, unflagged_partly_speculative=0,
             unflagged_speculative=0)
    for name, r in census["rows"].items():
        if r["device"] == "lcloud-target" and r["reads"] and not name.startswith("lcloud-"):
            for k in t:
                t[k] += r["reads"][k]
    return t


# ---------------------------------------------------------------- the committed table
def kernel_key(kernel):
    m = re.match(r"(\d+)\.(\d+)", kernel)
    return "%s.%s" % m.groups() if m else kernel


def opcode_of(sig):
    """The command's name at the start of a signature ("Write Zeroes" of "Write Zeroes", "Write" of "Write FUA")."""
    return max((n for n in OPCODES.values() if sig == n or sig.startswith(n + " ")), key=len, default=sig)


def enforced(row):
    """What must not change for a kernel: the bits the device saw (of the commands the row holds: all, its
    reads or its writes), what the kernel refused, and whether flagged reads had readers waiting (where that
    does not depend on timing) and unflagged ones were speculative."""
    kinds = {"reads": ("Read",), "writes": ("Write", "Flush", "Write Zeroes", "Dataset Management")}
    want = kinds.get(row.get("enforce", "all"))
    bits = [b for b in row["bits"] if want is None or opcode_of(b) in want]
    e = dict(bits=bits, refused=row["refused"])
    if row.get("reads"):
        if not row.get("waits_vary"):
            e["flagged_reads_waited_on"] = row["reads"]["flagged_waited"] > 0
        e["unflagged_reads_speculative"] = (row["reads"]["unflagged_speculative"] +
                                            row["reads"]["unflagged_partly_speculative"]) > 0
    return e


def compare(census, committed):
    """Differences between this run and the committed table for its kernel; [] when there are none."""
    key = kernel_key(census["kernel"])
    table = committed.get(key)
    if not table:
        return ["no committed census for Linux %s (kernel %s): run tests/vm/hint_census.py --write by hand" % (
            key, census["kernel"])]
    diffs = []
    for name, row in census["rows"].items():
        want = table["rows"].get(name)
        if want is None:
            diffs.append("%s: not in the committed table" % name)
            continue
        a, b = enforced(row), enforced(want)
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                diffs.append("%s: %s: the device saw %r, the committed table says %r" % (name, k, a.get(k), b.get(k)))
    return diffs


# ---------------------------------------------------------------- output
def size_text(s):
    if not s["min"]:
        return ""
    lo, hi = s["min"] // 1024, s["max"] // 1024
    return " (%d KiB)" % lo if lo == hi else " (%d-%d KiB)" % (lo, hi)


def bits_text(row):
    parts = []
    for sig, s in sorted(row["commands"].items(), key=lambda kv: -kv[1]["count"]):
        parts.append("%d %s%s" % (s["count"], sig, size_text(s)))
    return "; ".join(parts) or "nothing"


def reads_text(row):
    r = row.get("reads")
    if not r:
        return ""
    f = r["flagged_waited"] + r["flagged_ahead"]
    u = r["unflagged_demand"] + r["unflagged_partly_speculative"] + r["unflagged_speculative"]
    out = []
    if f:
        out.append("%d of %d flagged waited on" % (r["flagged_waited"], f))
    if u:
        out.append("%d of %d unflagged speculative" % (r["unflagged_speculative"] + r["unflagged_partly_speculative"], u))
    return ", ".join(out)


def notes_text(row):
    out = []
    if row["refused"]:
        out.append("refused: " + ", ".join(row["refused"]))
    if row.get("liblcloud"):
        out.append("liblcloud: `%s`" % row["liblcloud"])
    if row.get("qemu_sees"):
        out.append("QEMU's trace shows %d of the %d reads and writes, block and length" % (
            row["qemu_sees"]["in_qemu_trace"], row["qemu_sees"]["reads_writes"]))
    if row.get("ruh_written_blocks"):
        out.append("QEMU handle use (blocks): " + ", ".join("%s: %d" % kv for kv in sorted(row["ruh_written_blocks"].items())))
    if row["late"]:
        out.append("%d written back after the window" % row["late"])
    if row.get("liblcloud") and row.get("outside_range"):
        out.append("and its probe's own %s elsewhere" % ", ".join(
            "%d %s" % (v["count"], k) for k, v in sorted(row["outside_range"].items())))
    if row.get("kernel_flags"):
        out.append("block layer: " + " ".join(row["kernel_flags"]))
    return "; ".join(out)


def markdown(census):
    t = totals(census)
    lines = ["# The hint census", "",
             "Generated by `tests/vm/hint_census.py --write` (lane current) on %s: guest kernel %s, QEMU %s." % (
                 census["date"], census["kernel"], census.get("qemu") or "-"),
             "lcloud-target (nvme-tcp over loopback): 4 KiB blocks, NAWUPF 16 KiB, a volatile write cache, FDP "
             "with %d placement handles, the extension's uses %s (handle 3: none). Per row: the commands the "
             "device received, with their hint bits (FUA; LR = Limited Retry; DSM = CDW13 bits 7:0, 0x07 = "
             "access frequency 7, prefetch; DTYPE 2 DSPEC n = FDP placement handle n), how many (sizes), and "
             "for reads whether a reader waited on the flagged ones." % (
                 FDP_HANDLES, ", ".join("%d %s" % kv for kv in sorted(PLACEMENT_USE.items()))),
             "",
             "| mechanism | device | commands and bits at the device | readers | notes |",
             "|---|---|---|---|---|"]
    for name, r in census["rows"].items():
        lines.append("| %s | %s | %s | %s | %s |" % (r["what"], r["device"], bits_text(r), reads_text(r),
                                                     notes_text(r).replace("|", "\\|")))
    lines += ["",
              "Reads over the target's read rows: %d flagged as read-ahead had a reader waiting on them, %d did "
              "not; of the unflagged, %d were asked for whole, %d in part and %d not at all when they came." % (
                  t["flagged_waited"], t["flagged_ahead"], t["unflagged_demand"],
                  t["unflagged_partly_speculative"], t["unflagged_speculative"]),
              "The driver's own record (nvme:nvme_setup_cmd) of the commands it sent the target: %d, "
              "the target's trace: %d, %s." % (
                  census["driver_agrees"]["sent"], census["driver_agrees"]["received"],
                  "the same commands with the same bits" if census["driver_agrees"]["equal"] else "they differ"),
              ""]
    return "\n".join(lines)


def roff(text):
    return text.replace("\\", "\\e").replace("`", "").replace("-", "\\-")


def read_summary(census):
    """The reads over the target's rows, by how they were made: the counts lcloud-hints(7) states."""
    out = {}
    for name, r in census["rows"].items():
        if r["device"] != "lcloud-target" or not r.get("reads") or name.startswith("lcloud-"):
            continue
        kind = "direct" if "direct" in name else "buffered"
        t = out.setdefault(kind, dict(commands=0, flagged=0, flagged_waited=0, unflagged_speculative=0))
        x = r["reads"]
        t["flagged"] += x["flagged_waited"] + x["flagged_ahead"]
        t["flagged_waited"] += x["flagged_waited"]
        t["unflagged_speculative"] += x["unflagged_speculative"] + x["unflagged_partly_speculative"]
        t["commands"] += sum(x.values())
    return out


def man_table(census):
    """The census as roff, for lcloud-hints(7)'s HINTS AT THE DEVICE section."""
    s = read_summary(census)
    b, d = s.get("buffered", {}), s.get("direct", {})
    out = [".\\\" generated by tests/vm/hint_census.py --write: do not edit by hand",
           "Measured on %s with Linux %s, lcloud\\-target and QEMU %s (tests/vm/hint_census.md has the "
           "table with sizes and the block layer's own flags):" % (
               census["date"], roff(census["kernel"]), roff(census.get("qemu") or "-")),
           ".PP",
           "Reads through the page cache, in every mechanism above that makes them: %d commands reached the "
           "device, %d of them flagged as read\\-ahead (Limited Retry and DSM 0x07), and a reader was waiting "
           "on %d of the flagged ones. O_DIRECT reads: %d commands, none flagged. Unflagged reads that were "
           "speculative (fetched before any reader asked for their bytes): %d." % (
               b.get("commands", 0), b.get("flagged", 0), b.get("flagged_waited", 0), d.get("commands", 0),
               b.get("unflagged_speculative", 0) + d.get("unflagged_speculative", 0)),
           "The driver's own record of what it sent the target (its nvme_setup_cmd trace point) and the "
           "target's trace held %s (%d commands)." % (
               "the same commands with the same bits" if census["driver_agrees"]["equal"] else "different commands",
               census["driver_agrees"]["received"])]
    for name, r in census["rows"].items():
        out += [".TP", ".B " + roff(name), roff(r["what"]) + ": " + roff(bits_text(r)) + "."]
        extra = [reads_text(r)]
        if r["refused"]:
            extra.append("refused: " + ", ".join(r["refused"]))
        if r.get("liblcloud"):
            extra.append("liblcloud says: " + r["liblcloud"])
        extra = "; ".join(x for x in extra if x)
        if extra:
            out.append(roff(extra) + ".")
    return "\n".join(out) + "\n"


def replace_between(path, begin, end, body):
    with open(path) as f:
        text = f.read()
    a, b = text.find(begin), text.find(end)
    if a < 0 or b < a:
        raise AssertionError("%s has no %r ... %r markers" % (path, begin, end))
    text = text[:a + len(begin)] + "\n" + body + text[b:]
    with open(path + ".new", "w") as f:
        f.write(text)
    os.replace(path + ".new", path)


def load_committed():
    try:
        with open(TABLE_JSON) as f:
            return json.load(f)
    except FileNotFoundError:
        return {}


def write_table(census):
    committed = load_committed()
    committed[kernel_key(census["kernel"])] = census
    with open(TABLE_JSON + ".new", "w") as f:
        json.dump(committed, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(TABLE_JSON + ".new", TABLE_JSON)
    md = markdown(census)
    with open(TABLE_MD + ".new", "w") as f:
        f.write(md)
    os.replace(TABLE_MD + ".new", TABLE_MD)
    replace_between(MAN_PAGE, ".\\\" census-begin", ".\\\" census-end", man_table(census))
    replace_between(BENCH_README, "<!-- census-begin -->", "<!-- census-end -->", md.split("\n", 2)[2])


def census(form):
    rows, run = boot(form)
    c = analyse(run, rows)
    c["date"] = datetime.date.today().isoformat()
    c["qemu"] = qemu_version()
    c["form"] = form
    return c, run


def main(argv):
    form = "short" if "--short" in argv else "full"
    c, run = census(form)
    if os.environ.get("LCVM_KEEP"):
        keep(run)
    if "--write" in argv:
        if form != "full":
            raise SystemExit("--write takes the full form only")
        write_table(c)
        print("wrote %s, %s, %s and %s" % (TABLE_JSON, TABLE_MD, MAN_PAGE, BENCH_README))
        return 0
    print(markdown(c))
    diffs = compare(c, load_committed())
    for d in diffs:
        print("DIFFERS: " + d)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
