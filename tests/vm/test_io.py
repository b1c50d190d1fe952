#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""NVMe passthrough through io_uring on a real NVMe driver (Linux 6.1 guest,
QEMU 7.2): hinted writes to /dev/ng0n1 read back identical through the block
device /dev/nvme0n1 (dd in the guest, an independent path); an atomic
passthrough write above the namespace's power-fail size is refused before
submission; a write past the end of the namespace reports the NVMe status by
name; the namespace's partition is addressed at its own offset."""
from vmlib import run_guest
from hostlib import main

GUEST = r'''
set -u
L=$LCLOUDCTL
# 64 KiB namespace-relative at 1 MiB, with a journal hint and FUA, through passthrough
$L write /dev/ng0n1 --offset 1M --length 64K --pattern 0x6c --hint journal --fua --force > /out/w1.txt 2>&1; echo $? > /out/w1.rc
dd if=/dev/nvme0n1 of=/out/r1.bin bs=4096 skip=256 count=16 iflag=direct 2>/dev/null
# atomic 4 KiB (one LBA: AWUPF 0) is fine, 16 KiB is more than the power-fail size
$L write /dev/ng0n1 --offset 0 --length 4K --atomic --pattern 0x41 --force > /out/w2.txt 2>&1; echo $? > /out/w2.rc
$L write /dev/ng0n1 --offset 0 --length 16K --atomic --pattern 0x42 --force > /out/w3.txt 2>&1; echo $? > /out/w3.rc
dd if=/dev/nvme0n1 of=/out/r2.bin bs=4096 count=4 iflag=direct 2>/dev/null
# past the end of the 32 MiB namespace: the device answers
$L write /dev/ng0n1 --offset 32M --length 4K --pattern 0 --force > /out/w4.txt 2>&1; echo $? > /out/w4.rc
# read back through passthrough too
$L read /dev/ng0n1 --offset 1M --length 64K --out /out/r3.bin > /out/r3.txt 2>&1; echo $? > /out/r3.rc
# the block node with the default backend chooses passthrough as well
$L write /dev/nvme0n1 --offset 2M --length 8K --pattern 0x77 --hint metadata --force > /out/w5.txt 2>&1; echo $? > /out/w5.rc
dd if=/dev/nvme0n1 of=/out/r5.bin bs=4096 skip=512 count=2 iflag=direct 2>/dev/null
'''


def test_passthrough():
    run = run_guest(GUEST, ["--nvme", "lbs=4096,size=32M,serial=lcIO"])
    assert run.text("w1.rc").strip() == "0", run.text("w1.txt")
    assert "via passthrough" in run.text("w1.txt") and "fua" in run.text("w1.txt"), run.text("w1.txt")
    with open(run.files + "/r1.bin", "rb") as f:
        assert f.read() == b"\x6c" * 65536
    assert run.text("w2.rc").strip() == "0", run.text("w2.txt")
    assert run.text("w3.rc").strip() == "7", run.text("w3.txt")
    assert "more than the largest untorn write on passthrough, 4096" in run.text("w3.txt"), run.text("w3.txt")
    with open(run.files + "/r2.bin", "rb") as f:
        data = f.read()
    assert data[:4096] == b"\x41" * 4096 and b"\x42" not in data, "the refused write must not reach the device"
    assert run.text("w4.rc").strip() == "1", run.text("w4.txt")
    assert "LBA Out of Range" in run.text("w4.txt"), run.text("w4.txt")
    assert run.text("r3.rc").strip() == "0", run.text("r3.txt")
    with open(run.files + "/r3.bin", "rb") as f:
        assert f.read() == b"\x6c" * 65536
    assert run.text("w5.rc").strip() == "0" and "via passthrough" in run.text("w5.txt"), run.text("w5.txt")
    with open(run.files + "/r5.bin", "rb") as f:
        assert f.read() == b"\x77" * 8192


if __name__ == "__main__":
    main([test_passthrough])
