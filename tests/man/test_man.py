#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every exported symbol is declared in the public header, listed in the
symbol map and has a man page that renders cleanly; every lcloudctl command
and option that --help shows is in lcloudctl(1), and every lcloud-target
option in lcloud-target(8)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
from hostlib import main  # noqa: E402

SRC = os.environ["SOURCE_ROOT"]
LIB = os.environ["LIBLCLOUD"]
LCLOUDCTL = os.environ["LCLOUDCTL"]
MAN = os.path.join(SRC, "man")


def exported():
    out = subprocess.run(["nm", "-D", "--defined-only", LIB], capture_output=True, text=True, check=True).stdout
    syms = sorted({line.split()[-1].split("@")[0] for line in out.splitlines() if " T " in line})
    assert syms, "no exported functions in %s" % LIB
    return syms


def roff_text(path):
    with open(path) as f:
        return f.read().replace("\\-", "-").replace("\\(em", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")


def test_exports_declared_mapped_and_documented():
    with open(os.path.join(SRC, "include", "lcloud", "lcloud.h")) as f:
        header = f.read()
    with open(os.path.join(SRC, "lib", "liblcloud.sym")) as f:
        symmap = f.read()
    missing = []
    for sym in exported():
        assert sym.startswith("lcloud_"), "exported symbol outside the lcloud_ namespace: " + sym
        if not re.search(r"\b%s\(" % sym, header):
            missing.append(sym + ": not declared in include/lcloud/lcloud.h")
        if not re.search(r"^\s*%s;" % sym, symmap, re.M):
            missing.append(sym + ": not in lib/liblcloud.sym")
        page = os.path.join(MAN, sym + ".3")
        if not os.path.exists(page):
            missing.append(sym + ": no man/%s.3" % sym)
            continue
        with open(page) as f:
            first = f.readline().strip()
        if first.startswith(".so "):
            # ".so man3/x.3" is relative to the installed man tree; here the pages sit in man/
            target = os.path.join(MAN, os.path.basename(first[4:]))
            if not os.path.exists(target):
                missing.append(sym + ": redirect to missing " + first[4:])
                continue
            page = target
        text = roff_text(page)
        name_section = text.split(".SH SYNOPSIS")[0]
        if sym not in name_section:
            missing.append(sym + ": not named in the NAME section of " + os.path.basename(page))
    # and nothing declared in the header escapes the map
    for sym in re.findall(r"\b(lcloud_[a-z0-9_]+)\(", header):
        if sym not in exported() and not sym.endswith("_cb"):
            missing.append(sym + ": declared in the header but not exported")
    assert not missing, "\n".join(missing)


def test_pages_name_this_version():
    """Every page's header names the version it documents: the one lcloudctl --version reports."""
    out = subprocess.run([LCLOUDCTL, "--version"], capture_output=True, text=True, check=True).stdout
    version = re.search(r"liblcloud ([0-9.]+)", out).group(1)
    stale = []
    for page in sorted(os.listdir(MAN)):
        if re.search(r"\.[378]$", page):
            with open(os.path.join(MAN, page)) as f:
                lines = f.readlines()
            if lines and lines[0].startswith(".so "):
                continue  # a link to the page that documents it
            th = [line for line in lines if line.startswith(".TH ")]
            if not th or '"liblcloud %s"' % version not in th[0]:
                stale.append("%s: %s" % (page, th[0].strip() if th else "no .TH line"))
    assert not stale, "pages not of liblcloud %s:\n%s" % (version, "\n".join(stale))


def test_pages_render_without_warnings():
    pages = [os.path.join(MAN, p) for p in sorted(os.listdir(MAN)) if re.search(r"\.[378]$", p)]
    for page in pages:
        with open(page) as f:
            # '\" t on the first line asks for tbl, as man(1) runs it; groff 1.23 warns without it
            tables = ["-t"] if f.readline().startswith("'\\\" t") else []
        p = subprocess.run(["groff", "-man", "-ww", "-z"] + tables + ["-I", MAN, page], capture_output=True,
                           text=True, cwd=MAN)
        assert p.returncode == 0 and not p.stderr.strip(), (page, p.stderr)


def test_cli_help_matches_manual():
    manual = roff_text(os.path.join(MAN, "lcloudctl.1"))
    top = subprocess.run([LCLOUDCTL, "--help"], capture_output=True, text=True, check=True).stdout
    commands = re.findall(r"^  ([a-z]+)\s{2,}", top.split("Commands:")[1].split("Global options:")[0], re.M)
    assert commands, top
    problems = []
    for text in [top] + [subprocess.run([LCLOUDCTL, c, "--help"], capture_output=True, text=True,
                                        check=True).stdout for c in commands]:
        for opt in re.findall(r"(--[a-z][a-z-]+)", text):
            if opt not in manual:
                problems.append("option %s is in --help but not in lcloudctl(1)" % opt)
    for c in commands:
        if not re.search(r"^\.SS\s+\"?%s\b" % c, manual, re.M) and ("\n%s " % c) not in manual:
            problems.append("command %s has no section in lcloudctl(1)" % c)
    assert not problems, "\n".join(sorted(set(problems)))


def test_target_help_matches_manual():
    manual = roff_text(os.path.join(MAN, "lcloud-target.8"))
    text = subprocess.run([os.environ["LCLOUD_TARGET"], "--help"], capture_output=True, text=True, check=True).stdout
    options = set(re.findall(r"(--[a-z][a-z0-9-]+)", text))
    assert len(options) > 30, text
    missing = sorted(o for o in options if not re.search(r"(^|[^a-z-])%s([^a-z-]|$)" % re.escape(o), manual, re.M))
    assert not missing, "in lcloud-target --help, not in lcloud-target(8): %s" % missing


if __name__ == "__main__":
    main([test_exports_declared_mapped_and_documented, test_pages_name_this_version, test_pages_render_without_warnings,
          test_cli_help_matches_manual, test_target_help_matches_manual])
