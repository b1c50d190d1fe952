#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Everything that reaches a terminal is escaped once: a file whose name
holds ESC [ 3 1 m, a newline and a byte that is not UTF-8, given to probe,
check, write, read and diff (a fingerprint whose saved path, kernel release
and a fact hold escapes too), in normal output and in error messages, with
--color=always and never; and list's MODEL and MOUNTPOINT columns, read
from a captured tree with a crafted model and mountinfo, in the table, -r,
-P and JSON. Text shows each such byte as \\xNN exactly once (never
\\x5cx1b); only the tool's own colour codes remain, and only when asked."""
import json
import os
import shutil
import subprocess
import tempfile

from hostlib import LCLOUDCTL, main, scratch_dir

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "unit", "fixtures")
NAME = b"esc\x1b[31mred\nline\xff"
SHOWN = rb"esc\x1b[31mred\x0aline\xff"
COLOURS = (b"\x1b[32m", b"\x1b[31m", b"\x1b[33m", b"\x1b[0m")
ENV = dict(os.environ, LC_ALL="C.UTF-8")


def ctl(*args, codes=(0,)):
    """lcloudctl with bytes arguments; output as bytes (a raw byte must not be decoded away)."""
    argv = [os.fsencode(LCLOUDCTL)] + [a if isinstance(a, bytes) else a.encode() for a in args]
    p = subprocess.run(argv, capture_output=True, env=ENV)
    assert p.returncode in codes, (args, p.returncode, p.stdout, p.stderr)
    return p


def terminal_safe(out, color, what):
    """No control byte but \\n and \\t, and no colour code unless COLOR; valid UTF-8; no double escape."""
    if color:
        # the name's own ESC [ 3 1 m must not pass as one of ours
        assert b"\x1b[31mred" not in out, (what, out)
        for c in COLOURS:
            out = out.replace(c, b"")
    bad = sorted({b for b in out if (b < 0x20 and b not in (0x09, 0x0a)) or b == 0x7f})
    assert not bad, (what, bad, out)
    out.decode("utf-8")  # a byte that is not UTF-8 is shown as \xNN, never passed on
    assert b"\\x5cx" not in out, ("escaped twice", what, out)


def every_color(*args, codes=(0,), shows=SHOWN, where="stdout"):
    """Run ARGS with --color=always and never; both streams safe; SHOWS in WHERE."""
    for color in ("always", "never"):
        p = ctl("--color=" + color, *args, codes=codes)
        terminal_safe(p.stdout, color == "always", (args, "stdout"))
        terminal_safe(p.stderr, color == "always", (args, "stderr"))
        out = p.stdout if where == "stdout" else p.stderr
        if shows is not None:
            assert shows in out, (args, where, shows, out)
        if color == "never":
            assert b"\x1b" not in p.stdout + p.stderr, (args, p.stdout, p.stderr)


def test_commands_on_a_hostile_name():
    with scratch_dir() as d:
        path = os.path.join(os.fsencode(d), NAME)
        with open(path, "wb") as f:
            f.write(b"\0" * 65536)
        missing = path + b"-missing"
        every_color("probe", path)
        every_color("probe", missing, codes=(3,), where="stderr")
        every_color("check", "--size", "4K", path, codes=(0, 6, 8))
        every_color("check", "--size", "4K", missing, codes=(3,), where="stderr")
        every_color("write", "--offset", "0", "--length", "4096", "--pattern", "0", path)
        every_color("write", "--offset", "0", "--length", "4096", "--pattern", "0", missing, codes=(3,),
                    where="stderr")
        # a message the library writes quotes the path: escaped once, with the rest of the message
        os.mkdir(path + b"-dir")
        every_color("write", "--offset", "0", "--length", "4096", "--pattern", "0", path + b"-dir",
                    codes=(1, 5), shows=SHOWN + b"-dir is a directory", where="stderr")
        every_color("write", "--offset", "0", "--length", "4096", "--input", missing, path, codes=(2,),
                    shows=SHOWN + b"-missing", where="stderr")
        every_color("read", "--offset", "0", "--length", "4096", "--out", path, path, codes=(7,),
                    where="stderr")
        out = path + b".out"
        for color in ("always", "never"):
            if os.path.exists(out):
                os.unlink(out)
            p = ctl("--color=" + color, "read", "--offset", "0", "--length", "4096", "--out", out, path)
            terminal_safe(p.stderr, color == "always", "read report")
            assert SHOWN in p.stderr, p.stderr
        # arguments echoed back in usage errors
        every_color("check", "--size", NAME, path, codes=(2,), shows=rb"'esc\x1b[31mred\x0aline\xff'",
                    where="stderr")
        every_color("list", "-o", b"NAME," + NAME, codes=(2,), shows=SHOWN, where="stderr")
        every_color("probe", "-o", NAME, path, codes=(2,), shows=SHOWN, where="stderr")


