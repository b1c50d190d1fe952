#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lcloudctl's command line as util-linux and git users expect it, over the
captured trees (no root, no devices): a usage error is one line and "Try
'lcloudctl CMD --help' for more information." (never the whole help), for
an unknown option, a missing argument and a missing operand alike, with exit
status 2; --color WHEN works as --color=WHEN; list of a path that is no
block device exits 5 (wrong kind) or 3 (nothing there); check's table gives
each path's reason whole (wrapped on a terminal, never cut); list writes
sizes as lsblk does, -d lists the devices at the top alone, -e and -I filter
them by major number, and RAM disks are left out unless --all."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
from hostlib import main  # noqa: E402

LCLOUDCTL = os.environ["LCLOUDCTL"]
FIXTURES = os.path.join(HERE, "fixtures")
TRY = "Try '%s --help' for more information."


def ctl(*args, env=None):
    return subprocess.run([LCLOUDCTL] + list(args), capture_output=True, text=True, env=env)


def usage_error(who, args, wanted):
    """ARGS must fail with exit 2, nothing on stdout and exactly two lines on stderr: WANTED's words, the hint."""
    p = ctl(*args)
    lines = p.stderr.splitlines()
    assert p.returncode == 2 and p.stdout == "", (args, p.returncode, p.stdout)
    assert len(lines) == 2, (args, p.stderr)
    assert lines[0].startswith(who + ": ") and wanted in lines[0], (args, lines[0])
    assert lines[1] == TRY % who, (args, lines[1])


# every command, with arguments that would otherwise be taken
COMMANDS = [
    ("probe", ["/"]), ("list", []), ("check", ["/", "--size", "4K"]), ("advise", ["/", "--db", "mysql"]),
    ("write", ["/nonexistent", "-O", "0", "-l", "4K", "-p", "1"]), ("read", ["/nonexistent", "-O", "0", "-l", "4K"]),
    ("torture run", ["/nonexistent", "--pages", "1", "--record", "/nonexistent/r"]),
    ("torture verify", ["/nonexistent", "--record", "/nonexistent/r"]), ("replay", ["/nonexistent"]),
    ("udev", ["sda"]), ("diff", ["/nonexistent"]), ("export", ["--prometheus"]),
]


def test_unknown_option_is_one_line():
    usage_error("lcloudctl", ["--no-such-option", "list"], "unknown option '--no-such-option'")
    usage_error("lcloudctl", ["-Z", "list"], "unknown option '-Z'")
    for cmd, rest in COMMANDS:
        words = cmd.split()
        usage_error("lcloudctl " + cmd, words + ["--no-such-option"] + rest, "unknown option '--no-such-option'")
        usage_error("lcloudctl " + cmd, words + ["--no-such-option=1"] + rest, "unknown option '--no-such-option'")
        usage_error("lcloudctl " + cmd, words + ["-Z"] + rest, "unknown option '-Z'")


def test_missing_argument_and_operand():
    usage_error("lcloudctl", ["--sysroot"], "option '--sysroot' needs an argument")
    usage_error("lcloudctl check", ["check", "/", "--size"], "option '--size' needs an argument")
    usage_error("lcloudctl check", ["check", "/", "-s"], "option '-s' needs an argument")
    usage_error("lcloudctl list", ["list", "-o"], "option '-o' needs an argument")
    usage_error("lcloudctl advise", ["advise", "/", "--db"], "option '--db' needs an argument")
    usage_error("lcloudctl read", ["read", "/", "-O", "0", "-l", "4K", "--out"], "option '--out' needs an argument")
    usage_error("lcloudctl", [], "no command given")
    usage_error("lcloudctl", ["frobnicate"], "unknown command 'frobnicate'")
    usage_error("lcloudctl probe", ["probe"], "no PATH given")
    usage_error("lcloudctl check", ["check", "--size", "4K"], "no PATH given")
    usage_error("lcloudctl check", ["check", "/"], "--size is required")
    usage_error("lcloudctl torture", ["torture"], "give 'run' or 'verify'")
    usage_error("lcloudctl torture run", ["torture", "run", "/x"], "give one TARGET")
    usage_error("lcloudctl write", ["write", "/x"], "give one PATH, --offset and --length")
    usage_error("lcloudctl list", ["list", "-e", "x"], "--exclude 'x'")
    usage_error("lcloudctl list", ["list", "-o", "NAME,NOPE"], "unknown column 'NOPE'")
    usage_error("lcloudctl", ["--color=sometimes", "list"], "use auto, always or never")


