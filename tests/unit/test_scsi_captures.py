#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Captured SCSI pages (tests/vm/captures) decoded by lcloudctl --sysroot equal
sg_vpd's decoding of the same pages, taken in the guest at capture time
(*-decoded.txt): the QEMU Google-shaped disk and scsi_debug."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vm"))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
from hostlib import main  # noqa: E402
from test_scsi import sg_vpd_block_limits  # noqa: E402

LCLOUDCTL = os.environ["LCLOUDCTL"]
CAPTURES = os.path.join(HERE, "..", "vm", "captures")


def scsi_facts(dev):
    out = subprocess.run([LCLOUDCTL, "--sysroot", os.path.join(HERE, "fixtures", "scsi"), "probe", "--format", "json", dev],
                         capture_output=True, text=True, check=True).stdout
    for l in json.loads(out)["probes"][0]["layers"]:
        if l["layer"] == "scsi":
            return l["facts"]
    raise AssertionError("no scsi layer for " + dev)


def test_captured_block_limits_equal_sg_vpd():
    for dev, capture in (("/dev/sda", "qemu-scsihd-gpd-decoded.txt"), ("/dev/sdb", "scsidebug-4k-decoded.txt")):
        with open(os.path.join(CAPTURES, capture)) as f:
            text = f.read()
        want = sg_vpd_block_limits(text)
        assert len(want) >= 12, capture
        facts = scsi_facts(dev)
        for key, value in want.items():
            assert facts[key] == value, (dev, key, facts[key], value)
        vendor = re.search(r"Vendor identification: (.*)", text).group(1).rstrip()
        assert facts["vendor"] == vendor


if __name__ == "__main__":
    main([test_captured_block_limits_equal_sg_vpd])
