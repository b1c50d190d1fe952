#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every exit code the docs give is the tool's own. The table is cli/exit_codes.h's
enum of EXIT_* values; README.md's "Exit status:" paragraph and lcloudctl(1)'s
EXIT STATUS section must list exactly its codes, and every other mention of
an exit status in README.md and lcloudctl(1) ("exit 9",
"exit status 8", "exit 9/10") must stand in a sentence that speaks of what
that code means (a torn page is 9, never 8). A script written from the docs
then reads a torn disk as torn."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
from hostlib import main  # noqa: E402

SRC = os.environ["SOURCE_ROOT"]

# words one of which a sentence giving the code must use: what the code means
MEANING = {
    0: r"success|clean|untorn|nothing changed|intact|no finding",
    1: r"fail|error|short|could not|cannot",
    2: r"usage|option|invalid|both|neither|larger than|terminal|refused|unknown command|argument",
    3: r"not found|no such|missing|gone|removed|cannot be found|could not be listed|not exist|no block device",
    4: r"permission|root|access|privilege",
    5: r"wrong kind|directory|character device|fifo|socket|symbolic link|not a |malformed|truncated|"
       r"says where|refused|invalid|not json|no device|sysroot|other path",
    6: r"not untorn|\bno\b|not",
    7: r"refus|in use|mounted|held|swap|sysroot|signature|before submission|not atomic",
    8: r"unknown|evidence|could not be read|cannot read|unreadable",
    9: r"torn|damaged|tear",
    10: r"lost",
    11: r"tearable|could tear|can tear",
    12: r"changed",
    13: r"weaker",
}


def tool_table():
    with open(os.path.join(SRC, "cli", "exit_codes.h")) as f:
        text = f.read()
    codes = {name: int(v) for name, v in re.findall(r"\b(EXIT_[A-Z_]+) = (\d+)", text)}
    assert len(codes) >= 14, codes
    return set(codes.values())


def roff_plain(text):
    text = re.sub(r"\\f[BIRP]", "", text).replace("\\-", "-").replace("\\(em", "-")
    return re.sub(r"^\.[A-Z]{1,2} ?", "", text, flags=re.M)


def test_tables_match_the_tool():
    codes = tool_table()
    with open(os.path.join(SRC, "README.md")) as f:
        readme = f.read()
    m = re.search(r"Exit status: (.*?)\n\n", readme, re.S)
    assert m, "README.md has no 'Exit status:' paragraph"
    listed = {int(n) for n in re.findall(r"(?:^|[,:]\s+|\n)(\d+)\s", "Exit status: " + m.group(1))}
    assert listed == codes, "README's exit statuses %s, the tool's %s" % (sorted(listed), sorted(codes))
    with open(os.path.join(SRC, "man", "lcloudctl.1")) as f:
        man = f.read()
    section = man.split(".SH EXIT STATUS", 1)[1].split("\n.SH ", 1)[0]
    listed = {int(n) for n in re.findall(r"^\.B (\d+)$", section, re.M)}
    assert listed == codes, "lcloudctl(1)'s exit statuses %s, the tool's %s" % (sorted(listed), sorted(codes))


def mentions(text):
    """(code, sentence) for every 'exit N', 'exit status N', 'exit N/M', 'exit N or M': the sentence around
    it in prose, the line in a code block."""
    for m in re.finditer(r"exit(?: status(?:es)?)?:? (\d+)((?:(?:/| or |, )\d+)*)", text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        line = text[line_start:line_end if line_end >= 0 else len(text)]
        if line.startswith("    ") or line.lstrip().startswith("$ "):
            sentence = line
        else:
            starts = [text.rfind(s, 0, m.start()) for s in (". ", ".\n", "\n\n")]
            start = max(starts) + 2 if max(starts) >= 0 else 0
            ends = [i for i in (text.find(s, m.end()) for s in (". ", ".\n", "\n\n")) if i >= 0]
            sentence = text[start:min(ends) if ends else len(text)]
        for n in [m.group(1)] + re.findall(r"\d+", m.group(2)):
            yield int(n), sentence.lower()


def test_every_mention_means_its_code():
    codes = tool_table()
    bad = []
    for rel in ("README.md", os.path.join("docs", "GUIDE.md"), os.path.join("man", "lcloudctl.1")):
        path = os.path.join(SRC, rel)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            text = f.read()
        if rel.endswith(".8"):
            text = roff_plain(text.split(".SH EXIT STATUS", 1)[0])
        n = 0
        for code, sentence in mentions(text):
            n += 1
            if code not in codes:
                bad.append("%s: exit %d is no exit status of the tool: %s" % (rel, code, sentence.strip()))
            elif not re.search(MEANING[code], sentence):
                bad.append("%s: exit %d in a sentence that does not say what %d means: %s"
                           % (rel, code, code, " ".join(sentence.split())))
        if rel == "README.md":
            assert n >= 5, "too few exit mentions found in README.md (%d): the pattern is broken" % n
    assert not bad, "\n".join(bad)


def test_checker_catches_a_wrong_code():
    # the checker itself can fail: "exit 8: the torn page" was in README.md once
    wrong = list(mentions("    $ lcloudctl torture verify crash.img --record pages.rec        # exit 8: the torn page\n"))
    assert wrong and not re.search(MEANING[8], wrong[0][1]), wrong


if __name__ == "__main__":
    main([test_tables_match_the_tool, test_every_mention_means_its_code, test_checker_catches_a_wrong_code])
