#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The ABI is a promise: the built liblcloud.so is compared with the
committed baseline (tests/abi/liblcloud.abi, abidw of the library at
b464a09) by abidiff, over the public header only (opaque handles may change
inside). Any removed or changed function or variable, or any change abidiff
calls incompatible, fails; functions added in a new version node are the
one change allowed. A second check makes sure the comparison can fail: the
baseline compared with itself minus one exported function must report it.
Update the baseline only for an intended, SONAME-changing break."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
from hostlib import main  # noqa: E402

SRC = os.environ["SOURCE_ROOT"]
LIB = os.environ["LIBLCLOUD"]
BASELINE = os.path.join(SRC, "tests", "abi", "liblcloud.abi")
HEADERS = os.path.join(SRC, "include", "lcloud")

ABIDIFF_ERROR, ABIDIFF_USAGE_ERROR, ABIDIFF_ABI_CHANGE, ABIDIFF_ABI_INCOMPATIBLE_CHANGE = 1, 2, 4, 8


def abidiff(old, new):
    if not shutil.which("abidiff"):
        raise AssertionError("abidiff is missing: apt-get install abigail-tools (scripts/install-deps installs it)")
    return subprocess.run(["abidiff", "--headers-dir1", HEADERS, "--headers-dir2", HEADERS, old, new],
                          capture_output=True, text=True)


def summary(text):
    """(removed, changed, added) functions and (removed, changed) variables from abidiff's summary."""
    f = re.search(r"Functions changes summary: (\d+) Removed, (\d+) Changed.*?, (\d+) Added", text)
    v = re.search(r"Variables changes summary: (\d+) Removed, (\d+) Changed", text)
    assert f and v, text
    return tuple(int(x) for x in f.groups()), tuple(int(x) for x in v.groups())


def test_no_abi_break_since_baseline():
    p = abidiff(BASELINE, LIB)
    print(p.stdout)
    assert not p.returncode & (ABIDIFF_ERROR | ABIDIFF_USAGE_ERROR), p.stderr
    assert not p.returncode & ABIDIFF_ABI_INCOMPATIBLE_CHANGE, "incompatible ABI change:\n" + p.stdout
    (removed, changed, added), (vremoved, vchanged) = summary(p.stdout)
    assert (removed, changed, vremoved, vchanged) == (0, 0, 0, 0), p.stdout
    # every added function sits in a version node newer than the baseline's
    for sym, node in re.findall(r"\[A\] 'function [^']*'\s+\{(\w+)@@(LCLOUD_[\d.]+)\}", p.stdout):
        assert node not in ("LCLOUD_0.1", "LCLOUD_0.2"), "%s added to an old version node %s" % (sym, node)


def test_comparison_can_fail():
    with open(BASELINE) as f:
        xml = f.read()
    # drop one exported function from the baseline's symbol list: the library then "adds" it; and the
    # reverse comparison, library -> trimmed baseline, must see it removed
    trimmed = re.sub(r"\s*<elf-symbol name='lcloud_version'[^>]*/>", "", xml, count=1)
    trimmed = re.sub(r"\s*<function-decl name='lcloud_version'.*?</function-decl>", "", trimmed, count=1,
                     flags=re.S)
    assert trimmed != xml
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trimmed.abi")
        with open(path, "w") as f:
            f.write(trimmed)
        p = abidiff(LIB, path)
        (removed, _, _), _ = summary(p.stdout)
        assert removed >= 1 and p.returncode & ABIDIFF_ABI_INCOMPATIBLE_CHANGE, (p.returncode, p.stdout)


if __name__ == "__main__":
    main([test_no_abi_break_since_baseline, test_comparison_can_fail])
