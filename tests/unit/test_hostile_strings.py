#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Strings a device chose reach the terminal escaped: a crafted EBS-shaped
namespace whose vendor area (attachment name, volume ID) and sysfs model
hold terminal escape sequences, and a SCSI disk whose INQUIRY vendor and
sysfs model do, replayed with --sysroot. Text output shows the bytes as
\\xNN; JSON output stays valid and carries the bytes exactly."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
from hostlib import main  # noqa: E402

LCLOUDCTL = os.environ["LCLOUDCTL"]
FIXTURES = os.path.join(HERE, "fixtures")
NS_VS = 384  # Identify Namespace vendor area
NAME = b"/dev/\x1b]0;owned\x07xvdf"
VOLUME = b"vol\x1b[2J\x9b31m0123"
MODEL = "Amazon Elastic Block Store\x1b[31m"


def crafted(src):
    d = tempfile.mkdtemp(prefix="lcloud-hostile-")
    root = os.path.join(d, "root")
    shutil.copytree(os.path.join(FIXTURES, src), root, symlinks=True)
    return d, root


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def run(root, *args):
    return subprocess.run([LCLOUDCTL, "--sysroot", root] + list(args), capture_output=True)


def check_text(out, raw_strings):
    assert b"\x1b" not in out and b"\x07" not in out and b"\x9b" not in out, out
    for raw in raw_strings:
        escaped = "".join(chr(c) if 0x20 <= c < 0x7f and c != 0x5c else "\\x%02x" % c for c in raw).encode()
        assert escaped in out, (escaped, out)


def test_nvme_vendor_area_and_model():
    d, root = crafted("nvme-crafted")
    try:
        ns = os.path.join(root, "nvme-data", "nvme1n1", "id-ns.bin")
        patch(ns, NS_VS, NAME.ljust(32, b" "))
        patch(ns, NS_VS + 32, VOLUME.ljust(32, b" "))
        model = os.path.join(os.path.realpath(os.path.join(root, "sys", "class", "block", "nvme1n1")), "device", "model")
        with open(model, "w", encoding="latin-1") as f:
            f.write(MODEL + "\n")
        p = run(root, "probe", "/dev/nvme1n1")
        assert p.returncode == 0, p.stderr
        check_text(p.stdout, [NAME, VOLUME, MODEL.encode("latin-1")])
        # JSON: valid, and the exact bytes come back (json-c writes \u001b)
        p = run(root, "probe", "--format", "json", "/dev/nvme1n1")
        assert p.returncode == 0 and b"\x1b" not in p.stdout, p.stdout[:200]
        doc = json.loads(p.stdout)
        facts = {}
        for l in doc["probes"][0]["layers"]:
            facts.update({(l["layer"], k): v for k, v in l["facts"].items()})
        assert facts[("cloud", "attachment_name")] == NAME.decode("latin-1"), facts[("cloud", "attachment_name")]
        assert facts[("disk", "model")] == MODEL, facts[("disk", "model")]
        # a byte that is not UTF-8 is the character of the same value: the document stays UTF-8
        assert facts[("cloud", "volume_id")] == VOLUME.decode("latin-1"), facts[("cloud", "volume_id")]
    finally:
        shutil.rmtree(d)


def test_scsi_inquiry_and_model():
    d, root = crafted("scsi")
    try:
        patch(os.path.join(root, "scsi-data", "sdb", "inquiry.bin"), 8, b"\x1b[5mEV")
        model = os.path.join(os.path.realpath(os.path.join(root, "sys", "class", "block", "sdb")), "device", "model")
        with open(model, "w", encoding="latin-1") as f:
            f.write("Disk\x1b]2;x\x07\n")
        p = run(root, "probe", "/dev/sdb")
        assert p.returncode == 0, p.stderr
        check_text(p.stdout, [b"Disk\x1b]2;x\x07"])
        p = run(root, "probe", "--format", "json", "/dev/sdb")
        assert p.returncode == 0, p.stderr
        json.loads(p.stdout)
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main([test_nvme_vendor_area_and_model, test_scsi_inquiry_and_model])
