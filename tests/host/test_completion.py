#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The bash completion (completion/lcloudctl.bash), sourced by a real bash
with this build's lcloudctl, must offer the commands, each command's options
(read from its --help), the values of --db, --path, -o and --backend, block
device names for udev, and files elsewhere; every value it offers, as
--opt=value and as --opt value, is one lcloudctl's own parser takes; zsh
loads the same through bashcompinit."""
import os
import re
import shutil
import subprocess

from hostlib import LCLOUDCTL, main

HERE = os.path.dirname(os.path.abspath(__file__))
COMPLETION = os.path.join(HERE, "..", "..", "completion", "lcloudctl.bash")


def complete(*words):
    """Candidates bash offers after WORDS (the last one is the word being completed)."""
    words = [os.path.realpath(LCLOUDCTL)] + list(words)
    script = 'source "%s"\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\n_lcloudctl\nprintf "%%s\\n" "${COMPREPLY[@]}"\n' % (
        COMPLETION, " ".join("'%s'" % w for w in words), len(words) - 1)
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return [c for c in p.stdout.splitlines() if c]


def test_commands_and_options():
    top = subprocess.run([LCLOUDCTL, "--help"], capture_output=True, text=True).stdout
    commands = [l.split()[0] for l in top.split("Commands:")[1].split("Global options:")[0].splitlines() if l.strip()]
    assert sorted(complete("")) == sorted(commands), complete("")
    assert complete("ch") == ["check"]
    assert complete("to") == ["torture"]
    opts = complete("check", "--")
    for o in ("--size", "--path", "--format", "--no-confirm", "--help"):
        assert o in opts, (o, opts)
    assert "--sysroot" in complete("--") and "--color" in complete("--")
    for o in ("--output", "--output-all", "--noheadings", "--raw", "--pairs", "--json", "--tree", "--size"):
        assert o in complete("list", "--"), (o, complete("list", "--"))
    assert "--prometheus" in complete("export", "--")
    assert "--human-readable" in complete("probe", "--")


def test_values():
    assert complete("check", "--path", "pl") == ["plain_direct"]
    assert sorted(complete("advise", "--db", "")) == ["mariadb", "mysql", "postgresql"]
    assert sorted(complete("advise", "--disk-model", "")) == ["bw-bound", "gp3", "hyperdisk-balanced", "ops-bound"]
    assert sorted(complete("probe", "-J", "--format", "")) == ["json", "normal"]
    assert sorted(complete("write", "x", "--backend", "")) == ["auto", "io_uring", "passthrough", "sync"]
    assert sorted(complete("torture", "")) == ["run", "verify"]
    assert "journal" in complete("write", "f", "--hint", "")
    assert sorted(complete("probe", "--format", "")) == ["json", "normal"]
    # --color WHEN and --color=WHEN both (bash splits --color=al into --color, =, al; right after the
    # "=" the word being completed is "=" itself), and the command after either
    assert sorted(complete("--color", "=")) == ["always", "auto", "never"]
    assert complete("--color", "=", "al") == ["always"]
    assert sorted(complete("--color", "")) == ["always", "auto", "never"]
    assert complete("--color", "=", "always", "list", "-o", "AWU-MA") == ["AWU-MAX"]
    assert complete("--color", "always", "list", "-o", "AWU-MA") == ["AWU-MAX"]
    assert "check" in complete("--color", "always", "")
    # list's -d and -P take no value (advise's -d and torture's -P do)
    assert "mariadb" not in complete("list", "-d", "") and "16K" not in complete("list", "-P", "")
    # list's -o is lsblk's: columns, after a comma or a + too
    assert "AWU-MAX" in complete("list", "-o", "") and "json" not in complete("list", "-o", "")
    assert complete("list", "-o", "NAME,MOD") == ["NAME,MODEL"]
    assert complete("list", "-o", "+TR") == ["+TRAN"]
    assert sorted(complete("list", "--format", "")) == ["json", "normal"]
    # the same columns as list --help names
    help_text = subprocess.run([LCLOUDCTL, "list", "--help"], capture_output=True, text=True).stdout
    block = help_text.split("Columns:")[1].split("The verdict columns")[0]
    named = re.findall(r"(?:^  |\s{2,})([A-Z][A-Z-]+)(?=\s)", block, re.M)
    assert sorted(set(named)) == sorted(complete("list", "-o", "")), (named, complete("list", "-o", ""))
    # read's --out (and the old -o) is the output file, not a format
    assert "json" not in complete("read", "/dev/null", "-o", "")
    assert "json" not in complete("read", "/dev/null", "--out", "")


FIXTURES = os.path.join(HERE, "..", "unit", "fixtures", "stacks")

# (words before the option, the option, words after it): a harmless command line for the real parser
VALUE_OPTIONS = [
    ((), "--color", ("--version",)),
    (("--sysroot", FIXTURES, "check", "--no-confirm", "--size", "16K"), "--path", ("/dev/nvme0n1",)),
    (("--sysroot", FIXTURES, "check", "--no-confirm", "--size", "16K"), "-p", ("/dev/nvme0n1",)),
    (("--sysroot", FIXTURES, "probe"), "--format", ("/dev/nvme0n1",)),

    (("--sysroot", FIXTURES, "list"), "--format", ()),
    (("advise", "--no-confirm"), "--db", ("/nonexistent",)),
    (("advise", "--db", "mariadb"), "--disk-model", ("/nonexistent",)),
    (("write", "-O", "0", "-l", "4K", "-p", "1"), "--backend", ("/nonexistent",)),
    (("write", "-O", "0", "-l", "4K", "-p", "1"), "--hint", ("/nonexistent",)),
    (("write", "-O", "0", "-l", "4K", "-p", "1"), "--lifetime", ("/nonexistent",)),
    (("read", "-O", "0", "-l", "4K", "--out", "/nonexistent/out"), "--hint", ("/nonexistent",)),
    (("torture", "run", "--pages", "1", "--record", "/nonexistent/r"), "--path", ("/nonexistent/t",)),
]


def test_every_offered_value_is_one_the_parser_takes():
    """Each value completion offers, in each form it offers it (--opt=v, --opt v), is taken by lcloudctl's
    own parser: never a usage error (exit 2) naming the option or its value."""
    checked = 0
    for before, opt, after in VALUE_OPTIONS:
        words = list(before)
        if words and words[0] == "--sysroot":
            words = words[2:]  # completion does not need the tree
        forms = [("=", complete(*words, opt, "=")), (" ", complete(*words, opt, ""))]
        for form, offered in forms:
            for v in offered:
                if opt.startswith("--") and form == "=":
                    args = list(before) + [opt + "=" + v] + list(after)
                elif form == "=":
                    continue  # -o=json is no short option's form
                else:
                    args = list(before) + [opt, v] + list(after)
                p = subprocess.run([LCLOUDCTL] + args, capture_output=True, text=True)
                assert p.returncode != 2, ("completion offers %r but the parser refuses it" % " ".join(args),
                                           p.stderr)
                checked += 1
        assert complete(*words, opt, "=") or opt.startswith("-") and not opt.startswith("--"), (opt, "no values")
    assert checked >= 40, checked


def test_devices_and_paths():
    names = sorted(os.listdir("/sys/class/block"))
    assert sorted(complete("udev", "")) == names
    assert "/dev/" in complete("probe", "/de") or "/dev" in complete("probe", "/de")
    assert all(os.path.isdir(d) for d in complete("--sysroot", "/"))


def test_zsh_loads_it():
    if not shutil.which("zsh"):
        raise AssertionError("zsh missing: scripts/install-deps installs it for this test")
    zfile = os.path.join(HERE, "..", "..", "completion", "_lcloudctl.in")
    with open(zfile) as f:
        text = f.read().replace("@BASH_COMPLETION@", os.path.realpath(COMPLETION))
    p = subprocess.run(["zsh", "-f", "-c", "autoload -U compinit && compinit -u -D; " + text +
                        "\nprint -r -- ${_comps[lcloudctl]}"], capture_output=True, text=True)
    assert p.returncode == 0 and "_bash_complete" in p.stdout, (p.stdout, p.stderr)


if __name__ == "__main__":
    main([test_commands_and_options, test_values, test_every_offered_value_is_one_the_parser_takes,
          test_devices_and_paths, test_zsh_loads_it])
