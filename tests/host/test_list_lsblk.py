#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lcloudctl list against lsblk itself on the same real devices: loop devices
with chosen numbers (a two-digit and a three-digit name, so that sorting by
name and by device number differ), one with 4 KiB sectors, one partitioned,
of sizes that lsblk writes with and without a decimal (1.9G, 1.5G, 64M).
The order, the TYPE word, the sizes, the sector and I/O sizes, what a named
device brings with it (its partitions), -d, -e and -I, MOUNTPOINTS of a
partition mounted twice, the column order of the columns both have, and the
tree's characters under a UTF-8 locale, a C locale and --ascii must be what
lsblk prints."""
import contextlib
import fcntl
import json
import os
import stat
import subprocess
import time

from hostlib import LCLOUDCTL, main, need_root, need_tool, run, scratch_dir

LOOP_MAJOR = 7
LOOP_CTL_REMOVE = 0x4C81
COLUMNS = "NAME,TYPE,LOG-SEC,PHY-SEC,MIN-IO,OPT-IO"
# 1.94 GiB (lsblk: 1.9G, its thousandths rounded to one decimal), 1.5 GiB (4 KiB sectors), 64 MiB
SIZES = [2083058688, 1536 << 20, 64 << 20]


def loop_is_free(n):
    """No file attached to loopN (or no loopN yet); numbers other tests take with losetup -f are far below."""
    return not os.path.exists("/sys/block/loop%d/loop/backing_file" % n)


def pick(start, count):
    free = [n for n in range(start, start + 200) if loop_is_free(n)]
    assert len(free) >= count, "no free loop numbers from %d" % start
    return free[:count]


@contextlib.contextmanager
def numbered_loops(d):
    """loopA and loopB (two digits), loopC (three digits, partitioned), loopB with 4 KiB sectors.

    Every device node, loop device and image made here is removed again,
    the loop devices through /dev/loop-control, as losetup -d leaves them.
    """
    two = pick(57, 2)
    three = pick(503, 1)
    made_nodes, made_loops, bound = [], [], []
    try:
        for n in two + three:
            node = "/dev/loop%d" % n
            if not os.path.exists("/sys/block/loop%d" % n):
                made_loops.append(n)
            if not os.path.exists(node):
                os.mknod(node, 0o660 | stat.S_IFBLK, os.makedev(LOOP_MAJOR, n))
                made_nodes.append(node)
            image = os.path.join(d, "img%d" % n)
            with open(image, "wb") as f:
                f.truncate(SIZES[(two + three).index(n)])  # sparse
            args = ["losetup"]
            if n == two[1]:
                args += ["--sector-size", "4096"]
            run(args + [node, image], check=True)
            bound.append(node)
        disk = "/dev/loop%d" % three[0]
        subprocess.run(["sfdisk", "-q", disk], input="label: gpt\n,16M\n,16M\n", text=True, capture_output=True)
        run(["partx", "-a", disk])
        run(["udevadm", "settle", "-t", "5"])
        assert os.path.exists("/sys/block/loop%d/loop%dp2" % (three[0], three[0])), "no partitions on " + disk
        yield ["/dev/loop%d" % n for n in two + three], disk
    finally:
        for node in bound:
            run(["losetup", "-d", node])
        if made_loops:
            fd = os.open("/dev/loop-control", os.O_RDWR)
            try:
                for n in made_loops:
                    for _ in range(10):  # udev may still hold it for a moment after losetup -d
                        try:
                            fcntl.ioctl(fd, LOOP_CTL_REMOVE, n)
                            break
                        except OSError:
                            time.sleep(0.2)
            finally:
                os.close(fd)
        for node in made_nodes:
            os.unlink(node)


def locale_env(lang):
    """The environment with LANG=LANG (none when None) and no LC_* overriding it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LC_") and k != "LANG"}
    if lang:
        env["LANG"] = lang
    return env


def both(ours, theirs, devs, env=None):
    """lcloudctl list OURS DEVS and lsblk THEIRS DEVS, same environment; both must succeed."""
    o = subprocess.run([LCLOUDCTL, "list"] + ours + devs, capture_output=True, text=True, env=env)
    t = subprocess.run(["lsblk"] + theirs + devs, capture_output=True, text=True, env=env)
    assert o.returncode == 0, (ours, o.stderr)
    assert t.returncode == 0, (theirs, t.stderr)
    return o.stdout, t.stdout


