#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7), one boot. The short form of the hint
census (hint_census.py): the mechanisms whose rows take seconds, each run
against lcloud-target over nvme-tcp with its --trace, and what the device
received compared with the committed table for the running kernel
(tests/vm/hint_census.json). Beside the table:
  - the driver's own record of every command it sent the target (its
    nvme_setup_cmd trace point) and the target's trace hold the same
    commands with the same bits, so the trace is the device's true reading;
  - liblcloud's classed writes land on the handle the target's Linux cloud
    extension says is for their class, through io_uring's write stream and
    passthrough's DSPEC alike, and a class without a handle arrives with no
    directive; the expected handle comes from what the target was told
    (--placement-use), not from the library, and lcloudctl's own words
    name the same stream or identifier;
  - the read-ahead flag is on reads a reader waited for (the census's
    claim in lcloud-hints(7)), and never on O_DIRECT reads."""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hint_census  # noqa: E402
from hostlib import main  # noqa: E402

_census = {}


def census():
    if not _census:
        c, run = hint_census.census("short")
        _census.update(c)
    return _census


def test_short_form_matches_the_committed_table():
    c = census()
    diffs = hint_census.compare(c, hint_census.load_committed())
    assert not diffs, "the device received other bits than tests/vm/hint_census.json says:\n" + "\n".join(diffs)


def test_the_driver_sent_what_the_target_received():
    c = census()
    agree = c["driver_agrees"]
    assert c["ftrace_lost"] == 0, "the guest's trace buffer lost %s events" % c["ftrace_lost"]
    assert agree["sent"] > 100 and agree["equal"], agree


def handle_for(write_class):
    """The handle lcloud-target was told is for WRITE_CLASS (--placement-use), or None."""
    return next((h for h, use in hint_census.PLACEMENT_USE.items() if use == write_class), None)


def test_write_classes_land_on_the_handles_the_device_names():
    """Its reclaim unit handle status pairs placement identifier i with handle i (test_current_target), so
    the DSPEC the target received is the handle; the Linux write stream N is the N-th identifier."""
    rows = census()["rows"]
    checked = 0
    for name, row in rows.items():
        m = re.match(r"lcloud-write-(io_uring|passthrough)-(data|metadata|journal|background)$", name)
        if not m:
            continue
        backend, cls = m.groups()
        writes = [b for b in row["bits"] if b.startswith("Write")]
        assert len(writes) == 1, (name, row["bits"])
        placed = re.search(r"DTYPE 2 DSPEC (\d+)", writes[0])
        want = handle_for(cls)
        if want is None:
            assert not placed, "%s: a class without a handle arrived placed: %s" % (name, writes[0])
            assert "dropped (the device has no %s handle)" % cls in row["liblcloud"], row["liblcloud"]
        else:
            assert placed and int(placed.group(1)) == want, "%s: %s, the %s handle is %d" % (
                name, writes[0], cls, want)
            said = "write stream %d" % (want + 1) if backend == "io_uring" else "fdp placement id %d" % want
            assert said in row["liblcloud"] and "%s handle %d, as the device states" % (cls, want) in \
                row["liblcloud"], row["liblcloud"]
        checked += 1
    assert checked >= 4, "no lcloudctl write rows in the census"


def test_read_ahead_flag_on_reads_readers_waited_for():
    rows = census()["rows"]
    for name in ("read-buffered-seq", "read-buffered-rand", "read-buffered-seq-setra0", "fadvise-random"):
        r = rows[name]
        assert r["bits"] == ["Read LR DSM 0x07"], (name, r["bits"])
        assert r["reads"]["flagged_waited"] > 0, (name, r["reads"])
    # random 4 KiB reads: each one a reader's own, each one flagged as a read-ahead
    r = rows["read-buffered-rand"]["reads"]
    assert r["flagged_waited"] == r["flagged_waited"] + r["flagged_ahead"] > 0, r
    direct = rows["read-direct"]
    assert direct["bits"] == ["Read"] and direct["reads"]["unflagged_speculative"] == 0, direct


if __name__ == "__main__":
    main([test_short_form_matches_the_committed_table, test_the_driver_sent_what_the_target_received,
          test_write_classes_land_on_the_handles_the_device_names, test_read_ahead_flag_on_reads_readers_waited_for])
