#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current. The proof matrix (matrix.py): every configuration x path,
verdict (probe, check) against the write log's oracle (replay) and the crash
images it makes (torture verify). Fails on any row that breaks the rule:
"untorn" that meets a tearable page write or a torn crash image, a check and
a torture run that disagree on an atomic path, a run that failed; on lcloud-target's rows also a torn page in a file
its own power cuts left, except on its liar row, the negative control,
which must show torn pages that the oracle cannot see. The matrix
of this run is written to the build directory (MATRIX_OUT, else a temporary
file) for comparison with the committed tests/vm/matrix.md; the committed
numbers are not compared, the rule is."""
import json
import os
import tempfile

import matrix
from hostlib import main

_m = {}


def the_matrix():
    if not _m:
        _m["m"] = matrix.run_matrix(ci=True)
        out = os.environ.get("MATRIX_OUT") or tempfile.mkdtemp(prefix="lcloud-matrix-out-")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "matrix.json"), "w") as f:
            json.dump(_m["m"], f, indent=1, sort_keys=True)
        with open(os.path.join(out, "matrix.md"), "w") as f:
            f.write(matrix.markdown(_m["m"]))
        print("matrix written to %s/matrix.md" % out)
        print(matrix.markdown(_m["m"]))
    return _m["m"]


def test_every_configuration_and_path_has_a_row():
    m = the_matrix()
    assert len(m["rows"]) == sum(1 for b in matrix.BOOTS.values() for r in b["rows"] if r.get("ci", True)), \
        [r["name"] for r in m["rows"]]
    for row in m["rows"]:
        assert row.get("verdict") is not None, (row["name"], row.get("probe_error"))
        assert [p["path"] for p in row["paths"]] == [p for p in next(
            r for b in matrix.BOOTS.values() for r in b["rows"] if r["name"] == row["name"])["paths"]]
        for p in row["paths"]:
            assert p["check_exit"] in (0, 6, 8), (row["name"], p)
            # the log was read wherever the workload ran on a logged device
            if p["run_exit"] == 0 and row["logs"]:
                assert p["page_writes"] and p["page_writes"] >= matrix.PAGES, (row["name"], p)


def test_no_row_breaks_the_rule():
    bad = matrix.violations(the_matrix())
    assert not bad, "rows that break the rule:\n" + "\n".join(bad)


def target_row(name):
    return next(r for r in the_matrix()["rows"] if r["name"] == name)


def test_target_rows_were_cut():
    """Every path of lcloud-target that wrote (buffered aside, see CUT_PATHS) was cut CUTS_CI times
    during torture run, and torture verify read every page of each file the cuts left."""
    names = [r["name"] for r in matrix.BOOTS["target"]["rows"] if r.get("ci", True)]
    for name in names:
        row = target_row(name)
        for p in row["paths"]:
            if p["run_exit"] != 0 or p["path"] not in matrix.CUT_PATHS:
                assert not p.get("cut_runs"), (name, p)
                continue
            assert p["cut_runs"] == p["cuts"] == matrix.CUTS_CI, (name, p)
            assert p["cut_pages"] == matrix.CUTS_CI * matrix.PAGES and not p.get("cut_errors"), (name, p)
            # the target never lets a flushed write go, liar or not
            assert p["cut_lost"] == 0, (name, p)
    honest = {p["path"]: p for p in target_row("target-honest")["paths"]}
    assert honest["rwf_atomic"]["check_exit"] == 0 and honest["rwf_atomic"]["status"] == "untorn, confirmed", honest


def test_no_promise_target_tears():
    """Without a promise the 16 KiB page writes of plain O_DIRECT tear: the oracle says so and the
    target's cuts show it."""
    p = next(p for p in target_row("target-nopromise")["paths"] if p["path"] == "plain_direct")
    assert p["check_exit"] == 6 and p["tearable"] > 0 and p["cut_torn"] > 0, p


def test_liar_is_caught_as_a_broken_promise():
    """The negative control: the liar advertises the honest target's promise, so the verdict says
    untorn and the oracle, which reads the commands in its log, finds nothing tearable; its power
    cuts tear pages anyway. The row is marked as the device's broken promise, and the rule, were
    the liar a real device, rejects it."""
    row = target_row("target-liar")
    spec = next(r for r in matrix.BOOTS["target"]["rows"] if r["name"] == "target-liar")
    for p in row["paths"]:
        if p["path"] not in ("rwf_atomic", "passthrough") or p["run_exit"] != 0:
            continue
        assert p["check_exit"] == 0 and p["tearable"] == 0 and p["torn_images"] == 0, p
        assert p["cut_torn"] > 0 and p["cut_torn_covered_writes"] > 0, p
        assert p["status"].startswith("untorn claimed, broken by the device (negative control)"), p
        assert not p["breaks_rule"], p
        status, breaks = matrix.judge(dict(spec, liar=False), p)
        assert breaks and status.startswith("VERDICT WRONG"), (status, p)


def row_path(name, path="plain_direct"):
    return next(p for p in target_row(name)["paths"] if p["path"] == path)


def test_merge_split_dm_and_loop_rules_hold():
    """The rules of what the block layer can merge and split, dm-striped, dm-crypt and a loop
    device's direct writes: each untorn where the write log shows every page write whole (a
    16 KiB write is max_sectors_kb itself; a stripe's chunk holds a whole page; dm-crypt writes
    one clone; a 4 KiB loop write lands in one block of the namespace), and each negative control
    no, with the tearable page writes the oracle finds in its log (judge() holds the controls to
    that, test_no_row_breaks_the_rule to judge())."""
    for name in ("nvme-b32k-cap16", "dm-striped-16k", "dm-crypt-nomerges", "loop-dio-xfs", "pd-whole"):
        p = row_path(name)
        assert p["check_exit"] == 0 and p["status"] == "untorn, confirmed", (name, p)
        assert p["page_writes"] >= matrix.PAGES and p["tearable"] == 0, (name, p)
    p = row_path("nvme-b32k-cap16-8k")
    assert p["check_exit"] == 6 and p["tearable"] > 0 and p["rules"].get("boundary"), p
    # the loop device wrote directly to its file: the kernel says so
    assert target_row("loop-dio-xfs")["loop_dio"] == "1", target_row("loop-dio-xfs")


def test_scsi_debug_verdict_matches_the_kernel():
    """No write log is possible there: the verdict must match statx and what the kernel accepted."""
    row = next(r for r in the_matrix()["rows"] if r["name"] == "scsi-debug-atomic")
    if not row.get("statx"):
        return
    statx = dict(zip(row["statx"].split()[0::2], row["statx"].split()[1::2]))
    assert row["verdict"]["rwf_atomic"] == int(statx["stx_atomic_write_unit_max"]) == 16384, row
    p = next(p for p in row["paths"] if p["path"] == "rwf_atomic")
    assert p["check_exit"] == 0 and p["run_exit"] == 0 and p["acknowledged_writes"] == matrix.WRITES, p


if __name__ == "__main__":
    main([test_every_configuration_and_path_has_a_row, test_no_row_breaks_the_rule, test_target_rows_were_cut,
          test_no_promise_target_tears, test_liar_is_caught_as_a_broken_promise,
          test_merge_split_dm_and_loop_rules_hold, test_scsi_debug_verdict_matches_the_kernel])
