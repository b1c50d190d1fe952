#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Google's 16 KiB promise on a disk whose physical blocks do not start at
LBA 0, in a current-lane guest (QEMU 11, Linux 7).

scsi_debug answers INQUIRY as Google / PersistentDisk with 16 KiB physical
blocks and a lowest aligned LBA (READ CAPACITY(16)) of 1 (512-byte LBAs)
or 1 (4 KiB LBAs): its physical blocks start at byte 512 or 4096, so a
16 KiB write at byte 0 covers parts of two physical blocks. Google's
promise is per physical block: such a disk is not the one it describes,
and no size above one block may be called untorn on plain_direct - as
root (READ CAPACITY) and as nobody, who may not send SG_IO (the kernel's
alignment_offset). The
independent reading is sg_readcap's lowest aligned LBA and the guest's
/sys/block/sdX/alignment_offset. The same disk with a lowest aligned LBA
of 0 keeps the promise (16 KiB untorn), so the test sees the difference
the offset makes, not a lost promise."""
from vmlib import layer, run_guest_once
from hostlib import main

GUEST = r'''
set -u
rmmod scsi_debug; sleep 1
i=0
for params in "sector_size=512 physblk_exp=5 lowest_aligned=1" "sector_size=4096 physblk_exp=2 lowest_aligned=1" \
              "sector_size=512 physblk_exp=5 lowest_aligned=0"; do
    i=$((i + 1))
    modprobe scsi_debug inq_vendor=Google inq_product=PersistentDisk dev_size_mb=16 $params || echo failed > /out/modprobe-$i
    sleep 1
    n=$(ls /sys/block | grep '^sd' | head -1)
    echo 2 > /sys/block/$n/queue/nomerges  # merges off: the promise alone decides
    chmod 0600 /dev/$n  # nobody gets no SG_IO: INQUIRY from sysfs, no READ CAPACITY
    sg_readcap -l /dev/$n > /out/readcap-$i.txt 2>&1
    cat /sys/block/$n/alignment_offset > /out/alignment_offset-$i
    cat /sys/block/$n/queue/physical_block_size > /out/pbs-$i
    "$LCLOUDCTL" probe --format json /dev/$n > /out/probe-$i.json
    /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups "$LCLOUDCTL" probe --format json /dev/$n > /out/probe-$i-nobody.json
    "$LCLOUDCTL" check --size 16K --path plain_direct /dev/$n > /out/check-$i.txt; echo $? > /out/check-$i.rc
    rmmod scsi_debug; sleep 1
done
'''

DEVICES = ["--scsi-debug", "dev_size_mb=16", "--copy", "/usr/bin/setpriv"]


def readcap_lowest(text):
    for line in text.splitlines():
        if "Lowest aligned LBA=" in line:
            return int(line.split("=")[1])
    raise AssertionError("sg_readcap gave no lowest aligned LBA:\n" + text)


def test_offset_physical_blocks_get_no_promise():
    run = run_guest_once(GUEST, DEVICES, lane="current")
    for i, lbs in ((1, 512), (2, 4096)):
        assert not run.exists("modprobe-%d" % i)
        assert int(run.text("pbs-%d" % i)) == 16384
        # the independent reading: physical blocks start one LBA in
        assert readcap_lowest(run.text("readcap-%d.txt" % i)) == 1
        assert int(run.text("alignment_offset-%d" % i)) == lbs
        assert run.text("check-%d.rc" % i).strip() == "6", run.text("check-%d.txt" % i)
        for who in ("", "-nobody"):
            p = run.json("probe-%d%s.json" % (i, who))["probes"][0]
            pd = p["verdict"]["plain_direct"]
            assert pd["max_untorn_bytes"] < 16384, (i, who, pd)
            assert any(n["code"] == "cloud-gcp-pd-offset" for n in p["notes"]), (i, who, p["notes"])
            cloud = layer(p, "cloud")
            assert "promise_untorn_max_bytes" not in cloud["facts"], (i, who, cloud["facts"])
            assert "provider's documented promise does not apply" in str(pd["reasons"]), (i, who, pd)
        # as nobody READ CAPACITY is out of reach: the kernel's alignment_offset must be what decided
        p = run.json("probe-%d-nobody.json" % i)["probes"][0]
        assert layer(p, "disk")["facts"]["alignment_offset"] == lbs
        assert layer(p, "scsi")["facts"].get("lowest_aligned_bytes") is None, layer(p, "scsi")["facts"]
        assert any("alignment_offset" in n["message"] for n in p["notes"] if n["code"] == "cloud-gcp-pd-offset")


def test_aligned_physical_blocks_keep_the_promise():
    run = run_guest_once(GUEST, DEVICES, lane="current")
    assert readcap_lowest(run.text("readcap-3.txt")) == 0
    assert int(run.text("alignment_offset-3")) == 0
    assert run.text("check-3.rc").strip() == "0", run.text("check-3.txt")
    for who in ("", "-nobody"):
        p = run.json("probe-3%s.json" % who)["probes"][0]
        assert p["verdict"]["plain_direct"]["max_untorn_bytes"] == 16384, p["verdict"]["plain_direct"]


if __name__ == "__main__":
    main([test_offset_physical_blocks_get_no_promise, test_aligned_physical_blocks_keep_the_promise])
