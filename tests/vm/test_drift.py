#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Drift across a kernel upgrade (and a downgrade): the same QEMU NVMe
namespace (4 KiB LBAs, no atomic parameters) read under Linux 6.1 (lane
debian12, QEMU 7.2) and Linux 7.3 (lane current, QEMU 11.1). 6.1 has no
atomic write limits, so its rwf_atomic verdict is none; 7.3 offers one
logical block. 'probe --save' in one lane and 'diff' in the other must name
the kernel change and the atomic_write_* facts, exit 12 going up (nothing
got weaker) and 13 going down (rwf_atomic lost its 4096 bytes)."""
import json
import os
import tempfile

from vmlib import run_guest
from hostlib import main

DEVICE = ["--nvme", "lbs=4096,size=16M,serial=drift0"]

SAVE = r'''
set -u
"$LCLOUDCTL" probe --save /out/fp.json ${LCVM_NVME0}n1 > /dev/null
uname -r > /out/kernel
'''

DIFF = r'''
set -u
"$LCLOUDCTL" diff --format json $FINGERPRINT ${LCVM_NVME0}n1 > /out/diff.json; echo $? > /out/diff.rc
"$LCLOUDCTL" diff $FINGERPRINT ${LCVM_NVME0}n1 > /out/diff.txt
uname -r > /out/kernel
'''


def save(lane):
    run = run_guest(SAVE, DEVICE, lane=lane)
    return run.text("fp.json"), run.text("kernel").strip()


def diff(lane, fingerprint):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "fp.json")
        with open(path, "w") as f:
            f.write(fingerprint)
        os.chmod(d, 0o755)
        run = run_guest(DIFF, DEVICE + ["--copy", path, "--env", "FINGERPRINT=" + path], lane=lane)
        return int(run.text("diff.rc")), json.loads(run.text("diff.json")), run.text("diff.txt"), \
            run.text("kernel").strip()


def rwf_change(report):
    return [c for c in report["verdict_changes"] if c["io_path"] == "rwf_atomic" and c["field"] == "max_untorn_bytes"]


def test_upgrade_and_downgrade():
    old, k61 = save("debian12")
    assert json.loads(old)["probe"]["verdict"]["rwf_atomic"]["max_untorn_bytes"] == 0
    rc, report, text, k73 = diff("current", old)
    assert k61.startswith("6.1") and k73.startswith("7."), (k61, k73)
    assert rc == 12 and report["kernel_changed"] and not report["weaker"], (rc, report)
    assert (report["kernel_old"], report["kernel_new"]) == (k61, k73)
    up = rwf_change(report)
    assert up and (up[0]["old"], up[0]["new"], up[0]["weaker"]) == (0, 4096, False), report["verdict_changes"]
    assert any(c["key"] == "atomic_write_unit_max_bytes" for c in report["fact_changes"]), report["fact_changes"]
    assert "kernel: %s -> %s" % (k61, k73) in text, text
    new, _ = save("current")
    rc, report, text, _ = diff("debian12", new)
    down = rwf_change(report)
    assert rc == 13 and report["weaker"] and down and (down[0]["old"], down[0]["new"]) == (4096, 0), (rc, report)
    assert "a verdict got weaker" in text, text


if __name__ == "__main__":
    main([test_upgrade_and_downgrade])