def test_diff_of_a_hostile_fingerprint():
    with scratch_dir() as d:
        # a path JSON can carry exactly: ESC and a newline (a byte that is not UTF-8 it cannot)
        path = os.path.join(d, "fp\x1b[31mred\nline")
        shown = rb"fp\x1b[31mred\x0aline"
        with open(path, "wb") as f:
            f.write(b"\0" * 65536)
        fp = os.path.join(d, "saved\x1b[33m.fp")
        ctl("probe", "--save", fp, path)
        with open(fp) as f:
            doc = json.load(f)
        assert doc["probe"]["path"] == path, doc["probe"]["path"]
        doc["kernel"]["release"] = "6.1.0-\x1b]0;owned\x07evil"
        layer = doc["probe"]["layers"][0]
        key = next(k for k, v in layer["facts"].items() if isinstance(v, str) and k != "dev")
        layer["facts"][key] = "rw\x1b[2J\x9bx"
        # a verdict that was stronger: diff names the saved path; a hostile word in a verdict field
        doc["probe"]["verdict"]["rwf_atomic"]["max_untorn_bytes"] = 1 << 40
        doc["probe"]["verdict"]["rwf_atomic"]["above_max"] = "no\x1b[5m"
        with open(fp, "w") as f:
            json.dump(doc, f)
        for color in ("always", "never"):
            p = ctl("--color=" + color, "diff", fp, codes=(13,))
            terminal_safe(p.stdout, color == "always", "diff")
            terminal_safe(p.stderr, color == "always", "diff stderr")
            assert rb"kernel: 6.1.0-\x1b]0;owned\x07evil -> " in p.stdout, p.stdout
            # a fact's value is shown as JSON: json-c's \u001b once, the C1 control as \xNN
            assert b'"rw\\u001b[2J\\xc2\\x9bx"' in p.stdout, p.stdout
            assert rb"no\x1b[5m -> no" in p.stdout, p.stdout
            assert shown + b": a verdict got weaker since " + d.encode() + rb"/saved\x1b[33m.fp" in p.stdout, p.stdout
        # a PATH given that is not there (the saved path of a vanished file is issue 19's use-after-free)
        p = ctl("--color=never", "diff", fp, path + "-gone", codes=(3,))
        terminal_safe(p.stderr, False, "diff of a missing path")
        assert shown + b"-gone: No such file" in p.stderr, p.stderr
        p = ctl("--color=never", "diff", fp + "-missing", codes=(3,))
        assert rb"saved\x1b[33m.fp-missing" in p.stderr and b"\x1b" not in p.stderr, p.stderr
        # JSON stays valid and carries the characters
        p = ctl("diff", "--format", "json", fp, codes=(13,))
        assert b"\x1b" not in p.stdout and b"\xc2\x9b" not in p.stdout, p.stdout
        report = json.loads(p.stdout)
        assert report["kernel_old"] == "6.1.0-\x1b]0;owned\x07evil", report["kernel_old"]


def crafted_tree():
    """The dm-stack capture with a model holding escapes and a mount point with a space, ESC and a newline."""
    d = os.path.join(os.fsencode(tempfile.mkdtemp(prefix="lcloud-escape-")), b"root")
    shutil.copytree(os.path.join(os.fsencode(FIXTURES), b"dm-stack"), d, symlinks=True)
    model = os.path.join(os.path.realpath(os.path.join(d, b"sys/class/block/sdb")), b"device", b"model")
    with open(model, "wb") as f:
        f.write(b"Pers\x1b[31mDisk\x9b2J\xff\xc3\xa9   \n")  # sysfs pads with spaces
    with open(os.path.join(d, b"sys/class/block/sdb1/dev"), "rb") as f:
        devno = f.read().strip()
    os.makedirs(os.path.join(d, b"proc", b"self"))
    with open(os.path.join(d, b"proc/self/mountinfo"), "wb") as f:
        # the kernel writes space, tab, newline and backslash as octal; ESC as it is
        f.write(b"36 1 " + devno + b" / /mnt/my\\040data\x1b[31m\\012x rw,relatime shared:1 - ext4 /dev/sdb1 rw\n")
    return d


def test_list_model_and_mountpoint():
    root = crafted_tree()
    try:
        cols = ("-o", "NAME,MODEL,MOUNTPOINT")
        model = rb"Pers\x1b[31mDisk\x9b2J\xff"
        for color in ("always", "never"):
            p = ctl("--color=" + color, "--sysroot", root, "list", *cols, "sdb", "sdb1")
            terminal_safe(p.stdout, color == "always", "list")
            # lsblk's table: control characters and bytes that are not UTF-8 as \xNN, printable UTF-8 and spaces kept
            assert model + "é".encode() in p.stdout, p.stdout
            assert rb"/mnt/my data\x1b[31m\x0ax" in p.stdout, p.stdout
        # -r: lsblk's raw rules, a space too is \x20
        p = ctl("--sysroot", root, "list", "-r", *cols, "sdb1")
        terminal_safe(p.stdout, False, "list -r")
        assert rb"/mnt/my\x20data\x1b[31m\x0ax" in p.stdout and model in p.stdout, p.stdout
        # -P: quoted, as lsblk -P
        p = ctl("--sysroot", root, "list", "-P", *cols, "sdb1")
        terminal_safe(p.stdout, False, "list -P")
        assert rb'MOUNTPOINT="/mnt/my data\x1b[31m\x0ax"' in p.stdout, p.stdout
        assert b'MODEL="' + model in p.stdout, p.stdout
        # JSON: the characters themselves, a byte that is not UTF-8 as the character of its value
        p = ctl("--sysroot", root, "list", "-J", *cols, "sdb1")
        assert b"\x1b" not in p.stdout and b"\xc2\x9b" not in p.stdout, p.stdout
        dev = json.loads(p.stdout)["blockdevices"][0]
        assert dev["mountpoint"] == "/mnt/my data\x1b[31m\nx", dev
        assert dev["model"] == "Pers\x1b[31mDisk\x9b2J\xffé", dev
        # a device the user named that is not there is echoed back escaped
        p = ctl("--color=never", "--sysroot", root, "list", NAME, codes=(3,))
        terminal_safe(p.stderr, False, "list error")
        assert SHOWN + b": no such block device" in p.stderr, p.stderr
    finally:
        shutil.rmtree(os.path.dirname(root), ignore_errors=True)


if __name__ == "__main__":
    main([test_commands_on_a_hostile_name, test_diff_of_a_hostile_fingerprint, test_list_model_and_mountpoint])