def test_color_when_in_one_word_or_two():
    tree = os.path.join(FIXTURES, "dm-stack")
    args = ["list", "-o", "NAME,ALIGN"]
    always = ctl("--color=always", "--sysroot", tree, *args)
    assert always.returncode == 0 and "\x1b[31m" in always.stdout, always.stderr  # MISALIGNED in red
    for form in (["--color", "always"], ["--color=always"], ["--color"]):
        p = ctl(*form, "--sysroot", tree, *args)
        assert p.returncode == 0 and p.stdout == always.stdout, (form, p.stderr)
    never = ctl("--sysroot", tree, *args)
    assert "\x1b[" not in never.stdout
    for form in (["--color", "never"], ["--color=never"], ["--color", "auto"]):
        p = ctl(*form, "--sysroot", tree, *args)
        assert p.returncode == 0 and p.stdout == never.stdout, (form, p.stderr)


def test_format_options():
    tree = os.path.join(FIXTURES, "scsi")
    base = ["--sysroot", tree]
    want = ctl(*base, "check", "/dev/sda", "--size", "16K", "--format", "json")
    assert want.returncode == 0 and want.stderr == "" and json.loads(want.stdout)["untorn"] is True, want.stderr
    for form in (["-J"], ["--json"], ["--format=json"]):
        p = ctl(*base, "check", "/dev/sda", "--size", "16K", *form)
        assert p.stdout == want.stdout and p.stderr == "", (form, p.stderr)
    # the old forms work this release, with a note that says what to say instead
    for form in (["-o", "json"], ["--output", "json"]):
        p = ctl(*base, "check", "/dev/sda", "--size", "16K", *form)
        assert p.stdout == want.stdout and p.returncode == 0, form
        assert re.fullmatch(r"lcloudctl check: note: '%s json' is deprecated and goes in 0\.6: say --format json or "
                            r"-J \(.*\)\n" % form[0], p.stderr), p.stderr
    # list's -o is lsblk's: columns
    p = ctl(*base, "list", "-o", "NAME", "-n", "sda")
    assert p.returncode == 0 and p.stdout.split() == ["sda", "sda1", "sda2", "dm-0"], p.stdout
    usage_error("lcloudctl list", ["list", "-o", "json"], "for JSON say -J or --format json")
    # read's data file: --out; the old -o FILE with a note
    p = ctl("read", "/nonexistent/x", "-O", "0", "-l", "4K", "-o", "/nonexistent/out")
    assert p.returncode == 3 and "'-o FILE' is deprecated and goes in 0.6: say --out FILE" in p.stderr, p.stderr
    p = ctl("read", "/nonexistent/x", "-O", "0", "-l", "4K", "--out", "/nonexistent/out")
    assert p.returncode == 3 and "deprecated" not in p.stderr, p.stderr


def test_list_of_a_path_of_the_wrong_kind():
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "file")
        open(f, "w").close()
        for path, code, words in ((d, 5, "not a block device (a directory)"), (f, 5, "not a block device (a file)"),
                                  (os.path.join(d, "missing"), 3, "no such block device")):
            p = ctl("list", path)
            assert p.returncode == code and words in p.stderr and p.stdout.splitlines()[1:] == [], (path, p)
            doc = json.loads(ctl("list", "-J", path).stdout)
            assert doc["blockdevices"] == [] and doc["errors"][0]["path"] == path, doc
            assert doc["errors"][0]["error"]["errno"] == (15 if code == 5 else 2), doc  # ENOTBLK, ENOENT


