#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The README's examples run as written and print what it shows. Every
block in README.md and docs/GUIDE.md that starts with "$ lcloudctl
--sysroot tests/..." (a device tree captured from a real machine, in the
source tree) is run from the top of the tree under a UTF-8 locale with no
colour, and its output must equal the lines shown under it. An example
that no longer runs, or whose output changed, fails here until the docs
say what the tool says."""
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
from hostlib import main  # noqa: E402

SRC = os.environ["SOURCE_ROOT"]
LCLOUDCTL = os.environ["LCLOUDCTL"]


def examples(path):
    """(command, shown output) of each '    $ lcloudctl --sysroot tests/...' block of PATH."""
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^    \$ (lcloudctl --sysroot tests/\S+ .*)$", lines[i])
        i += 1
        if not m:
            continue
        out = []
        # the output: indented lines, blank lines inside it kept, up to the next command or text
        while i < len(lines) and (lines[i].startswith("    ") and not lines[i].startswith("    $ ")
                                  or lines[i] == "" and i + 1 < len(lines) and lines[i + 1].startswith("    ")
                                  and not lines[i + 1].startswith("    $ ")):
            out.append(lines[i][4:])
            i += 1
        yield m.group(1), "\n".join(out).rstrip("\n")


def run(command):
    args = shlex.split(command)
    env = dict(os.environ, LC_ALL="C.UTF-8", NO_COLOR="1")
    p = subprocess.run([LCLOUDCTL] + args[1:], capture_output=True, text=True, cwd=SRC, env=env)
    return (p.stdout + p.stderr).rstrip("\n")


def test_examples_print_what_the_docs_show():
    seen = 0
    bad = []
    for rel in ("README.md", os.path.join("docs", "GUIDE.md")):
        for command, shown in examples(os.path.join(SRC, rel)):
            seen += 1
            got = run(command)
            if got != shown:
                bad.append("%s: $ %s\n--- the docs show:\n%s\n--- the tool prints:\n%s" % (rel, command, shown, got))
    assert seen >= 5, "only %d examples found: the README must keep its five" % seen
    assert not bad, "\n\n".join(bad)


def test_the_checker_sees_a_difference():
    # the comparison can fail: a shown line the tool does not print
    command, shown = next(examples(os.path.join(SRC, "README.md")))
    assert run(command) == shown
    assert run(command) != shown + "\nextra"


if __name__ == "__main__":
    main([test_examples_print_what_the_docs_show, test_the_checker_sees_a_difference])
