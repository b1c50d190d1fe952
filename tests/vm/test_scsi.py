#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The SCSI layer against real SCSI disks driven by Linux 6.1's sd driver in a
QEMU 7.2 guest: virtio-scsi disks of several geometries (one shaped like a
Google Persistent Disk with 16 KiB physical blocks) and a scsi_debug disk
with a lowest aligned LBA of 1. Every Block Limits field lcloudctl reports
must equal sg_vpd's decoding in the same guest; INQUIRY strings equal
sg_inq's; READ CAPACITY(16) equals sg_readcap's; sizes equal the guest's
sysfs."""
import re

from vmlib import layer, run_guest_once
from hostlib import main

GUEST = r'''
set -u
for d in /sys/block/sd*; do
    n=${d##*/}
    "$LCLOUDCTL" probe --format json /dev/$n > /out/probe-$n.json || echo "probe $n failed" >&2
    sg_vpd -p bl /dev/$n > /out/bl-$n.txt 2>&1
    sg_inq /dev/$n > /out/inq-$n.txt 2>&1
    sg_readcap -l /dev/$n > /out/readcap-$n.txt 2>&1
    cat $d/queue/logical_block_size > /out/lbs-$n
    cat $d/queue/physical_block_size > /out/pbs-$n
    echo $n >> /out/disks
done
'''

DEVICES = [
    "--scsi", "lbs=512,pbs=4096,size=32M,vendor=LCLOUD,product=Geo512e",
    "--scsi", "lbs=4096,pbs=4096,size=32M,vendor=LCLOUD,product=Geo4Kn",
    "--scsi", "lbs=512,pbs=16384,size=32M,vendor=Google,product=PersistentDisk",
    "--scsi", "lbs=4096,pbs=16384,size=32M,vendor=LCLOUD,product=Geo4K16K",
    "--scsi-debug", "dev_size_mb=16 sector_size=512 physblk_exp=3 lowest_aligned=1",
]

# sg_vpd -p bl labels and the JSON keys (T10 names in snake case) they hold
BL_LABELS = {
    "Maximum compare and write length": "max_compare_and_write_length",
    "Optimal transfer length granularity": "optimal_transfer_length_granularity",
    "Maximum transfer length": "max_transfer_length",
    "Optimal transfer length": "optimal_transfer_length",
    "Maximum prefetch transfer length": "max_prefetch_length",
    "Maximum unmap LBA count": "max_unmap_lba_count",
    "Maximum unmap block descriptor count": "max_unmap_block_descriptor_count",
    "Optimal unmap granularity": "optimal_unmap_granularity",
    "Unmap granularity alignment": "unmap_granularity_alignment",
    "Maximum write same length": "max_write_same_length",
    "Maximum atomic transfer length": "max_atomic_transfer_length",
    "Atomic alignment": "atomic_alignment",
    "Atomic transfer length granularity": "atomic_transfer_length_granularity",
    "Maximum atomic transfer length with atomic boundary": "max_atomic_transfer_length_with_atomic_boundary",
    "Maximum atomic boundary size": "max_atomic_boundary_size",
}

def guest():
    return run_guest_once(GUEST, DEVICES)


def sg_vpd_block_limits(text):
    values = {}
    for line in text.splitlines():
        m = re.match(r"\s*([A-Za-z ()]+?)(?: \([A-Z]+\))?: (0x[0-9a-fA-F]+|\d+)", line)
        if m and m.group(1) in BL_LABELS:
            values[BL_LABELS[m.group(1)]] = int(m.group(2), 0)
    return values


def sg_inq_strings(text):
    out = {}
    for label, key in (("Vendor identification", "vendor"), ("Product identification", "product"),
                       ("Product revision level", "revision")):
        m = re.search(r"%s: (.*)" % label, text)
        out[key] = m.group(1).rstrip() if m else None
    return out


def test_block_limits_equal_sg_vpd():
    run = guest()
    disks = run.text("disks").split()
    assert len(disks) == 5, disks
    for n in disks:
        probe = run.json("probe-%s.json" % n)["probes"][0]
        scsi = layer(probe, "scsi", n)
        assert scsi["facts"]["transport"] == "sg_io"
        want = sg_vpd_block_limits(run.text("bl-%s.txt" % n))
        assert len(want) >= 12, (n, run.text("bl-%s.txt" % n))
        for key, value in want.items():
            assert scsi["facts"][key] == value, (n, key, scsi["facts"][key], value)
        for key, value in sg_inq_strings(run.text("inq-%s.txt" % n)).items():
            assert scsi["facts"][key] == value, (n, key, scsi["facts"][key], value)


def test_sizes_equal_sysfs_and_sg_readcap():
    run = guest()
    for n in run.text("disks").split():
        probe = run.json("probe-%s.json" % n)["probes"][0]
        scsi = layer(probe, "scsi", n)
        readcap = run.text("readcap-%s.txt" % n)
        assert scsi["facts"]["logical_block_length"] == int(run.text("lbs-%s" % n))
        assert scsi["facts"]["physical_block_bytes"] == int(run.text("pbs-%s" % n))
        exp = int(re.search(r"Logical blocks per physical block exponent=(\d+)", readcap).group(1))
        low = int(re.search(r"Lowest aligned LBA=(\d+)", readcap).group(1))
        assert scsi["facts"]["physical_block_exponent"] == exp
        assert scsi["facts"]["lowest_aligned_lba"] == low
        # QEMU and scsi_debug (6.1) state no atomic transfer length: WRITE ATOMIC(16) not usable
        assert scsi["facts"]["max_atomic_transfer_bytes"] == 0
        assert scsi["facts"]["write_atomic16_usable"] is False
        # 6.1 predates atomic queue limits: not provided
        assert layer(probe, "disk", n)["facts"]["atomic_write_unit_max_bytes"] is None


def test_google_pd_promise():
    run = guest()
    seen = 0
    for n in run.text("disks").split():
        probe = run.json("probe-%s.json" % n)["probes"][0]
        scsi = layer(probe, "scsi", n)
        clouds = [l for l in probe["layers"] if l["layer"] == "cloud"]
        if scsi["facts"]["vendor"] == "Google":
            seen += 1
            assert len(clouds) == 1
            cloud = clouds[0]
            # Google: a 16 KB physical block size PD provides 16 KB write atomicity
            assert cloud["facts"]["provider"] == "gcp"
            assert cloud["facts"]["promise_untorn_max_bytes"] == 16384
            assert cloud["sources"]["promise_untorn_max_bytes"] == "cloud:gcp-pd-16k"
            assert "O_DIRECT" in cloud["facts"]["promise_conditions"]
        else:
            assert clouds == [], n
    assert seen == 1


if __name__ == "__main__":
    main([test_block_limits_equal_sg_vpd, test_sizes_equal_sysfs_and_sg_readcap, test_google_pd_promise])
