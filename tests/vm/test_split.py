#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""plain_direct against what the block layer really does, in a Debian 12
guest (Linux 6.1, QEMU 7.2), with a Google-PD-shaped SCSI disk (512-byte
logical, 16 KiB physical blocks: Google promises writes inside one physical
block), with queue/nomerges 2 (the block layer merges no writes, so the
rules below decide alone).

  - Behind a virtio-scsi controller with virtqueue_size=4 the kernel takes
    at most 2 segments per request (queue/max_segments, read in the guest):
    a 16 KiB write from a buffer contiguous only per 4 KiB page can reach the
    disk as two requests. The independent reading is the disk's own request
    count (/sys/block/sdX/stat, writes completed) around real writes made
    by 'lcloudctl write' and by the test's own direct_write: O_DIRECT takes
    a buffer at any multiple of dma_alignment + 1 (4 bytes here), and one
    that starts 512 bytes into a page makes an 8 KiB write touch three pages,
    so it arrives as two requests. The verdict must say at most 4 KiB, naming
    max_segments, and a 4 KiB write must always arrive as one request.
  - On a normal controller the whole disk, a partition at sector 20488
    (4 KiB past a 16 KiB boundary) and a dm-linear device shifted by 8
    sectors must follow one rule: 4 KiB writes aligned in the target stay
    inside a physical block (untorn), 16 KiB ones straddle two (not),
    except on the whole disk, where both stay inside."""
import os
import subprocess
import tempfile

from vmlib import run_guest
from hostlib import main

SEGMENTS = r'''
set -u
d=$LCVM_SCSI0; n=${d##*/}
echo 2 > /sys/block/$n/queue/nomerges  # merges off: the split rules alone decide
cat /sys/block/$n/queue/max_segments > /out/max_segments
"$LCLOUDCTL" probe --format json $d > /out/probe.json
cat /sys/block/$n/queue/dma_alignment > /out/dma_alignment
for s in 4K 8K 16K; do
    "$LCLOUDCTL" check --size $s --path plain_direct $d > /out/check-$s.txt; echo $? > /out/check-$s.rc
done
writes() { set -- $(cat /sys/block/$n/stat); echo $5; }
for s in 4096 8192; do
    before=$(writes)
    for i in 0 1 2 3 4 5 6 7; do
        "$DIRECT_WRITE" $d $s $((i * 65536 + 4194304)) 512 >> /out/shifted-$s.log 2>&1 || echo "write failed: $?" >> /out/shifted-$s.log
    done
    echo $(( $(writes) - before )) > /out/shifted-requests-$s
done
for s in 8K 16K; do
    before=$(writes)
    for i in 0 1 2 3 4 5 6 7; do
        "$LCLOUDCTL" write $d --force --offset $((i * 65536 + 1048576)) --length $s --pattern 0x5$i \
            >> /out/write-$s.log 2>&1 || echo "write failed: $?" >> /out/write-$s.log
    done
    echo $(( $(writes) - before )) > /out/requests-$s
done
'''

PLACEMENT = r'''
set -u
d=$LCVM_SCSI0; n=${d##*/}
echo 2 > /sys/block/$n/queue/nomerges
modprobe dm_mod
sectors=$(cat /sys/block/$n/size)
dmsetup create shifted --table "0 $((sectors - 64)) linear $d 8" 2> /out/dmsetup.err || echo failed > /out/dmsetup.err
dm=$(dmsetup info -c --noheadings -o blkdevname shifted)
[ -e /dev/$dm ] || mknod /dev/$dm b $(dmsetup info -c --noheadings -o major shifted) \
    $(dmsetup info -c --noheadings -o minor shifted)
dmsetup table shifted > /out/dm.table
for t in $n ${n}1 $dm; do
    "$LCLOUDCTL" probe --format json /dev/$t > /out/$t.json
    for s in 4K 16K; do
        "$LCLOUDCTL" check --size $s --path plain_direct /dev/$t > /out/$t-$s.txt; echo $? > /out/$t-$s.rc
    done
    echo $t >> /out/targets
done
cat /sys/block/$n/${n}1/start > /out/p1.start
'''


def test_segment_limit_matches_request_count():
    direct_write = os.path.realpath(os.environ["DIRECT_WRITE"])
    run = run_guest(SEGMENTS, ["--scsi", "lbs=512,pbs=16384,vendor=Google,product=PersistentDisk,size=16M,"
                               "hba.virtqueue_size=4", "--copy", direct_write,
                               "--env", "DIRECT_WRITE=" + direct_write])
    segs = int(run.text("max_segments"))
    assert segs == 2, "virtqueue_size=4 should give 2 segments, the guest says %d" % segs
    assert (int(run.text("dma_alignment")) + 1) <= 512, "buffers 512 bytes into a page must be accepted"
    p = run.json("probe.json")["probes"][0]
    disk = [l for l in p["layers"] if l["layer"] == "disk"][0]
    assert disk["facts"]["max_segments"] == segs, disk["facts"]
    pd = p["verdict"]["plain_direct"]
    assert pd["max_untorn_bytes"] == 4096, pd
    assert any(r["evidence"] == "sysfs:queue/max_segments" for r in pd["reasons"]), pd["reasons"]
    assert run.text("check-16K.rc").strip() == "6" and "max_segments" in run.text("check-16K.txt")
    assert run.text("check-8K.rc").strip() == "6" and "max_segments" in run.text("check-8K.txt")
    assert run.text("check-4K.rc").strip() == "0", run.text("check-4K.txt")
    # the disk's own count: 8 writes of 8 KiB from page-aligned buffers are 8 requests; 8 of 16 KiB
    # are more (some split)
    assert "failed" not in run.text("write-8K.log") + run.text("write-16K.log"), run.text("write-16K.log")
    assert int(run.text("requests-8K")) == 8, run.text("requests-8K")
    assert int(run.text("requests-16K")) > 8, "no 16 KiB write was split: %s" % run.text("requests-16K")
    # from a buffer 512 bytes into a page: 4 KiB writes stay whole, 8 KiB ones are split
    for s in ("4096", "8192"):
        assert "failed" not in run.text("shifted-%s.log" % s), run.text("shifted-%s.log" % s)
    assert int(run.text("shifted-requests-4096")) == 8, run.text("shifted-requests-4096")
    assert int(run.text("shifted-requests-8192")) > 8, "no shifted 8 KiB write was split: %s" % \
        run.text("shifted-requests-8192")


def test_partition_and_dm_follow_the_disk_rule():
    tmp = tempfile.mkdtemp(prefix="lcloud-vm-img-")
    img = os.path.join(tmp, "gpd.img")
    with open(img, "wb") as f:
        f.truncate(32 << 20)
    subprocess.run(["sfdisk", "-q", img], input="label: dos\nstart=20488, size=20480, type=83\n", text=True,
                   check=True, capture_output=True)
    try:
        run = run_guest(PLACEMENT, ["--scsi", "image=%s,lbs=512,pbs=16384,vendor=Google,product=PersistentDisk" % img,
                                    "--module", "dm_mod", "--copy", "/usr/sbin/dmsetup"])
    finally:
        os.unlink(img)
        os.rmdir(tmp)
    assert int(run.text("p1.start")) == 20488
    assert "linear" in run.text("dm.table") and run.text("dm.table").split()[-1] == "8", run.text("dm.table")
    disk, part, dm = run.text("targets").split()
    expect = {disk: ("0", "0"), part: ("0", "6"), dm: ("0", "6")}
    for t, (rc4, rc16) in expect.items():
        assert run.text("%s-4K.rc" % t).strip() == rc4, (t, run.text("%s-4K.txt" % t))
        assert run.text("%s-16K.rc" % t).strip() == rc16, (t, run.text("%s-16K.txt" % t))
    # the reason for the refusal names the size that does hold, never "none"
    for t in (part, dm):
        v = run.json(t + ".json")["probes"][0]["verdict"]["plain_direct"]
        assert v["max_untorn_bytes"] == 4096, (t, v)
        assert "4096 bytes" in run.text("%s-16K.txt" % t), run.text("%s-16K.txt" % t)
    assert "10489856" in run.text("%s-16K.txt" % part)


if __name__ == "__main__":
    main([test_segment_limit_matches_request_count, test_partition_and_dm_follow_the_disk_rule])
