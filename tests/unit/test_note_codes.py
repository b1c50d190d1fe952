#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The note codes are one list (lib/core/notes.def), and every place that names
them says the same: the JSON schema's enum, the PROBE NOTES of lcloud(7),
the NOTE CODES of lcloudctl(1) and the list in lcloud_note_get_code(3).
A code added to one and not the others fails here, as does a man page that
gives a code another usual severity, a code no probe makes, and a test
that looks for a code that does not exist (it would pass by finding none)."""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.environ.get("SOURCE_ROOT", os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "host"))
from hostlib import main  # noqa: E402

SEVERITY_WORDS = {"INFO": "info", "WARNING": "warning", "NEEDS_ROOT": "needs-root", "ERROR": "error"}


def read(*parts):
    with open(os.path.join(SRC, *parts)) as f:
        return f.read()


def catalogue():
    """{code: (id, default severity word)} from lib/notes.def."""
    found = {}
    for m in re.finditer(r'^NOTE\((\w+),\s*"([^"]+)",\s*(\w+),', read("lib", "core", "notes.def"), re.M):
        ident, code, severity = m.groups()
        assert code not in found, "%s listed twice in notes.def" % code
        assert severity in SEVERITY_WORDS, "%s: severity %s" % (code, severity)
        found[code] = (ident, SEVERITY_WORDS[severity])
    assert len(found) > 30, "notes.def was not parsed (%d codes)" % len(found)
    return found


def section(page, title):
    """The text of man page PAGE's section TITLE, up to the next .SH."""
    text = read("man", page)
    start = text.index(".SH %s\n" % title)
    end = text.find("\n.SH ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def unroff(s):
    return s.replace("\\-", "-").replace("\\(dq", "").replace('"', "")


def same_set(where, theirs):
    ours = set(catalogue())
    theirs = set(theirs)
    assert ours == theirs, "%s and lib/core/notes.def differ: missing there %s, not in notes.def %s" % (
        where, sorted(ours - theirs), sorted(theirs - ours))


def listed_entries(text):
    """(code, first word of the parenthesis after it) for each '.TP / .B code' entry."""
    entries = []
    for m in re.finditer(r'^\.TP\n\.B (\S+)\n\(([a-z-]+)', text, re.M):
        entries.append((unroff(m.group(1)), m.group(2)))
    return entries


def check_severities(where, entries):
    cat = catalogue()
    wrong = ["%s: says %s, notes.def %s" % (code, said, cat[code][1])
             for code, said in entries if code in cat and said != cat[code][1]]
    assert not wrong, "%s gives another usual severity: %s" % (where, wrong)


def test_schema_lists_the_codes():
    schema = json.loads(read("cli", "lcloudctl.schema.json"))
    code = schema["$defs"]["note"]["properties"]["code"]
    assert "enum" in code, "the schema does not list the note codes: %s" % code
    assert len(code["enum"]) == len(set(code["enum"])), "a code is listed twice in the schema"
    same_set("cli/lcloudctl.schema.json", code["enum"])


def test_lcloud_7_lists_the_codes():
    text = section("lcloud.7", "PROBE NOTES")
    codes = [unroff(m.group(1)) for m in re.finditer(r'^\.BR? ([a-z0-9]+(?:\\-[a-z0-9]+)+)(?: ,)?$', text, re.M)]
    same_set("lcloud(7) PROBE NOTES", codes)


def test_lcloudctl_8_lists_the_codes():
    entries = listed_entries(section("lcloudctl.1", "NOTE CODES"))
    same_set("lcloudctl(1) NOTE CODES", [c for c, _ in entries])
    check_severities("lcloudctl(1)", entries)


def test_lcloud_note_get_code_3_lists_the_codes():
    text = read("man", "lcloud_note_get_severity.3")
    start = text.index(".BR lcloud_note_get_code ()\nreturns")
    text = text[start:text.index("Later versions may add codes", start)]
    entries = listed_entries(text)
    same_set("lcloud_note_get_code(3)", [c for c, _ in entries])
    check_severities("lcloud_note_get_code(3)", entries)


def test_every_code_is_made_somewhere():
    lib = ""
    paths = sorted(glob.glob(os.path.join(SRC, "lib", "**", "*.c"), recursive=True))
    assert len(paths) > 40, "the library's sources were not found under lib/ (%d)" % len(paths)
    for path in paths:
        if os.path.basename(path) != "notes.c":
            with open(path) as f:
                lib += f.read()
    unused = [code for code, (ident, _) in catalogue().items() if not re.search(r"\bNOTE_%s\b" % ident, lib)]
    assert not unused, "listed in notes.def but no probe makes them: %s" % unused


def test_tests_look_for_real_codes():
    """A host, vm or binding test that asserts on a misspelt code finds no note and passes for nothing."""
    cat = catalogue()
    pattern = re.compile(r'\["code"\]\s*==\s*"([^"]+)"|\bnotes\(\w+,\s*"([^"]+)"|\["code"\]\s*in\s*\(([^)]*)\)')
    wrong, n = [], 0
    files = []
    for sub in ("tests/host", "tests/vm", "tests/unit", "bindings/python/lcloud", "bindings/python/tests"):
        files += glob.glob(os.path.join(SRC, sub, "*.py"))  # not recursive: fixtures/ is a sysfs copy
    for path in sorted(files):
        if os.path.basename(path) == "test_note_codes.py":
            continue
        with open(path) as f:
            src = f.read()
        for m in pattern.finditer(src):
            codes = [c for c in m.groups()[:2] if c] or re.findall(r'"([^"]+)"', m.group(3))
            for code in codes:
                n += 1
                if code not in cat:
                    wrong.append("%s: %s" % (os.path.relpath(path, SRC), code))
    assert not wrong, "tests look for codes that do not exist: %s" % wrong
    assert n >= 5, "no code comparisons found in the tests (%d): the pattern no longer matches" % n


if __name__ == "__main__":
    main([test_schema_lists_the_codes, test_lcloud_7_lists_the_codes, test_lcloudctl_8_lists_the_codes,
          test_lcloud_note_get_code_3_lists_the_codes, test_every_code_is_made_somewhere,
          test_tests_look_for_real_codes])
