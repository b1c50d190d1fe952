#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current. A file's own extents against what the device receives, on
an NVMe namespace that keeps 16 KiB whole (NAWUPF 16 KiB, queue/nomerges 2):

  - ext4 with 16 KiB bigalloc clusters: a file whose first 12 KiB were
    written alone has an extent edge at 12 KiB, inside its first page. A
    16 KiB O_DIRECT write over it is mapped in two pieces; the namespace's
    own request count (/sys/block/*/stat) shows two writes, so `check` must
    say no for that file, naming the edge, and `advise` on a directory with
    such a data file must keep the doublewrite buffer. A file written in
    whole pages gets one request per page and an untorn verdict. After the
    16 KiB write ext4 merges the two extents: the same file is then whole,
    and advise turns the buffer off, giving the udev rule that keeps
    queue/nomerges at 2 for this namespace (by the WWID the guest reads).
  - XFS with 16 KiB blocks: a 4 KiB write allocates a whole block, so the
    file has no edge inside a page and a 16 KiB write is one request.

The test's own reading of the extents is filefrag's (FIEMAP, e2fsprogs)."""
import os
import re

from vmlib import run_guest
from hostlib import main

ATOMIC = "atomic.nawun=3,atomic.nawupf=3,atomic.nabsn=7,atomic.nabspf=7"

SCRIPT = r'''
set -u
writes() { set -- $(cat /sys/block/$1/stat); echo $5; }
one_write() { # DEV-NAME FILE SIZE OFFSET OUT: one O_DIRECT write, and how many requests the disk saw
    sync  # the journal's pending commits land before the count, not inside it
    before=$(writes $1)
    "$DIRECT_WRITE" $2 $3 $4 0 >> /out/$5.log 2>&1 || echo "write failed: $?" >> /out/$5.log
    echo $(( $(writes $1) - before )) > /out/$5.requests
}
check() { # NAME FILE
    "$LCLOUDCTL" check --size 16K --path plain_direct $2 > /out/$1.check 2>&1; echo $? > /out/$1.rc
    "$LCLOUDCTL" probe --format json $2 > /out/$1.json 2>/dev/null
    filefrag -b4096 -e $2 > /out/$1.filefrag 2>&1
}
e=${LCVM_NVME0}n1; en=${e##*/}
x=${LCVM_NVME1}n1; xn=${x##*/}
modprobe xfs
echo 2 > /sys/block/$en/queue/nomerges; echo 2 > /sys/block/$xn/queue/nomerges
# inode tables zeroed now: else ext4lazyinit writes them at a random moment after mount, into a count
/usr/sbin/mke2fs -q -F -t ext4 -O bigalloc -C 16384 -E lazy_itable_init=0 $e > /out/mkfs-e.log 2>&1
/usr/sbin/mkfs.xfs -q -f -b size=16384 $x > /out/mkfs-x.log 2>&1
mkdir -p /mnt/e /mnt/x && mount -t ext4 $e /mnt/e && mount -t xfs $x /mnt/x || echo mount > /out/fail
mkdir -p /mnt/e/data/db
# a 12 KiB start: the extent ends inside the first page
: > /mnt/e/data/db/t.ibd; "$DIRECT_WRITE" /mnt/e/data/db/t.ibd 12288 0 0 > /out/prep.log 2>&1 || echo prep >> /out/fail
: > /mnt/e/whole; "$DIRECT_WRITE" /mnt/e/whole 65536 0 0 >> /out/prep.log 2>&1 || echo prep >> /out/fail
# MySQL 8 names its undo tablespaces undo_001
mkdir -p /mnt/e/mysql8
: > /mnt/e/mysql8/undo_001; "$DIRECT_WRITE" /mnt/e/mysql8/undo_001 12288 0 0 >> /out/prep.log 2>&1 || echo prep >> /out/fail
: > /mnt/x/small; "$DIRECT_WRITE" /mnt/x/small 4096 0 0 >> /out/prep.log 2>&1 || echo prep >> /out/fail
sync
check split /mnt/e/data/db/t.ibd
check whole /mnt/e/whole
check xsmall /mnt/x/small
"$LCLOUDCTL" advise --db mariadb /mnt/e/data --format json > /out/advise-split.json 2>&1; echo $? > /out/advise-split.rc
"$LCLOUDCTL" advise --db mysql /mnt/e/mysql8 --format json > /out/advise-mysql8.json 2>&1
one_write $en /mnt/e/data/db/t.ibd 16384 0 split-write
one_write $en /mnt/e/whole 16384 16384 whole-write
one_write $xn /mnt/x/small 16384 0 xsmall-write
sync
check after /mnt/e/data/db/t.ibd
"$LCLOUDCTL" advise --db mariadb /mnt/e/data --format json > /out/advise-after.json 2>&1; echo $? > /out/advise-after.rc
cat /sys/block/$en/wwid > /out/wwid-e
echo 0 > /sys/block/$en/queue/nomerges
"$LCLOUDCTL" advise --db mariadb /mnt/e/data --format json > /out/advise-merging.json 2>&1; echo $? > /out/advise-merging.rc
umount /mnt/e /mnt/x
'''


def edges(filefrag):
    """Every extent start and end (bytes) in filefrag -b4096 -e output."""
    out = []
    for m in re.finditer(r"^\s*\d+:\s+(\d+)\.\.\s*(\d+):", filefrag, re.M):
        out += [int(m.group(1)) * 4096, (int(m.group(2)) + 1) * 4096]
    return out


def test_extent_edges_split_page_writes():
    direct_write = os.path.realpath(os.environ["DIRECT_WRITE"])
    run = run_guest(SCRIPT, ["--nvme", "lbs=4096,size=64M," + ATOMIC, "--nvme", "lbs=4096,size=320M," + ATOMIC,
                             "--module", "xfs", "--copy", "/usr/sbin/mkfs.xfs", "--copy", "/usr/sbin/mke2fs",
                             "--copy", "/usr/sbin/filefrag", "--copy", direct_write,
                             "--env", "DIRECT_WRITE=" + direct_write], lane="current")
    assert not run.exists("fail"), run.text("fail") + run.text("prep.log")
    for name in ("split-write", "whole-write", "xsmall-write"):
        assert "failed" not in run.text(name + ".log"), run.text(name + ".log")

    # the independent reading: filefrag's extents, and the disk's request count
    assert 12288 in edges(run.text("split.filefrag")), run.text("split.filefrag")
    assert all(e % 16384 == 0 for e in edges(run.text("whole.filefrag"))), run.text("whole.filefrag")
    assert all(e % 16384 == 0 for e in edges(run.text("xsmall.filefrag"))), run.text("xsmall.filefrag")
    assert int(run.text("split-write.requests")) == 2, run.text("split-write.requests")
    assert int(run.text("whole-write.requests")) == 1, run.text("whole-write.requests")
    assert int(run.text("xsmall-write.requests")) == 1, run.text("xsmall-write.requests")

    # the verdict: no on the split file, naming the edge; untorn where every page is in one extent
    fs = [l for l in run.json("split.json")["probes"][0]["layers"] if l["layer"] == "filesystem"][0]["facts"]
    assert fs["extent_edge_alignment"] == 4096 and fs["extent_edge_worst"] == 12288, fs
    assert run.text("split.rc").strip() == "6", run.text("split.check")
    assert "12288" in run.text("split.check") and "extent" in run.text("split.check"), run.text("split.check")
    assert run.text("whole.rc").strip() == "0", run.text("whole.check")
    assert run.text("xsmall.rc").strip() == "0", run.text("xsmall.check")

    # advise on the directory: the existing data file keeps the buffer on
    split = run.json("advise-split.json")
    assert run.text("advise-split.rc").strip() == "0" and split["settings"]["innodb_doublewrite"] == "ON", split
    assert any("t.ibd" in line and "12288" in line for line in split["advice"]), split["advice"]
    mysql8 = run.json("advise-mysql8.json")
    assert mysql8["settings"]["innodb_doublewrite"] == "ON", mysql8
    assert any("undo_001" in line for line in mysql8["advice"]), mysql8["advice"]

    # the 16 KiB write filled the page: ext4 merged the extents, the file is whole now
    assert all(e % 16384 == 0 for e in edges(run.text("after.filefrag"))), run.text("after.filefrag")
    assert run.text("after.rc").strip() == "0", run.text("after.check")
    after = run.json("advise-after.json")
    assert after["settings"]["innodb_doublewrite"] == "OFF", after
    assert any("keep every 16384-byte page in one extent" in line for line in after["advice"]), after["advice"]
    # it rests on nomerges 2: the udev rule that keeps it names this namespace by the guest's own wwid
    rule = 'ATTRS{wwid}=="%s", ATTR{queue/nomerges}="2"' % run.text("wwid-e").strip()
    assert any(rule in line for line in after["advice"]), (rule, after["advice"])
    # with merges on again the buffer stays on, and the rule is offered as the remedy
    merging = run.json("advise-merging.json")
    assert merging["settings"]["innodb_doublewrite"] == "ON", merging
    assert any(rule in line and "run advise again" in line for line in merging["advice"]), merging["advice"]


if __name__ == "__main__":
    main([test_extent_edges_split_page_writes])
