#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7). Hardware or software atomic writes: on
an NVMe namespace whose power-fail atomic size is 16 KiB (NAWUPF 3, 4 KiB
LBAs), XFS accepts RWF_ATOMIC up to 1 MiB, doing what the device cannot by
copy on write, while ext4 with 16 KiB bigalloc clusters accepts only what
the device does. The verdict's hardware_max_bytes must equal the guest's own
readings: statx's stx_atomic_write_unit_max_opt (read by the tests' statx
reader) where XFS gives a split, and the namespace's
queue/atomic_write_unit_max_bytes; check must say "by the device" for
16 KiB and "in software" above it on XFS."""
import os

from vmlib import run_guest_once
from hostlib import main

STATX_READER = os.environ.get("STATX_READER")

GUEST = r'''
set -u
d=${LCVM_NVME0}n1; e=${LCVM_NVME1}n1
cat /sys/block/${d##*/}/queue/atomic_write_unit_max_bytes > /out/queue-unit-max
/usr/sbin/mkfs.xfs -q -f $d > /out/mkfs-xfs.log 2>&1
/usr/sbin/mke2fs -q -F -t ext4 -O bigalloc -C 16384 $e > /out/mkfs-ext4.log 2>&1
mkdir -p /mnt/xfs /mnt/ext4
mount -t xfs $d /mnt/xfs && mount -t ext4 $e /mnt/ext4 || echo "mount failed" > /out/mount-failed
for fs in xfs ext4; do
    f=/mnt/$fs/ibdata1
    : > $f
    "$STATX_READER" $f > /out/statx-$fs
    "$LCLOUDCTL" probe --format json $f > /out/probe-$fs.json
    for s in 16K 64K; do
        "$LCLOUDCTL" check --size $s --path rwf_atomic $f > /out/check-$fs-$s.txt; echo $? > /out/check-$fs-$s.rc
    done
done
umount /mnt/xfs /mnt/ext4
'''

ATOMIC = "atomic.nawun=3,atomic.nawupf=3,atomic.nabsn=7,atomic.nabspf=7"
DEVICES = ["--nvme", "lbs=4096,size=320M,serial=hwA," + ATOMIC, "--nvme", "lbs=4096,size=64M,serial=hwB," + ATOMIC,
           "--module", "xfs", "--copy", "/usr/sbin/mkfs.xfs", "--copy", "/usr/sbin/mke2fs"]


def guest():
    devices = list(DEVICES)
    if STATX_READER:
        reader = os.path.realpath(STATX_READER)
        devices += ["--copy", reader, "--env", "STATX_READER=" + reader]
    return run_guest_once(GUEST, devices, lane="current")


def statx(run, fs):
    return {k: int(v) for k, v in (line.split() for line in run.text("statx-" + fs).splitlines())}


def test_xfs_hardware_up_to_the_device_software_above():
    run = guest()
    assert not run.exists("mount-failed"), run.text("mkfs-xfs.log")
    device = int(run.text("queue-unit-max"))
    assert device == 16384, device
    mine = statx(run, "xfs")
    v = run.json("probe-xfs.json")["probes"][0]["verdict"]["rwf_atomic"]
    assert v["max_untorn_bytes"] == mine["stx_atomic_write_unit_max"] > device, (v, mine)
    opt = mine.get("stx_atomic_write_unit_max_opt", 0)
    # XFS names the split itself, or leaves it to the device's limit: the same size either way
    assert v["hardware_max_bytes"] == (opt or device) == device, (v["hardware_max_bytes"], opt, device)
    assert run.text("check-xfs-16K.rc").strip() == "0" and "by the device" in run.text("check-xfs-16K.txt")
    assert run.text("check-xfs-64K.rc").strip() == "0" and "in software" in run.text("check-xfs-64K.txt")


def test_ext4_bigalloc_is_all_hardware():
    run = guest()
    mine = statx(run, "ext4")
    v = run.json("probe-ext4.json")["probes"][0]["verdict"]["rwf_atomic"]
    assert v["max_untorn_bytes"] == mine["stx_atomic_write_unit_max"] == 16384, (v, mine)
    assert v["hardware_max_bytes"] == 16384
    assert run.text("check-ext4-16K.rc").strip() == "0" and "by the device" in run.text("check-ext4-16K.txt")
    assert run.text("check-ext4-64K.rc").strip() == "6", run.text("check-ext4-64K.txt")


if __name__ == "__main__":
    main([test_xfs_hardware_up_to_the_device_software_above, test_ext4_bigalloc_is_all_hardware])
