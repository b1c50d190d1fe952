#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7), one boot. Where a file's data goes,
when it is not simply the device its mount names, against the verdict:
two NVMe namespaces, A with 4 KiB LBAs and NAWUPF 16 KiB (queue/nomerges
2), B with 512-byte LBAs that promises one LBA (AWUPF 0), both with a write
log.
  - XFS with its data section on A and a realtime section on B (rtinherit):
    a realtime file's data is on B (xfs_io's realtime flag; a 4 KiB write's
    pattern appears in B's write log at the realtime block xfs_bmap names,
    never in A's), so its stack must be B and plain_direct no more than
    B's 512 bytes; a file of a non-realtime directory stays on A (4 KiB);
    for a caller who cannot read the file (its flags unread): unknown.
    The reverse (data on B, realtime on A) follows A.
  - XFS with 16 KiB blocks on A: plain_direct 16 KiB for a file, a
    reflinked copy and a file with a 64 KiB extent size hint; a 16 KiB
    write to the reflinked copy reaches A as one 16 KiB command at the new
    (copy-on-write) block xfs_bmap names, the original unchanged; 32 KiB is
    no. A file that shares blocks takes O_DIRECT writes only in 16 KiB
    units (stx_dio_offset_align): two 8 KiB writes into its neighbouring
    blocks go through the page cache and reach A in one 32 KiB command, so
    8 KiB is no there, while the file that never shared takes it.
  - btrfs over A and B (data raid0): the probe follows only the mount's
    device, so plain_direct must be no (btrfs_devices 2 = btrfs filesystem
    show's devids); btrfs on A alone: A's 4 KiB.
  - vfat on A: a file system liblcloud does not follow: unknown.
  - ext4 on a loop device with direct I/O over a file on XFS on A, and the
    loop device itself: each request reaches the file as one direct write,
    so the file's 4 KiB blocks on A's 4 KiB logical blocks keep 4 KiB
    writes whole (what the loop queue merges is a larger write, whole per
    block only), and nothing larger; neither has RWF_ATOMIC.
  - ext4 with 16 KiB bigalloc clusters on A, a file with one block of its
    first cluster written (filefrag): a 16 KiB write there reaches A as
    4 KiB and 12 KiB, so plain_direct is 4 KiB (extent_edge_alignment, FIEMAP);
    once the cluster is written whole, 16 KiB.
  - ext4 with 16 KiB bigalloc clusters and data=journal on A: statx says the
    file takes no direct I/O (stx_dio_offset_align 0) yet reports atomic
    limits, and the kernel accepts a 16 KiB RWF_ATOMIC write that its
    journal takes to A as 4 KiB blocks: plain_direct and rwf_atomic no."""
import os
import re

from vmlib import layer, run_guest_once
from hostlib import main
from test_write_log import read_log

GUEST = r'''
set -u
A=${LCVM_NVME0}n1; B=${LCVM_NVME1}n1
echo 2 > /sys/block/${A#/dev/}/queue/nomerges
echo 2 > /sys/block/${B#/dev/}/queue/nomerges
for m in xfs btrfs vfat nls_cp437 nls_ascii loop; do modprobe $m; done
mkdir -p /mnt/x /mnt/l
pattern() { yes "$1" | head -c $2 > /tmp/$1; }
pattern rtfile.. 4096; pattern datafile 4096; pattern lbs-cow. 16384; pattern lbs-sub. 8192
pattern ba-first 4096; pattern ba-page. 16384
P() { # NAME PATH: the probe, and check's exit status per path and size
    "$LCLOUDCTL" probe --format json "$2" > /out/probe-$1.json 2> /out/probe-$1.err
    for s in 4K 8K 16K 32K; do
        "$LCLOUDCTL" check --size $s --path plain_direct "$2" > /out/check-$1-$s.txt 2>&1
        echo $? > /out/check-$1-$s.rc
    done
}
# XFS: data on A, realtime on B
/usr/sbin/mkfs.xfs -q -f -d rtinherit=1 -r rtdev=$B $A > /out/mkfs-rt.log 2>&1
mount -t xfs -o rtdev=$B $A /mnt/x || echo "rt" >> /out/mount-failed
mkdir /mnt/x/data && /usr/sbin/xfs_io -c "chattr -t" /mnt/x/data
for f in /mnt/x/rt /mnt/x/data/d; do dd if=/dev/zero of=$f bs=65536 count=1 oflag=direct 2>/dev/null; done
dd if=/tmp/rtfile.. of=/mnt/x/rt bs=4096 count=1 oflag=direct conv=notrunc 2>/dev/null
dd if=/tmp/datafile of=/mnt/x/data/d bs=4096 count=1 oflag=direct conv=notrunc 2>/dev/null
/usr/sbin/xfs_io -c stat /mnt/x/rt > /out/stat-rt.txt
/usr/sbin/xfs_io -c stat /mnt/x/data/d > /out/stat-data.txt
/usr/sbin/xfs_bmap -v /mnt/x/rt > /out/bmap-rt.txt
/usr/sbin/xfs_bmap -v /mnt/x/data/d > /out/bmap-data.txt
P rt /mnt/x/rt; P rtdir /mnt/x; P data /mnt/x/data/d
# the realtime file unreadable to the caller: its flags cannot be read
chmod 755 /mnt/x; chmod 600 /mnt/x/rt
/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups -- "$LCLOUDCTL" check --no-confirm --size 4K \
    --path plain_direct /mnt/x/rt > /out/check-rt-nobody.txt 2>&1; echo $? > /out/check-rt-nobody.rc
umount /mnt/x
# the reverse: data on B, realtime on A
/usr/sbin/mkfs.xfs -q -f -s size=4096 -d rtinherit=1 -r rtdev=$A $B > /out/mkfs-rt2.log 2>&1
mount -t xfs -o rtdev=$A $B /mnt/x || echo "rt2" >> /out/mount-failed
: > /mnt/x/rt
P rt2 /mnt/x/rt
umount /mnt/x
# XFS with 16 KiB blocks on A: a file, a reflinked copy, an extent size hint
/usr/sbin/mkfs.xfs -q -f -b size=16384 -m reflink=1 $A > /out/mkfs-lbs.log 2>&1
mount -t xfs $A /mnt/x || echo "lbs" >> /out/mount-failed
dd if=/dev/zero of=/mnt/x/f bs=65536 count=1 oflag=direct 2>/dev/null
/usr/sbin/xfs_io -f -c "reflink /mnt/x/f" /mnt/x/r > /dev/null
: > /mnt/x/e; /usr/sbin/xfs_io -c "extsize 65536" /mnt/x/e
/usr/sbin/xfs_io -c "extsize" /mnt/x/e > /out/extsize-e.txt
/usr/sbin/xfs_bmap -v /mnt/x/r > /out/bmap-r-before.txt
P lbs /mnt/x/f; P lbsref /mnt/x/r; P lbsext /mnt/x/e
dd if=/tmp/lbs-cow. of=/mnt/x/r bs=16384 seek=1 count=1 oflag=direct conv=notrunc 2>/dev/null
/usr/sbin/xfs_bmap -v /mnt/x/r > /out/bmap-r-after.txt
/usr/sbin/xfs_bmap -v /mnt/x/f > /out/bmap-f-after.txt
dd if=/mnt/x/f bs=16384 skip=1 count=1 2>/dev/null | od -An -tx1 | sort -u > /out/f-block1.txt
# unshare block 2 too, then 8 KiB O_DIRECT writes into blocks 1 and 2: below the file's direct I/O unit
dd if=/dev/zero of=/mnt/x/r bs=16384 seek=2 count=1 oflag=direct conv=notrunc 2>/dev/null
"$STATX_READER" /mnt/x/r > /out/statx-r.txt
sync
dd if=/tmp/lbs-sub. of=/mnt/x/r bs=8192 seek=3 count=1 oflag=direct conv=notrunc 2>/dev/null
dd if=/tmp/lbs-sub. of=/mnt/x/r bs=8192 seek=4 count=1 oflag=direct conv=notrunc 2>/dev/null
sync
/usr/sbin/xfs_bmap -v /mnt/x/r > /out/bmap-r-sub.txt
umount /mnt/x
# btrfs over A and B, then on A alone
/usr/sbin/mkfs.btrfs -f -d raid0 -m raid1 $A $B > /out/mkfs-btrfs2.log 2>&1
/usr/bin/btrfs device scan > /dev/null 2>&1
mount -t btrfs -o device=$B $A /mnt/x || echo "btrfs2" >> /out/mount-failed
: > /mnt/x/f
/usr/bin/btrfs filesystem show /mnt/x > /out/btrfs2-show.txt
P btrfs2 /mnt/x/f
umount /mnt/x
/usr/sbin/mkfs.btrfs -f $A > /out/mkfs-btrfs1.log 2>&1
/usr/bin/btrfs device scan > /dev/null 2>&1
mount -t btrfs $A /mnt/x || echo "btrfs1" >> /out/mount-failed
: > /mnt/x/f
/usr/bin/btrfs filesystem show /mnt/x > /out/btrfs1-show.txt
P btrfs1 /mnt/x/f
umount /mnt/x
# vfat on A
/usr/sbin/mkfs.fat $A > /out/mkfs-vfat.log 2>&1
mount -t vfat $A /mnt/x || echo "vfat" >> /out/mount-failed
: > /mnt/x/f
P vfat /mnt/x/f
umount /mnt/x
# ext4 on a loop device over a file on XFS on A
/usr/sbin/mkfs.xfs -q -f $A > /out/mkfs-loop.log 2>&1
mount -t xfs $A /mnt/x || echo "loop-xfs" >> /out/mount-failed
truncate -s 64M /mnt/x/img
L=$(/usr/sbin/losetup -f --show --direct-io=on /mnt/x/img)
/usr/sbin/mke2fs -q -F -t ext4 $L > /out/mkfs-loop-ext4.log 2>&1
mount -t ext4 $L /mnt/l || echo "loop-ext4" >> /out/mount-failed
: > /mnt/l/f
P loopfile /mnt/l/f; P loopdev $L
umount /mnt/l; /usr/sbin/losetup -d $L; umount /mnt/x
# ext4 with 16 KiB bigalloc clusters on A: a file with one block of its first cluster written, then all
/usr/sbin/mke2fs -q -F -t ext4 -O bigalloc -C 16384 $A > /out/mkfs-bigalloc.log 2>&1
mount -t ext4 $A /mnt/x || echo "bigalloc" >> /out/mount-failed
dd if=/tmp/ba-first of=/mnt/x/f bs=4096 count=1 oflag=direct 2>/dev/null
/usr/sbin/filefrag -v /mnt/x/f > /out/filefrag-partial.txt
P partial /mnt/x/f
dd if=/tmp/ba-page. of=/mnt/x/f bs=16384 count=1 oflag=direct conv=notrunc 2>/dev/null
/usr/sbin/filefrag -v /mnt/x/f > /out/filefrag-whole.txt
P whole /mnt/x/f
umount /mnt/x
# ext4 with 16 KiB bigalloc clusters and data=journal on A: no direct I/O
/usr/sbin/mke2fs -q -F -t ext4 -O bigalloc -C 16384 $A > /out/mkfs-journal.log 2>&1
mount -t ext4 -o data=journal $A /mnt/x || echo "journal" >> /out/mount-failed
grep " /mnt/x " /proc/self/mountinfo > /out/mountinfo-journal.txt
dd if=/dev/zero of=/mnt/x/f bs=65536 count=1 2>/dev/null; sync
for p in plain_direct rwf_atomic; do
    "$LCLOUDCTL" check --size 16K --path $p /mnt/x/f > /out/check-journal-$p.txt 2>&1; echo $? > /out/check-journal-$p.rc
done
"$LCLOUDCTL" probe --format json /mnt/x/f > /out/probe-journal.json
"$DIRECT_WRITE" /mnt/x/f 16384 32768 0 atomic > /out/atomic-journal.txt 2>&1; echo $? > /out/atomic-journal.rc
sync; umount /mnt/x
'''

ATOMIC = "atomic.nawun=3,atomic.nawupf=3,atomic.nabsn=7,atomic.nabspf=7"
DEVICES = ["--nvme", "lbs=4096,size=320M,serial=fpA,log=1," + ATOMIC, "--nvme", "lbs=512,size=320M,serial=fpB,log=1",
           "--module", "xfs", "--module", "btrfs", "--module", "vfat", "--module", "nls_cp437",
           "--module", "nls_ascii", "--module", "loop"]
for tool in ("/usr/sbin/mkfs.xfs", "/usr/sbin/mke2fs", "/usr/sbin/xfs_io", "/usr/sbin/xfs_bmap",
             "/usr/sbin/mkfs.btrfs", "/usr/bin/btrfs", "/usr/sbin/mkfs.fat", "/usr/sbin/losetup", "/usr/bin/setpriv",
             "/usr/sbin/filefrag"):
    DEVICES += ["--copy", tool]


def guest():
    for tool in ("/usr/sbin/mkfs.btrfs", "/usr/sbin/mkfs.fat"):
        if not os.path.exists(tool):
            raise AssertionError("%s is missing: scripts/install-deps --tests installs it" % tool)
    direct_write = os.path.realpath(os.environ["DIRECT_WRITE"])
    statx_reader = os.path.realpath(os.environ["STATX_READER"])
    run = run_guest_once(GUEST, DEVICES + ["--copy", direct_write, "--env", "DIRECT_WRITE=" + direct_write,
                                           "--copy", statx_reader, "--env", "STATX_READER=" + statx_reader],
                         lane="current")
    assert not run.exists("mount-failed"), run.text("mount-failed")
    return run


def probe(run, name):
    return run.json("probe-%s.json" % name)["probes"][0]


def plain(run, name):
    return probe(run, name)["verdict"]["plain_direct"]


def check_rc(run, name, size):
    return int(run.text("check-%s-%s.rc" % (name, size)))


def disks(p):
    return [l["name"] for l in p["layers"] if l["layer"] == "disk"]


def log_writes(run, disk, data):
    """(sector, nr_sectors) of every write in DISK's log whose data is DATA."""
    ss, entries = read_log(os.path.join(run.outdir, "logs", disk + ".log"))
    return ss, [(s, n) for s, n, flags, d in entries if d == data]


def log_writes_containing(run, disk, data):
    """(sector, nr_sectors) of every write in DISK's log whose data holds DATA, DATA-aligned."""
    ss, entries = read_log(os.path.join(run.outdir, "logs", disk + ".log"))
    return ss, [(s, n) for s, n, flags, d in entries
                if any(d[k:k + len(data)] == data for k in range(0, len(d), len(data)))]


def pattern(text, size):
    return ((text + "\n").encode() * size)[:size]


def bmap_first_block(text):
    """The first extent's first 512-byte block, as xfs_bmap -v prints it."""
    m = re.search(r"^\s*0: \[0\.\.\d+\]:\s+(\d+)\.\.", text, re.M)
    assert m, text
    return int(m.group(1))


def bmap_block_at(text, offset):
    """The 512-byte block holding file byte OFFSET, from xfs_bmap -v."""
    bb = offset // 512
    for m in re.finditer(r"^\s*\d+: \[(\d+)\.\.(\d+)\]:\s+(\d+)\.\.", text, re.M):
        first, last, block = (int(x) for x in m.groups())
        if first <= bb <= last:
            return block + bb - first
    raise AssertionError("no extent holds byte %d:\n%s" % (offset, text))


def test_xfs_realtime_file_follows_the_realtime_device():
    run = guest()
    assert "realtime" in run.text("stat-rt.txt") or re.search(r"xflags = 0x[0-9a-f]*[13579bdf] ", run.text("stat-rt.txt")), \
        run.text("stat-rt.txt")
    rt, data = probe(run, "rt"), probe(run, "data")
    fs = layer(rt, "filesystem")["facts"]
    assert fs["realtime"] is True and fs["mount_source"].endswith("n1"), fs
    (a,), (b,) = disks(data), disks(rt)
    assert a != b and fs["realtime_device"] == "/dev/" + b, (a, b, fs)
    # the independent reading: each file's 4 KiB pattern reached the device xfs_bmap names, at its block
    ss_b, on_b = log_writes(run, "nvme1-n1", pattern("rtfile..", 4096))
    ss_a, on_a = log_writes(run, "nvme0-n1", pattern("rtfile..", 4096))
    assert on_a == [] and on_b == [(bmap_first_block(run.text("bmap-rt.txt")) * 512 // ss_b, 4096 // ss_b)], \
        (on_a, on_b, run.text("bmap-rt.txt"))
    _, d_on_a = log_writes(run, "nvme0-n1", pattern("datafile", 4096))
    assert d_on_a == [(bmap_first_block(run.text("bmap-data.txt")) * 512 // ss_a, 4096 // ss_a)], d_on_a
    # B promises one 512-byte LBA: a 4 KiB write to the realtime file is not untorn
    assert plain(run, "rt")["max_untorn_bytes"] == 512, plain(run, "rt")
    assert check_rc(run, "rt", "4K") == 6, run.text("check-rt-4K.txt")
    # a new file in the rtinherit directory is realtime too
    assert disks(probe(run, "rtdir")) == [b] and check_rc(run, "rtdir", "4K") == 6
    # the data device's file: A's promise, capped at the 4 KiB block
    assert plain(run, "data")["max_untorn_bytes"] == 4096 and check_rc(run, "data", "4K") == 0
    # a caller who cannot read the file cannot read its flags: unknown, for that reason
    assert int(run.text("check-rt-nobody.rc")) == 8, run.text("check-rt-nobody.txt")
    assert "XFS flags could not be read" in run.text("check-rt-nobody.txt"), run.text("check-rt-nobody.txt")
    # the reverse: data on B, realtime on A
    rt2 = probe(run, "rt2")
    assert layer(rt2, "filesystem")["facts"]["realtime_device"] == "/dev/" + a and disks(rt2) == [a], rt2["layers"]
    assert plain(run, "rt2")["max_untorn_bytes"] == 4096


def test_xfs_16k_blocks_reflink_and_extent_hint():
    run = guest()
    assert run.text("extsize-e.txt").startswith("[65536]"), run.text("extsize-e.txt")
    for name in ("lbs", "lbsref", "lbsext"):
        assert plain(run, name)["max_untorn_bytes"] == 16384, (name, plain(run, name))
        assert layer(probe(run, name), "filesystem")["facts"]["block_size"] == 16384
        assert check_rc(run, name, "16K") == 0 and check_rc(run, name, "32K") == 6, name
    # the 16 KiB write to the shared block: one 16 KiB command at the copy-on-write block
    ss, on_a = log_writes(run, "nvme0-n1", pattern("lbs-cow.", 16384))
    after = bmap_block_at(run.text("bmap-r-after.txt"), 16384)
    assert on_a == [(after * 512 // ss, 16384 // ss)], (on_a, run.text("bmap-r-after.txt"))
    assert after != bmap_block_at(run.text("bmap-r-before.txt"), 16384)
    assert bmap_block_at(run.text("bmap-f-after.txt"), 16384) == bmap_block_at(run.text("bmap-r-before.txt"), 16384)
    assert set(run.text("f-block1.txt").split()) - {"*"} == {"00"}, run.text("f-block1.txt")
    # a file that shares blocks takes O_DIRECT writes only in 16 KiB units (the guest's own statx reader) ...
    statx = dict(line.split() for line in run.text("statx-r.txt").splitlines())
    assert int(statx["stx_dio_offset_align"]) == 16384, statx
    # ... an 8 KiB one goes through the page cache: both reach A inside one 32 KiB command
    ss, carrying = log_writes_containing(run, "nvme0-n1", pattern("lbs-sub.", 8192))
    assert len(carrying) == 1 and carrying[0][1] * ss == 32768, carrying
    assert carrying[0][0] == bmap_block_at(run.text("bmap-r-sub.txt"), 16384) * 512 // ss
    for name in ("lbs", "lbsref"):
        assert plain(run, name)["min_untorn_bytes"] == 16384 and check_rc(run, name, "8K") == 6, name
        assert "stx_dio_offset_align" in run.text("check-%s-8K.txt" % name)
    # a file that never shared a block takes 8 KiB direct
    assert check_rc(run, "lbsext", "8K") == 0, run.text("check-lbsext-8K.txt")


def test_btrfs_over_two_devices_is_not_untorn():
    run = guest()
    show = run.text("btrfs2-show.txt")
    devids = len(re.findall(r"^\s*devid\s", show, re.M))
    facts = layer(probe(run, "btrfs2"), "filesystem")["facts"]
    assert devids == 2 and facts["btrfs_devices"] == 2, (show, facts)
    assert plain(run, "btrfs2")["max_untorn_bytes"] == 0
    assert check_rc(run, "btrfs2", "4K") == 6, run.text("check-btrfs2-4K.txt")
    # one device: the probe follows all of it
    facts = layer(probe(run, "btrfs1"), "filesystem")["facts"]
    assert len(re.findall(r"^\s*devid\s", run.text("btrfs1-show.txt"), re.M)) == 1 == facts["btrfs_devices"]
    assert plain(run, "btrfs1")["max_untorn_bytes"] == 4096 and check_rc(run, "btrfs1", "4K") == 0


def test_vfat_is_unknown():
    run = guest()
    assert layer(probe(run, "vfat"), "filesystem")["name"] == "vfat"
    assert check_rc(run, "vfat", "4K") == 8, run.text("check-vfat-4K.txt")
    assert "does not know how vfat" in run.text("check-vfat-4K.txt")


def test_loop_over_a_promised_device():
    run = guest()
    for name in ("loopfile", "loopdev"):
        p = probe(run, name)
        loop = next(l for l in p["layers"] if l["layer"] == "loop")
        assert loop["facts"]["loop_dio"] is True and loop["backing_file"]["target"] == "regular", loop
        assert plain(run, name)["max_untorn_bytes"] == 4096 and check_rc(run, name, "4K") == 0, name
        assert check_rc(run, name, "8K") == 6 and check_rc(run, name, "16K") == 6, name
        assert p["verdict"]["rwf_atomic"]["max_untorn_bytes"] == 0, (name, p["verdict"]["rwf_atomic"])



def filefrag_extents(text):
    """(logical first block, last block) of each extent filefrag -v lists."""
    return [(int(a), int(b)) for a, b in re.findall(r"^\s*\d+:\s+(\d+)\.\.\s*(\d+):", text, re.M)]


def test_ext4_bigalloc_cluster_with_one_block_written():
    run = guest()
    # filefrag: one block of the 16 KiB cluster mapped, then the whole cluster
    assert filefrag_extents(run.text("filefrag-partial.txt")) == [(0, 0)], run.text("filefrag-partial.txt")
    assert filefrag_extents(run.text("filefrag-whole.txt")) == [(0, 3)], run.text("filefrag-whole.txt")
    partial = layer(probe(run, "partial"), "filesystem")["facts"]
    assert partial["cluster_size"] == 16384 and partial["extent_edge_alignment"] == 4096, partial
    assert plain(run, "partial")["max_untorn_bytes"] == 4096 and check_rc(run, "partial", "16K") == 6
    assert "meet at byte 4096" in run.text("check-partial-16K.txt"), run.text("check-partial-16K.txt")
    # the write log: that 16 KiB write reached A as two commands (in either order), 4 KiB over the
    # written block and 12 KiB after it
    page = pattern("ba-page.", 16384)
    ss, entries = read_log(os.path.join(run.outdir, "logs", "nvme0-n1.log"))
    pieces = sorted((s, n, k) for s, n, flags, d in entries for k in range(0, 16384, ss)
                    if d and d == page[k:k + len(d)])
    assert ss == 4096 and [(n, k) for s, n, k in pieces] == [(1, 0), (3, 4096)], pieces
    assert pieces[1][0] == pieces[0][0] + 1, pieces
    whole = layer(probe(run, "whole"), "filesystem")["facts"]
    assert whole["extent_edge_alignment"] % 16384 == 0, whole
    assert plain(run, "whole")["max_untorn_bytes"] == 16384 and check_rc(run, "whole", "16K") == 0
    assert any("rests on the file staying so" in r["reason"] for r in plain(run, "whole")["reasons"])


def test_ext4_data_journal_takes_no_direct_io():
    run = guest()
    assert "data=journal" in run.text("mountinfo-journal.txt"), run.text("mountinfo-journal.txt")
    fs = layer(probe(run, "journal"), "filesystem")["facts"]
    # statx: no direct I/O, yet atomic limits
    assert fs["stx_dio_offset_align"] == 0 and fs["stx_atomic_write_unit_max"] >= 16384, fs
    for path in ("plain_direct", "rwf_atomic"):
        assert run.text("check-journal-%s.rc" % path).strip() == "6", run.text("check-journal-%s.txt" % path)
        assert "no direct I/O" in run.text("check-journal-%s.txt" % path)
    # the kernel accepts the RWF_ATOMIC write, and the journal takes it to the device 4 KiB by 4 KiB
    assert run.text("atomic-journal.rc").strip() == "0", run.text("atomic-journal.txt")
    ss, entries = read_log(os.path.join(run.outdir, "logs", "nvme0-n1.log"))
    block = b"\x5a" * 4096
    pieces = [(s, n) for s, n, flags, d in entries if block in d]
    assert ss == 4096 and len([1 for s, n in pieces if n == 1]) >= 4, pieces


if __name__ == "__main__":
    main([test_xfs_realtime_file_follows_the_realtime_device, test_xfs_16k_blocks_reflink_and_extent_hint,
          test_btrfs_over_two_devices_is_not_untorn, test_vfat_is_unknown,
          test_loop_over_a_promised_device, test_ext4_bigalloc_cluster_with_one_block_written,
          test_ext4_data_journal_takes_no_direct_io])
