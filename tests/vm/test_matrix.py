#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current. The proof matrix (matrix.py): every configuration x path,
verdict (probe, check) against the write log's oracle (replay) and the crash
images it makes (torture verify). Fails on any row that breaks the rule:
"untorn" that meets a tearable page write or a torn crash image, a check and
a torture run that disagree on an atomic path, a run that failed. The matrix
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
        _m["m"] = matrix.run_matrix()
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
    assert len(m["rows"]) >= 14, len(m["rows"])
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
    main([test_every_configuration_and_path_has_a_row, test_no_row_breaks_the_rule,
          test_scsi_debug_verdict_matches_the_kernel])
