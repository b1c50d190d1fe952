#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7). The short form of the journal priority
benchmark (tests/bench/run-hints-vm.py, BENCH=journal SHORT=1): in one guest,
lcloud-target with the gp3 model scaled down for TCG, hint-blind and then
hint-aware, a commit loop on the journal placement handle (io_uring write
stream 2: Linux sends it as DTYPE 2, DSPEC 1) beside a background writer on
the background handle that fills the caps. Asserted: each load ran at the
caps (its back-end bytes per second, from the target's trace over the
load's window, within 10 % of the cap: the model, not the emulation, bound
it), the trace shows the classes the scheduler saw (write-journal,
write-background), and with the hints the commits' p50 and p99 (the
program's own clock) are at least twice as low: the journal writes went
before the background writes queued at the caps. No timed assertion on the
throughput itself."""
import functools
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
from hostlib import main  # noqa: E402


@functools.lru_cache(maxsize=None)
def short_run():
    """The journal benchmark's figures, one guest for every test here."""
    target = os.environ.get("LCLOUD_TARGET")
    if not target:
        raise AssertionError("LCLOUD_TARGET is not set (meson sets it)")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "run-hints-vm.py")
    with tempfile.TemporaryDirectory(prefix="lcloud-hints-") as d:
        figures = os.path.join(d, "short.json")
        p = subprocess.run([script, os.path.dirname(os.path.dirname(os.path.realpath(target)))],
                           capture_output=True, text=True,
                           env=dict(os.environ, SHORT="1", BENCH="journal", SECONDS="15", FIGURES=figures,
                                    NO_README="1"))
        print(p.stdout, end="")
        assert p.returncode in (0, 2) and os.path.exists(figures), "exit %d\n%s\n%s" % (
            p.returncode, p.stdout, p.stderr[-3000:])
        with open(figures) as f:
            return json.load(f)["journal"]


def test_caps_bind_every_load():
    f = short_run()
    assert [l["mode"] for l in f["loads"]] == ["ignore", "use"], f["loads"]
    for l in f["loads"]:
        assert l["bound"] == "bytes", l  # 256 KiB writes: the bandwidth cap
        assert l["cap_check"], "%s: caps used %.2f: the emulation bounded it" % (l["tag"], l["cap_use"])


def test_journal_writes_go_first_with_hints():
    f = short_run()
    blind, aware = f["modes"]["ignore"], f["modes"]["use"]
    assert f["max_write_streams"] == "4", f["max_write_streams"]
    for k in ("commit_p50_ms", "commit_p99_ms"):
        assert blind[k] >= 2 * aware[k], (k, blind[k], aware[k])
    assert aware["commits"] > blind["commits"], (aware, blind)
    for l in f["loads"]:
        # what the trace says the scheduler saw: the commits on the journal handle, the rest on background
        classes = l["window"]["classes"]
        assert set(classes) <= {"write-journal", "write-background"}, classes
        assert abs(classes.get("write-journal", 0) - l["commits"]) <= 2, (classes, l["commits"])


if __name__ == "__main__":
    main([test_caps_bind_every_load, test_journal_writes_go_first_with_hints])