def row_reasons(text):
    """check's table: {path: its reason, continuation lines joined}."""
    rows, last = {}, None
    for line in text.splitlines()[1:]:
        m = re.match(r"  (rwf_atomic|passthrough|plain_direct|buffered) +(untorn|no|unknown) +(up to \S+ \S+|none|-) +"
                     r"(.*)$", line)
        if m:
            last = m.group(1)
            rows[last] = m.group(4)
        elif last and line.startswith(" " * 40):
            rows[last] += " " + line.strip()
        else:
            last = None
    return rows


def whole_reason(why):
    """A path's reason as the library gives it, past "untorn on PATH: " and without its evidence in brackets."""
    why = re.sub(r"^(not )?untorn on [a-z_]+: ", "", why)
    why = re.sub(r"^unknown on [a-z_]+: ", "", why)
    return re.sub(r" \[[^\]]*\]$", "", why)


def test_check_gives_every_reason_whole():
    cases = [("scsi", "/dev/sda", "16K"), ("stacks", "/dev/md0", "16K"), ("dm-stack", "/dev/sdb1", "16K"),
             ("stacks", "/dev/nvme0n1", "64K")]
    have_script = shutil.which("script") is not None
    for tree, dev, size in cases:
        base = ["--sysroot", os.path.join(FIXTURES, tree), "check", dev, "--size", size]
        paths = {e["io_path"]: e["why"] for e in json.loads(ctl(*base, "--format", "json").stdout)["paths"]}
        # a pipe: each reason on its row's line, whole
        rows = row_reasons(ctl(*base).stdout)
        assert sorted(rows) == sorted(paths), (tree, dev, rows)
        for path, why in paths.items():
            assert rows[path] == whole_reason(why), (tree, dev, path, rows[path], why)
        # a terminal 80 columns wide: wrapped at spaces under the reason column, none longer, none cut
        assert have_script, "script(1) missing: it is in bsdutils, which every Debian has"
        cmd = "stty cols 80; exec " + " ".join(shlex.quote(a) for a in [LCLOUDCTL, "--color=never"] + base)
        out = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, text=True).stdout
        out = out.replace("\r\n", "\n")
        table = [line for line in out.splitlines()[1:] if line.startswith("  ")]
        assert all(len(line) <= 80 for line in table), (tree, dev, [l for l in table if len(l) > 80])
        rows = row_reasons(out)
        for path, why in paths.items():
            assert rows[path] == whole_reason(why), (tree, dev, path, rows[path], why)


def fixture_copy_with_ram_disk(d):
    """The dm-stack tree with a RAM disk (major 1) added as the kernel shows one, to a copy in D."""
    root = os.path.join(d, "tree")
    shutil.copytree(os.path.join(FIXTURES, "dm-stack"), root, symlinks=True)
    dev = os.path.join(root, "sys", "devices", "virtual", "block", "ram0")
    os.makedirs(os.path.join(dev, "queue"))
    for name, value in (("dev", "1:0"), ("size", "131072"), ("ro", "0"), ("removable", "0"),
                        ("queue/logical_block_size", "512"), ("queue/physical_block_size", "4096"),
                        ("queue/minimum_io_size", "4096"), ("queue/optimal_io_size", "0"), ("queue/rotational", "0")):
        with open(os.path.join(dev, name), "w") as f:
            f.write(value + "\n")
    for link in (os.path.join(root, "sys", "class", "block", "ram0"), os.path.join(root, "sys", "block", "ram0")):
        if os.path.isdir(os.path.dirname(link)):
            os.symlink(os.path.relpath(dev, os.path.dirname(link)), link)
    return root