def words(text):
    """The table's cells line by line: libsmartcols pads each tool's columns to its own width hints."""
    return [line.split() for line in text.splitlines()]


# Each check gets the loop devices (the two-digit ones first, then the partitioned disk) and the disk.

def test_raw_order_and_sizes(devs, disk):
    """-r: lsblk's order whatever the order given (device number, a disk's partitions after it), sizes in bytes."""
    given = sorted(devs, reverse=True)
    ours, theirs = both(["-r", "-n", "-o", COLUMNS], ["-r", "-n", "-o", COLUMNS], given)
    assert ours == theirs, (ours, theirs)
    names = [w[0] for w in words(ours)]
    assert names.index(os.path.basename(devs[0])) < names.index(os.path.basename(disk)), names
    assert any(w[2] == "4096" for w in words(ours)), ours  # LOG-SEC in bytes, not "4KiB"


def test_type_word(devs, disk):
    ours, theirs = both(["-n", "-o", "NAME,TYPE", "-T"], ["-n", "-o", "NAME,TYPE"], [disk], locale_env("C"))
    assert [w[-1] for w in words(ours)] == ["loop", "part", "part"] == [w[-1] for w in words(theirs)], ours


def test_pairs(devs, disk):
    ours, theirs = both(["-P", "-o", COLUMNS], ["-P", "-o", COLUMNS], sorted(devs, reverse=True))
    assert ours == theirs, (ours, theirs)


def test_flat_table(devs, disk):
    """Without a tree the table is lsblk -l's: each device once, by dev_t value."""
    given = sorted(devs, reverse=True)
    ours, theirs = both(["-o", COLUMNS], ["-l", "-o", COLUMNS], given)
    assert words(ours) == words(theirs), (ours, theirs)
    ours, theirs = both(["-l", "-o", COLUMNS], ["-l", "-o", COLUMNS], given)
    assert words(ours) == words(theirs), (ours, theirs)


def test_named_disk_keeps_partitions(devs, disk):
    ours, theirs = both(["-o", "NAME,TYPE"], ["-l", "-o", "NAME,TYPE"], [disk])
    assert words(ours) == words(theirs) and len(words(ours)) == 4, (ours, theirs)
    ours, theirs = both(["-T", "-o", "NAME,TYPE"], ["-o", "NAME,TYPE"], [disk], locale_env("C.UTF-8"))
    assert words(ours) == words(theirs), (ours, theirs)


def test_json(devs, disk):
    """lsblk -J -l's flat list and lsblk -J's tree: the same keys, words and numbers."""
    given = sorted(devs, reverse=True)
    ours, theirs = both(["-J", "-o", COLUMNS], ["-J", "-l", "-o", COLUMNS], given)
    assert json.loads(ours)["blockdevices"] == json.loads(theirs)["blockdevices"], (ours, theirs)
    ours, theirs = both(["-J", "-T", "-o", COLUMNS], ["-J", "-o", COLUMNS], given)
    assert json.loads(ours)["blockdevices"] == json.loads(theirs)["blockdevices"], (ours, theirs)


def test_tree_characters(devs, disk):
    """Line characters under a UTF-8 locale, ASCII under C, POSIX or no locale at all."""
    seen = {}
    for lang in ("C.UTF-8", "C", "POSIX", None):
        ours, theirs = both(["-T", "-o", "NAME,TYPE"], ["-o", "NAME,TYPE"], sorted(devs), locale_env(lang))
        assert words(ours) == words(theirs), (lang, ours, theirs)
        seen[lang] = ours
    assert "\u2514\u2500" in seen["C.UTF-8"], seen
    assert "`-" in seen["C"] and "\u2500" not in seen["C"], seen


def test_ascii_option(devs, disk):
    for opt in ("-i", "--ascii"):
        ours, theirs = both(["-T", opt, "-o", "NAME,TYPE"], [opt, "-o", "NAME,TYPE"], [disk], locale_env("C.UTF-8"))
        assert words(ours) == words(theirs) and "`-" in ours and "\u2500" not in ours, (opt, ours, theirs)


