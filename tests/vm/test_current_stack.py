#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7), one boot. Atomic devices and the
stacks Linux builds on them, each compared with a reading the project did
not write:
  - scsi_debug with atomic_wr=1 and chosen atomic parameters: every Block
    Limits field lcloudctl reports equals sg_vpd -p bl, the disk layer's
    atomic limits equal sysfs;
  - md raid0 (16 KiB chunks) over two NVMe namespaces with NAWUPF 16 KiB and
    a 32 KiB boundary: level, chunk and data offsets equal mdadm's, the
    stacked atomic limits equal sysfs;
  - then md raid1 and raid10 and dm-striped (16 KiB chunks) over the same
    two namespaces, one after the other: limits equal sysfs;
  - dm-linear over such a namespace, once at a 32 KiB-aligned start and once
    shifted by 4 KiB: Linux keeps the atomic limits for the first and drops
    them for the second; lcloudctl's table and limits equal dmsetup's/sysfs.
The kernel's answers are pinned too. Verdict: only rwf_atomic's maximum is
asserted (= the kernel's atomic_write_unit_max_bytes)."""
import re

from vmlib import layer, run_guest_once
from hostlib import main

GUEST = r'''
set -u
q() { # device -> its queue limits, one "name value" a line
    for f in logical_block_size atomic_write_unit_min_bytes atomic_write_unit_max_bytes \
             atomic_write_max_bytes atomic_write_boundary_bytes; do
        echo "$f $(cat /sys/block/$1/queue/$f)"
    done
}
sd=${LCVM_SCSI_DEBUG0#/dev/}
"$LCLOUDCTL" probe --format json $LCVM_SCSI_DEBUG0 > /out/probe-sd.json
sg_vpd -p bl $LCVM_SCSI_DEBUG0 > /out/vpd-bl-sd.txt
q $sd > /out/queue-sd

mdadm --create /dev/md0 --run --level=0 --chunk=16 --raid-devices=2 ${LCVM_NVME0}n1 ${LCVM_NVME1}n1 \
    > /out/mdadm-create.txt 2>&1
"$LCLOUDCTL" probe --format json /dev/md0 > /out/probe-md.json
mdadm --detail /dev/md0 > /out/md-detail.txt
for m in ${LCVM_NVME0}n1 ${LCVM_NVME1}n1; do
    echo "${m#/dev/} $(mdadm --examine $m | sed -n 's/.*Data Offset : \([0-9]*\) sectors.*/\1/p')"
done > /out/md-offsets
cat /sys/block/md0/md/chunk_size > /out/md-chunk
q md0 > /out/queue-md
mdadm --stop /dev/md0 >/dev/null 2>&1
for level in 1 10; do
    chunk=""
    [ $level = 10 ] && chunk=--chunk=16
    mdadm --zero-superblock ${LCVM_NVME0}n1 ${LCVM_NVME1}n1
    mdadm --create /dev/md$level --run --level=$level $chunk --raid-devices=2 --assume-clean \
        ${LCVM_NVME0}n1 ${LCVM_NVME1}n1 > /out/mdadm-raid$level.txt 2>&1
    "$LCLOUDCTL" probe --format json /dev/md$level > /out/probe-raid$level.json
    q md$level > /out/queue-raid$level
    mdadm --stop /dev/md$level >/dev/null 2>&1
done
mdadm --zero-superblock ${LCVM_NVME0}n1 ${LCVM_NVME1}n1
echo "0 16384 striped 2 32 ${LCVM_NVME0}n1 0 ${LCVM_NVME1}n1 0" | dmsetup create --noudevsync striped

ns=${LCVM_NVME2}n1
echo "0 8192 linear $ns 65536" | dmsetup create --noudevsync aligned
echo "0 8192 linear $ns 8" | dmsetup create --noudevsync shifted
for t in aligned shifted striped; do
    d=$(basename $(ls -d /sys/block/dm-*/dm | while read x; do [ "$(cat $x/name)" = $t ] && echo ${x%/dm}; done))
    "$LCLOUDCTL" probe --format json /dev/$d > /out/probe-$t.json
    dmsetup table $t > /out/table-$t
    q $d > /out/queue-$t
done
'''

ATOMIC = "atomic.nawun=3,atomic.nawupf=3,atomic.nabsn=7,atomic.nabspf=7"
SCSI_DEBUG = ("dev_size_mb=16 sector_size=4096 atomic_wr=1 atomic_wr_max_length=8 atomic_wr_gran=2 "
              "atomic_wr_align=2 atomic_wr_max_length_bndry=16 atomic_wr_max_bndry=4")
DEVICES = ["--nvme", "lbs=4096,size=16M,serial=lcM0," + ATOMIC,
           "--nvme", "lbs=4096,size=16M,serial=lcM1," + ATOMIC,
           "--nvme", "lbs=4096,size=64M,serial=lcL," + ATOMIC,
           "--scsi-debug", SCSI_DEBUG]

QUEUE_KEYS = ("atomic_write_unit_min_bytes", "atomic_write_unit_max_bytes",
              "atomic_write_max_bytes", "atomic_write_boundary_bytes")
# What Linux 7 stacks: unit_min, unit_max, max, boundary.
KERNEL = {
    "sd": (8192, 32768, 32768, 0),    # gran 2 blocks .. 8 blocks of 4 KiB
    "md": (4096, 16384, 16384, 32768),  # min(chunk, NAWUPF); the devices' boundary
    "raid1": (4096, 16384, 16384, 32768),
    "raid10": (4096, 16384, 16384, 32768),
    "striped": (4096, 16384, 16384, 32768),
    "aligned": (4096, 16384, 16384, 32768),
    "shifted": (0, 0, 0, 0),          # a start off the atomic boundary: none
}

# sg_vpd's Block Limits labels -> lcloudctl's fact names
VPD_FIELDS = {
    "Maximum transfer length": "max_transfer_length",
    "Optimal transfer length": "optimal_transfer_length",
    "Optimal transfer length granularity": "optimal_transfer_length_granularity",
    "Maximum atomic transfer length": "max_atomic_transfer_length",
    "Atomic alignment": "atomic_alignment",
    "Atomic transfer length granularity": "atomic_transfer_length_granularity",
    "Maximum atomic transfer length with atomic boundary": "max_atomic_transfer_length_with_atomic_boundary",
    "Maximum atomic boundary size": "max_atomic_boundary_size",
}


def guest():
    return run_guest_once(GUEST, DEVICES, lane="current")


def queue(run, name):
    return {k: int(v) for k, v in (line.split() for line in run.text("queue-" + name).splitlines())}


def probe(run, name):
    return run.json("probe-%s.json" % name)["probes"][0]


def check_limits(run, name, top):
    """The kernel's limits (pinned) equal sysfs, lcloudctl's top layer equals sysfs,
    and rwf_atomic's maximum is the kernel's unit_max."""
    q = queue(run, name)
    assert tuple(q[k] for k in QUEUE_KEYS) == KERNEL[name], (name, q)
    p = probe(run, name)
    facts = layer(p, top)["facts"]
    for k in QUEUE_KEYS + ("logical_block_size",):
        assert facts[k] == q[k], (name, k, facts[k], q[k])
    assert p["verdict"]["rwf_atomic"]["max_untorn_bytes"] == q["atomic_write_unit_max_bytes"], \
        (name, p["verdict"]["rwf_atomic"])
    return p


def test_scsi_debug_atomic_equals_sg_vpd():
    run = guest()
    p = check_limits(run, "sd", "disk")
    scsi = layer(p, "scsi")["facts"]
    vpd = {}
    for line in run.text("vpd-bl-sd.txt").splitlines():
        m = re.match(r"\s*([A-Za-z ]+?):\s*(0x[0-9a-f]+|\d+)", line)
        if m and m.group(1) in VPD_FIELDS:
            vpd[VPD_FIELDS[m.group(1)]] = int(m.group(2), 0)
    assert len(vpd) == len(VPD_FIELDS), vpd
    for k, v in vpd.items():
        assert scsi[k] == v, (k, scsi[k], v)
    # the module parameters reached the device model
    assert (vpd["max_atomic_transfer_length"], vpd["atomic_alignment"], vpd["atomic_transfer_length_granularity"],
            vpd["max_atomic_transfer_length_with_atomic_boundary"], vpd["max_atomic_boundary_size"]) == (8, 2, 2, 16, 4)
    lbs = queue(run, "sd")["logical_block_size"]
    assert scsi["max_atomic_transfer_bytes"] == vpd["max_atomic_transfer_length"] * lbs
    assert scsi["atomic_alignment_bytes"] == vpd["atomic_alignment"] * lbs
    assert scsi["atomic_granularity_bytes"] == vpd["atomic_transfer_length_granularity"] * lbs


def test_md_raid0_equals_mdadm_and_sysfs():
    run = guest()
    assert "started" in run.text("mdadm-create.txt"), run.text("mdadm-create.txt")
    p = check_limits(run, "md", "md")
    md = layer(p, "md")["facts"]
    detail = run.text("md-detail.txt")
    assert re.search(r"Raid Level : raid0\b", detail) and md["md_level"] == "raid0"
    assert int(re.search(r"Raid Devices : (\d+)", detail).group(1)) == md["md_raid_disks"] == 2
    chunk_k = int(re.search(r"Chunk Size : (\d+)K", detail).group(1))
    assert md["md_chunk_size"] == chunk_k * 1024 == int(run.text("md-chunk")) == 16384
    for line in run.text("md-offsets").splitlines():
        dev, sectors = line.split()
        assert md["md_data_offset_" + dev] == int(sectors) * 512, (dev, md)
    # the members are the NVMe namespaces, each with its own layers
    assert {l["name"] for l in p["layers"] if l["layer"] == "nvme"} == \
        {line.split()[0] for line in run.text("md-offsets").splitlines()}


def test_md_raid1_raid10_limits():
    run = guest()
    for level in ("raid1", "raid10"):
        assert "started" in run.text("mdadm-%s.txt" % level), run.text("mdadm-%s.txt" % level)
        p = check_limits(run, level, "md")
        assert layer(p, "md")["facts"]["md_level"] == level


def test_dm_linear_and_striped():
    run = guest()
    for t in ("aligned", "shifted", "striped"):
        p = check_limits(run, t, "dm")
        dm = layer(p, "dm")["facts"]
        assert dm["dm_name"] == t
        assert dm["dm_target_0"] == run.text("table-" + t).strip(), (dm["dm_target_0"], run.text("table-" + t))


if __name__ == "__main__":
    main([test_scsi_debug_atomic_equals_sg_vpd, test_md_raid0_equals_mdadm_and_sysfs, test_md_raid1_raid10_limits,
          test_dm_linear_and_striped])