def sysfs_tops(root):
    """The devices of a tree built on no other: no partition file, no slaves (read from the tree itself)."""
    block = os.path.join(root, "sys", "class", "block")
    tops = []
    for name in os.listdir(block):
        real = os.path.realpath(os.path.join(block, name))
        slaves = os.path.join(real, "slaves")
        if not os.path.exists(os.path.join(real, "partition")) and not (os.path.isdir(slaves) and os.listdir(slaves)):
            tops.append(name)
    return tops


def majors(root):
    block = os.path.join(root, "sys", "class", "block")
    out = {}
    for name in os.listdir(block):
        with open(os.path.join(block, name, "dev")) as f:
            out[name] = int(f.read().split(":")[0])
    return out


def names(*args):
    p = ctl(*args)
    assert p.returncode == 0, (args, p.stderr)
    return sorted(p.stdout.split())


def test_list_nodeps_exclude_include():
    with tempfile.TemporaryDirectory() as d:
        root = fixture_copy_with_ram_disk(d)
        base = ["--sysroot", root, "list", "-n", "-o", "NAME"]
        every = sorted(os.listdir(os.path.join(root, "sys", "class", "block")))
        # RAM disks left out unless --all, as lsblk's default -e 1
        assert names(*base) == [n for n in every if n != "ram0"], names(*base)
        assert names(*base, "--all") == every
        assert names(*base, "ram0") == ["ram0"]  # named: listed
        # -d: the devices at the top alone, by the tree's own partition files and slaves
        tops = sysfs_tops(root)
        assert names(*base, "-d", "--all") == sorted(tops), (names(*base, "-d", "--all"), tops)
        assert names(*base, "-d", "sdb") == ["sdb"] and names(*base, "sdb") == ["dm-0", "sdb", "sdb1"]
        # -e and -I: by the majors the tree gives its devices, at the top; what is built on one goes with it
        maj = majors(root)
        scsi = maj["sdb"]
        left = names(*base, "-e", str(scsi))
        assert left == sorted(n for n in every if n in tops and maj[n] != scsi), left  # ram0 too: -e replaces 1
        assert "dm-0" not in left and "sdb1" not in left
        kept = names(*base, "-I", str(scsi))
        assert kept == ["dm-0", "sdb", "sdb1", "sdc", "sdc1"], kept
        usage_error("lcloudctl list", ["--sysroot", root, "list", "-e", "1", "-I", "8"], "--exclude and --include")


def lsblk_size(v):
    """util-linux's size_to_human_string(SIZE_SUFFIX_1LETTER), written again from its documented rule."""
    exp = 0
    while exp < 60 and v >= 1 << (exp + 10):
        exp += 10
    whole, frac = v >> exp, v & ((1 << exp) - 1)
    digit = 0
    if frac:
        digit = ((frac * 1000 >> exp) + 50) // 100
        if digit == 10:
            whole, digit = whole + 1, 0
    return "%d%s%s" % (whole, ".%d" % digit if digit else "", "BKMGTPE"[exp // 10])


def test_list_sizes_as_lsblk():
    for tree in ("scsi", "stacks", "dm-stack", "nvme-qemu"):
        base = ["--sysroot", os.path.join(FIXTURES, tree), "list", "-r", "-n", "-o",
                "NAME,SIZE,AWU-MAX,AW-BOUND,LOG-SEC"]
        human = [l.split() for l in ctl(*base).stdout.splitlines()]
        exact = [l.split() for l in ctl(*base, "-b").stdout.splitlines()]
        assert human and len(human) == len(exact)
        for h, b in zip(human, exact):
            assert h[0] == b[0] and h[4] == b[4], (h, b)  # LOG-SEC in bytes either way, as lsblk
            for i in (1, 2, 3):
                assert h[i] == ("-" if b[i] == "-" else lsblk_size(int(b[i]))), (tree, h, b)


if __name__ == "__main__":
    main([test_unknown_option_is_one_line, test_missing_argument_and_operand, test_color_when_in_one_word_or_two,
          test_format_options, test_list_of_a_path_of_the_wrong_kind, test_check_gives_every_reason_whole,
          test_list_nodeps_exclude_include, test_list_sizes_as_lsblk])
