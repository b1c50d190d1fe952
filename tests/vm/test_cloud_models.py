#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7). page_flush under a cloud disk model
(issue 24), the short form of tests/bench/run-cloud-models-vm.sh: the
bandwidth-bound model (lcvm model=bw-bound, scaled down for TCG) on an NVMe
namespace with NAWUPF 16 KiB, queue depth 32, doublewrite, rwf_atomic and
plain_direct. Asserted: the caps, not the emulation, bound every run (its
pages/s within 10 % of what QEMU's throttle lets its requests through, and
on this model its bytes per second, from the guest's block device
statistics, at the bandwidth cap), and for each in-place method the model's limit
(the best pages/s ratio to doublewrite that the caps allow) is computed
beside the measured ratio, which is within 10 % of it or explained with
figures. No timed assertion: the pages/s themselves are not checked."""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
from hostlib import main  # noqa: E402
SCRIPT = os.path.join(HERE, "..", "bench", "run-cloud-models-vm.sh")
PAGE_FLUSH = os.environ.get("PAGE_FLUSH")
_result = {}


def short_run():
    if "report" not in _result:
        if not PAGE_FLUSH:
            raise AssertionError("PAGE_FLUSH is not set (meson sets it)")
        build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(PAGE_FLUSH))))
        with tempfile.TemporaryDirectory(prefix="lcloud-models-") as tmp:
            out = os.path.join(tmp, "short.json")
            p = subprocess.run([SCRIPT, "--short", "--json", out, build], capture_output=True, text=True,
                               env=dict(os.environ, PAGE_FLUSH=PAGE_FLUSH))
            print(p.stdout, end="")
            assert p.returncode in (0, 2), "exit %d\n%s\n%s" % (p.returncode, p.stdout, p.stderr[-3000:])
            with open(out) as f:
                _result["report"] = json.load(f)
            _result["rc"] = p.returncode
    return _result["report"]


def test_caps_bind_every_run():
    r = short_run()
    assert r["caps"]["bw-bound"]["iops"] > 0 and r["caps"]["bw-bound"]["bps"] > 0, r["caps"]
    rows = r["rows"]
    assert {x["method"] for x in rows} == {"doublewrite", "rwf_atomic", "plain_direct"}, rows
    for x in rows:
        assert x["cap_check"], "%s qd %d: caps used %s (scale %s): the emulation bounded it" % (
            x["method"], x["qd"], x["cap_use"], r["scale"])
        assert x["bound"] == "bytes", x  # 16 KiB pages on this model: the bandwidth cap
        assert all(0.9 <= u <= 1.1 for u in x["cap_use"]), x
    assert r["checks_pass"] and _result["rc"] == 0


def test_limit_computed_and_measured_against_it():
    r = short_run()
    in_place = [x for x in r["rows"] if x["method"] != "doublewrite"]
    assert len(in_place) == 2, r["rows"]
    for x in in_place:
        # bandwidth-bound: in place writes each page once, doublewrite twice
        assert 1.8 <= x["limit"] <= 2.05, x
        assert x["limit_a_priori"] == 2.0, x
        assert x["measured_over_limit"] == x["ratio"] / x["limit"]
        close = abs(x["measured_over_limit"] - 1) <= 0.10
        explained = any(e.startswith("bw-bound qd %d %s:" % (x["qd"], x["method"])) for e in r["explanations"])
        assert close or explained, (x, r["explanations"])


if __name__ == "__main__":
    main([test_caps_bind_every_run, test_limit_computed_and_measured_against_it])