def test_sizes_as_lsblk_writes_them(devs, disk):
    """SIZE without -b: lsblk's one letter and one decimal at most (1.9G, 1.5G, 64M, 16M)."""
    ours, theirs = both(["-r", "-n", "-o", "NAME,SIZE"], ["-r", "-n", "-o", "NAME,SIZE"], sorted(devs))
    assert ours == theirs, (ours, theirs)
    assert {"1.9G", "1.5G", "64M", "16M"} <= {w[1] for w in words(ours)}, ours


def test_nodeps_and_majors(devs, disk):
    """-d: the named devices alone; -e and -I over every device of this machine, as lsblk filters them."""
    ours, theirs = both(["-d", "-r", "-o", "NAME,SIZE"], ["-d", "-r", "-o", "NAME,SIZE"], [disk])
    assert ours == theirs and len(words(ours)) == 2, (ours, theirs)  # the heading and the disk, no partitions
    for opts in (["-d"], ["-e", "7"], ["-I", "7"], ["-e", "7,253"], ["-d", "-I", "7"]):
        ours, theirs = both(opts + ["-r", "-n", "-o", "NAME"], opts + ["-r", "-n", "-o", "NAME"], [])
        assert sorted(ours.split()) == sorted(theirs.split()), (opts, ours, theirs)
    names = both(["-I", "7", "-r", "-n", "-o", "NAME"], ["-I", "7", "-r", "-n", "-o", "NAME"], [])[0].split()
    assert os.path.basename(disk) + "p1" in names and "vda" not in names, names


def test_mountpoints(devs, disk):
    """A partition mounted at two places: both, the latest first, as lsblk's MOUNTPOINTS (-P and -J)."""
    part = disk + "p1"
    run(["mkfs.ext4", "-q", "-F", part], check=True)
    with scratch_dir() as d:
        a, b = os.path.join(d, "a"), os.path.join(d, "b")
        os.mkdir(a)
        os.mkdir(b)
        run(["mount", part, a], check=True)
        try:
            run(["mount", "--bind", a, b], check=True)
            try:
                ours, theirs = both(["-P", "-o", "NAME,MOUNTPOINTS"], ["-P", "-o", "NAME,MOUNTPOINTS"], [disk])
                assert ours == theirs and "\\x0a" in ours, (ours, theirs)
                ours, theirs = both(["-J", "-o", "NAME,MOUNTPOINTS"], ["-J", "-l", "-o", "NAME,MOUNTPOINTS"], [disk])
                got = json.loads(ours)["blockdevices"]
                assert got == json.loads(theirs)["blockdevices"], (ours, theirs)
                # the latest mount first, as lsblk walks the mount table backwards
                assert [x for x in got if x["name"] == os.path.basename(part)][0]["mountpoints"] == [b, a], got
                assert [x for x in got if x["name"] == os.path.basename(disk)][0]["mountpoints"] == [None], got
            finally:
                run(["umount", b])
        finally:
            run(["umount", a])


def test_column_order_of_shared_columns(devs, disk):
    """The columns both have come in the order lsblk shows them: its default heading and -t's."""
    ours = subprocess.run([LCLOUDCTL, "list", "-O", "--size", "16K", disk], capture_output=True, text=True)
    head = ours.stdout.splitlines()[0].split()
    for theirs_args in ([], ["-t"]):
        t = subprocess.run(["lsblk"] + theirs_args + [disk], capture_output=True, text=True, check=True)
        theirs = [c for c in t.stdout.splitlines()[0].split() if c in head]
        assert len(theirs) >= 4 and [c for c in head if c in theirs] == theirs, (head, theirs)


CHECKS = [test_raw_order_and_sizes, test_sizes_as_lsblk_writes_them, test_nodeps_and_majors, test_mountpoints,
          test_column_order_of_shared_columns, test_type_word, test_pairs, test_flat_table, test_named_disk_keeps_partitions,
          test_json, test_tree_characters, test_ascii_option]


def with_devices(check, devs, disk):
    def run_check():
        check(devs, disk)
    run_check.__name__ = check.__name__
    return run_check


if __name__ == "__main__":
    need_root()
    need_tool("lsblk", "util-linux")
    need_tool("sfdisk", "fdisk")
    with scratch_dir() as d, numbered_loops(d) as (devs, disk):
        main([with_devices(c, devs, disk) for c in CHECKS])
