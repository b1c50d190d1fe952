#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every file lcloudctl writes, and its standard output: replay --out never
onto a mounted device, its own base or log (or a loop device over one), or
through a planted symlink, and
a failed replay leaves neither the image nor a temporary; read --out on a
full file system leaves nothing; probe --save and export -f write regular
files only; output lost to /dev/full or to 'ulimit -f' is an error with a
message, for every command."""
import hashlib
import os
import resource
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import (LCLOUDCTL, in_a_mount_namespace_of_its_own, lcloudctl, loop_device, main, mounted_fs,  # noqa: E402
                     need_root, run, scratch_dir)
import stamps  # noqa: E402

PAGE = 16384


def digest(path, length=None):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read(length) if length else f.read()).hexdigest()


def make_inputs(d):
    """A 1 MiB base and a log of two writes at its start; the image is the base with them applied."""
    base, log = os.path.join(d, "base"), os.path.join(d, "log")
    with open(base, "wb") as f:
        f.write(b"\x11" * (1 << 20))
    stamps.write_log(log, [(0, 0, b"\xab" * 4096), (16, 0, b"\xcd" * 512), (0, stamps.FLUSH, b"")])
    return base, log


def expected_image():
    img = bytearray(b"\x11" * (1 << 20))
    img[0:4096] = b"\xab" * 4096
    img[8192:8704] = b"\xcd" * 512
    return bytes(img)


def make_tearable(d):
    """A base of torture pages and a log that writes two of them in two commands each (both tearable)."""
    base, log = os.path.join(d, "tbase"), os.path.join(d, "tlog")
    data = bytearray(1 << 20)
    for n in range(4):
        data[n * PAGE:(n + 1) * PAGE] = stamps.page(7, n, 1, PAGE)
    with open(base, "wb") as f:
        f.write(data)
    p0, p1 = stamps.page(7, 0, 2, PAGE), stamps.page(7, 1, 3, PAGE)
    stamps.write_log(log, [(0, 0, p0[:8192]), (16, 0, p0[8192:]), (0, stamps.FLUSH, b""),
                           (PAGE // 512, 0, p1[:4096]), (PAGE // 512 + 8, 0, p1[4096:]), (0, stamps.FLUSH, b"")])
    return base, log


def char_node(d):
    """A character device node of the test's own (/dev/null's numbers): code that wrongly replaces a
    device node by renaming a file over it then replaces this one, never the system's /dev/null."""
    path = os.path.join(d, "null")
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return path


def replay(log, base, out, *extra):
    return lcloudctl("replay", log, "--base", base, "--out", out, *extra)


def test_replay_out_onto_a_mounted_device():
    need_root()
    with scratch_dir() as d, mounted_fs("ext4", size=64 << 20) as (dev, mnt):
        base, log = make_inputs(d)
        tbase, tlog = make_tearable(d)
        kept = os.path.join(mnt, "kept")
        with open(kept, "wb") as f:
            f.write(b"kept" * 1024)
        os.sync()
        link = os.path.join(d, "dev-link")
        os.symlink(dev, link)
        for out, extra in ((dev, ("--cut", "2")), (dev, ("--cut", "2", "--force")), (link, ("--cut", "2")),
                           (dev, ("--cut-all",))):
            b, l = (tbase, tlog) if "--cut-all" in extra else (base, log)
            p = replay(l, b, out, *extra)
            assert p.returncode == 7 and "in use" in p.stderr, (out, extra, p.returncode, p.stderr)
        # the file system is whole: not the image's first block, its file reads back, fsck finds nothing
        with open(dev, "rb") as f:
            assert f.read(4096) != b"\xab" * 4096
        with open(kept, "rb") as f:
            assert f.read() == b"kept" * 1024
        assert not os.path.exists(os.path.join(d, "dev-link.try"))
        run(["umount", mnt], check=True)
        p = run(["e2fsck", "-fn", dev])
        assert p.returncode == 0, p.stdout + p.stderr
        run(["mount", dev, mnt], check=True)


def test_replay_out_onto_an_unmounted_device():
    """A device that holds nothing is written through the guard; one with a signature needs --force."""
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "disk"), 2 << 20) as dev:
        base, log = make_inputs(d)
        p = replay(log, base, dev, "--cut", "2")
        assert p.returncode == 0, p.stderr
        with open(dev, "rb") as f:
            assert f.read(1 << 20) == expected_image()
        run(["mkfs.ext4", "-q", "-F", dev], check=True)
        p = replay(log, base, dev, "--cut", "2")
        assert p.returncode == 7 and "signature" in p.stderr, (p.returncode, p.stderr)
        p = replay(log, base, dev, "--cut", "2", "--force")
        assert p.returncode == 0, p.stderr
        # --cut-all claims the device once: its first image's content does not refuse the next try
        tbase, tlog = make_tearable(d)
        p = replay(tlog, tbase, dev, "--cut-all")
        assert p.returncode == 9, (p.returncode, p.stderr)
        p = replay(tlog, tbase, dev, "--cut-all", "--keep-going")
        assert p.returncode == 2 and "regular file" in p.stderr, (p.returncode, p.stderr)
        assert not os.path.exists(dev + ".try")
    with scratch_dir() as d, loop_device(os.path.join(d, "small"), 512 << 10) as dev:
        base, log = make_inputs(d)
        before = digest(dev)
        p = replay(log, base, dev, "--cut", "2")
        assert p.returncode == 2 and "larger than" in p.stderr, (p.returncode, p.stderr)
        assert digest(dev) == before
        # a log that writes past the base's end is refused before the device is touched
        small = os.path.join(d, "small-base")
        with open(small, "wb") as f:
            f.write(b"\x22" * (256 << 10))
        bad = os.path.join(d, "bad")
        stamps.write_log(bad, [(0, 0, b"\xab" * 512), (1 << 20, 0, b"\xcd" * 512)])
        p = replay(bad, small, dev, "--cut", "2")
        assert p.returncode == 2 and "Nothing was written" in p.stderr, (p.returncode, p.stderr)
        assert digest(dev) == before


def test_replay_out_onto_its_own_base_or_log():
    with scratch_dir() as d:
        base, log = make_inputs(d)
        sums = {base: digest(base), log: digest(log)}
        hard = os.path.join(d, "base-again")
        os.link(base, hard)
        soft = os.path.join(d, "log-link")
        os.symlink(log, soft)
        for out, what in ((base, "base"), (log, "log"), (hard, "base"), (soft, "log")):
            for extra in (("--cut", "2"), ("--cut-all",)):
                p = replay(log, base, out, *extra)
                assert p.returncode == 2 and what in p.stderr and "destroy" in p.stderr, (out, p.returncode, p.stderr)
        # --cut-all --keep-going writes OUT.try too: that one is checked as well
        tbase, tlog = make_tearable(d)
        tried = os.path.join(d, "img.try")
        os.rename(tbase, tried)
        before = digest(tried)
        p = replay(tlog, tried, os.path.join(d, "img"), "--cut-all", "--keep-going")
        assert p.returncode == 2 and "destroy" in p.stderr, (p.returncode, p.stderr)
        assert digest(tried) == before
        for path, s in sums.items():
            assert digest(path) == s, path
        assert os.path.islink(soft) and os.stat(hard).st_nlink == 2


def test_replay_out_onto_a_loop_over_its_base_or_log():
    need_root()
    with scratch_dir() as d:
        base, log = make_inputs(d)
        tbase, tlog = make_tearable(d)
        for l, b, over, extra in ((log, base, base, ("--cut", "2")), (log, base, log, ("--cut", "2")),
                                  (tlog, tbase, tbase, ("--cut-all",)), (tlog, tbase, tlog, ("--cut-all",))):
            before = digest(over)
            dev = run(["losetup", "-f", "--show", over], check=True).stdout.strip()
            try:
                p = replay(l, b, dev, *extra)
            finally:
                run(["losetup", "-d", dev])
            assert p.returncode == 2 and "loop device over" in p.stderr, (over, extra, p.returncode, p.stderr)
            assert digest(over) == before, over


def test_replay_out_onto_a_loop_over_a_loop_over_its_base():
    """A second name for the base: a loop device whose backing file is a loop device over it, and a
    partition of a partitioned base. --force overrides signatures, never this."""
    need_root()
    with scratch_dir() as d:
        base, log = make_inputs(d)
        before = digest(base)
        first = run(["losetup", "-f", "--show", base], check=True).stdout.strip()
        try:
            second = run(["losetup", "-f", "--show", first], check=True).stdout.strip()
            try:
                for extra in (("--cut", "2"), ("--cut", "2", "--force"), ("--cut-all", "--force")):
                    p = replay(log, base, second, *extra)
                    assert p.returncode == 2 and "loop device over" in p.stderr, (extra, p.returncode, p.stderr)
                    assert digest(base) == before
            finally:
                run(["losetup", "-d", second])
        finally:
            run(["losetup", "-d", first])
        # the base partitioned: its partition, through a loop over it, is the base too
        pbase = os.path.join(d, "pbase")
        with loop_device(pbase, 4 << 20, "start=2048, size=2048\n") as dev:
            pbefore = digest(pbase)
            p = replay(log, pbase, dev + "p1", "--cut", "2", "--force")
            assert p.returncode == 2 and "loop device over" in p.stderr, (p.returncode, p.stderr)
            assert digest(pbase) == pbefore


def test_replay_out_through_a_planted_symlink():
    with scratch_dir() as d:
        base, log = make_inputs(d)
        victim = os.path.join(d, "victim")
        with open(victim, "wb") as f:
            f.write(b"victim")
        out = os.path.join(d, "img")
        os.symlink(victim, out)
        p = replay(log, base, out, "--cut", "2")
        assert p.returncode == 0, p.stderr
        with open(victim, "rb") as f:
            assert f.read() == b"victim"
        assert not os.path.islink(out) and digest(out) == hashlib.sha256(expected_image()).hexdigest()
        # a dangling one is replaced as well, and nothing is created where it pointed
        gone = os.path.join(d, "gone")
        os.unlink(out)
        os.symlink(gone, out)
        p = replay(log, base, out, "--cut", "2")
        assert p.returncode == 0 and not os.path.exists(gone) and not os.path.islink(out), p.stderr
        # --cut-all's OUT.try: planted too, replaced, then removed
        tbase, tlog = make_tearable(d)
        os.symlink(victim, out + ".try")
        os.unlink(out)
        os.symlink(victim, out)
        p = replay(tlog, tbase, out, "--cut-all", "--keep-going")
        assert p.returncode == 9, (p.returncode, p.stderr)
        with open(victim, "rb") as f:
            assert f.read() == b"victim"
        assert not os.path.lexists(out + ".try") and not os.path.islink(out)
        assert sorted(os.listdir(d)) == ["base", "img", "log", "tbase", "tlog", "victim"], os.listdir(d)


def test_failed_replay_leaves_nothing():
    need_root()  # mknod
    with scratch_dir() as d:
        base, _ = make_inputs(d)
        bad = os.path.join(d, "bad")
        # its second entry writes past the end of the 1 MiB base
        stamps.write_log(bad, [(0, 0, b"\xab" * 512), (1 << 20, 0, b"\xcd" * 512)])
        names = sorted(os.listdir(d))
        out = os.path.join(d, "img")
        p = replay(bad, base, out, "--cut", "2")
        assert p.returncode == 2 and "past the end" in p.stderr, (p.returncode, p.stderr)
        assert sorted(os.listdir(d)) == names, os.listdir(d)
        # an image already there is left as it was, not half rewritten
        with open(out, "wb") as f:
            f.write(b"old image")
        p = replay(bad, base, out, "--cut", "2")
        assert p.returncode == 2
        with open(out, "rb") as f:
            assert f.read() == b"old image"
        assert sorted(os.listdir(d)) == sorted(names + ["img"]), os.listdir(d)
        # kinds never written: exit 5, nothing made
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        null = char_node(d)
        for target in (fifo, d, null):
            p = replay(bad, base, target, "--cut", "1")
            assert p.returncode == 5 and "not written" in p.stderr, (target, p.returncode, p.stderr)
        assert sorted(os.listdir(d)) == sorted(names + ["img", "fifo", "null"]), os.listdir(d)
        assert stat.S_ISCHR(os.lstat(null).st_mode)


def full_stdout(*args, env=None):
    with open("/dev/full", "w") as full:
        return subprocess.run([LCLOUDCTL] + list(args), stdout=full, stderr=subprocess.PIPE, text=True, env=env)


def test_output_lost_to_a_full_disk_is_an_error():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "disk"), 16 << 20) as dev:
        name = os.path.basename(dev)
        for args in (("probe", d), ("--format", "json", "probe", d), ("list",), ("check", d, "--size", "4K"),
                     ("advise", d, "--db", "postgresql"), ("udev", name), ("export", "--prometheus", d),
                     ("--help",), ("--version",), ("probe", "--help"), ("replay", "--help")):
            p = full_stdout(*args)
            assert p.returncode == 1, (args, p.returncode, p.stderr)
            assert "lcloudctl: write error: No space left on device" in p.stderr, (args, p.stderr)


def limited(size):
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))


def test_file_size_limit():
    with scratch_dir() as d:
        path = os.path.join(d, "f")
        with open(path, "wb") as f:
            f.truncate(0)
        # write past ulimit -f: an error with a message, not a silent SIGXFSZ
        p = subprocess.run([LCLOUDCTL, "write", "--offset", "8192", "--length", "4096", "--pattern", "1", path],
                           capture_output=True, text=True, preexec_fn=limited(8192))
        assert p.returncode == 1 and "File too large" in p.stderr and "ulimit -f" in p.stderr, (p.returncode, p.stderr)
        # standard output into a file past the limit
        with open(os.path.join(d, "probe.json"), "w") as out:
            p = subprocess.run([LCLOUDCTL, "--format", "json", "probe", d], stdout=out, stderr=subprocess.PIPE, text=True,
                               preexec_fn=limited(1024))
        assert p.returncode == 1 and "write error: File too large" in p.stderr, (p.returncode, p.stderr)
        # an output file past it: nothing left
        with open(path, "wb") as f:
            f.write(b"\x5a" * 65536)
        p = subprocess.run([LCLOUDCTL, "read", "--offset", "0", "--length", "64K", "--out",
                            os.path.join(d, "out"), path], capture_output=True, text=True, preexec_fn=limited(16384))
        assert p.returncode == 1 and "File too large" in p.stderr, (p.returncode, p.stderr)
        assert sorted(os.listdir(d)) == ["f", "probe.json"], os.listdir(d)


def test_read_output_on_a_full_file_system():
    need_root()
    with scratch_dir() as d:
        src = os.path.join(d, "src")
        with open(src, "wb") as f:
            f.write(os.urandom(512 << 10))
        tiny = os.path.join(d, "tiny")
        os.mkdir(tiny)
        run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", tiny], check=True)
        try:
            p = lcloudctl("read", "--offset", "0", "--length", "512K", "--out", os.path.join(tiny, "out"), src)
            assert p.returncode == 1 and "No space left on device" in p.stderr, (p.returncode, p.stderr)
            assert os.listdir(tiny) == [], os.listdir(tiny)
        finally:
            run(["umount", tiny], check=True)


def test_read_output_onto_devices():
    need_root()
    with scratch_dir() as d, mounted_fs("ext4", size=64 << 20) as (dev, mnt):
        src = os.path.join(d, "src")
        with open(src, "wb") as f:
            f.write(os.urandom(64 << 10))
        for extra in ((), ("--force",)):
            p = lcloudctl("read", "--offset", "0", "--length", "64K", "--out", dev, *extra, src)
            assert p.returncode == 7 and "in use" in p.stderr, (p.returncode, p.stderr)
        with loop_device(os.path.join(d, "disk"), 4 << 20) as free:
            p = lcloudctl("read", "--offset", "0", "--length", "64K", "--out", free, src)
            assert p.returncode == 0, p.stderr
            with open(free, "rb") as f:
                assert f.read(64 << 10) == open(src, "rb").read()
        null = char_node(d)
        p = lcloudctl("read", "--offset", "0", "--length", "64K", "--out", null, src)
        assert p.returncode == 5 and stat.S_ISCHR(os.lstat(null).st_mode), (p.returncode, p.stderr)


def test_save_and_export_write_regular_files_only():
    need_root()  # mknod
    with scratch_dir() as d, scratch_dir() as nodes:
        null = char_node(nodes)
        for args in (("probe", "--save", null, d), ("probe", "--save", d, d),
                     ("export", "--prometheus", "-f", null, d), ("export", "--prometheus", "-f", d, d)):
            p = lcloudctl(*args)
            assert p.returncode == 5 and "not written" in p.stderr, (args, p.returncode, p.stderr)
            assert stat.S_ISCHR(os.lstat(null).st_mode), args
        victim = os.path.join(d, "victim")
        with open(victim, "w") as f:
            f.write("victim")
        for args in (("probe", "--save", "FILE", d), ("export", "--prometheus", "-f", "FILE", d)):
            link = os.path.join(d, "link")
            os.symlink(victim, link)
            p = lcloudctl(*[link if a == "FILE" else a for a in args])
            assert p.returncode == 0, (args, p.stderr)
            assert not os.path.islink(link) and os.path.getsize(link) > 0
            os.unlink(link)
        with open(victim) as f:
            assert f.read() == "victim"
        assert sorted(os.listdir(d)) == ["victim"], os.listdir(d)


def test_no_rename_over_storage_in_use():
    """replay --out, probe --save, export -f and read --output replace a file by renaming a new one over its
    name: over a mounted loop's image, an erofs file system's image or a swap file, the old inode would lose
    its only name and the file system go with it at unmount. Each is refused, the inode and its bytes stay."""
    need_root()
    with scratch_dir() as d:
        base, log = make_inputs(d)
        img = os.path.join(d, "img")
        with open(img, "wb") as f:
            f.truncate(32 << 20)
        run(["mkfs.ext4", "-q", "-F", img], check=True)
        mnt = os.path.join(d, "mnt")
        os.mkdir(mnt)
        dev = run(["losetup", "-f", "--show", img], check=True).stdout.strip()
        try:
            run(["mount", "-o", "ro", dev, mnt], check=True)
            try:
                assert_not_replaced(img, base, log, d, "which is mounted (at %s)" % mnt)
            finally:
                run(["umount", mnt], check=True)
        finally:
            run(["losetup", "-d", dev])
        # a swap file
        sw = os.path.join(d, "sw")
        run(["dd", "if=/dev/zero", "of=" + sw, "bs=1M", "count=16", "status=none"], check=True)
        os.chmod(sw, 0o600)
        run(["mkswap", "-q", sw], check=True)
        run(["swapon", sw], check=True)
        try:
            assert_not_replaced(sw, base, log, d, "active swap file")
        finally:
            run(["swapoff", sw], check=True)
        # nothing uses the image any more: it is replaced as any output is
        ino = os.stat(img).st_ino
        p = replay(log, base, img, "--cut", "2")
        assert p.returncode == 0, p.stderr
        assert os.stat(img).st_ino != ino


def assert_not_replaced(victim, base, log, d, why):
    before, ino = digest(victim), os.stat(victim).st_ino
    for args in (("replay", log, "--base", base, "--out", victim, "--cut", "2"),
                 ("replay", log, "--base", base, "--out", victim, "--cut", "2", "--force"),
                 ("probe", "--save", victim, d), ("export", "--prometheus", "-f", victim, d),
                 ("read", "--offset", "0", "--length", "4096", "--output", victim, "--force", base)):
        p = lcloudctl(*args)
        assert p.returncode == 7 and why in p.stderr and "is not replaced" in p.stderr, (args, p.returncode,
                                                                                         p.stderr)
        assert os.stat(victim).st_ino == ino and digest(victim) == before, args
    assert not [n for n in os.listdir(d) if n.startswith(os.path.basename(victim) + ".")], os.listdir(d)


if __name__ == "__main__":
    in_a_mount_namespace_of_its_own(__file__)
    main([test_replay_out_onto_a_mounted_device, test_replay_out_onto_an_unmounted_device,
          test_replay_out_onto_its_own_base_or_log, test_replay_out_onto_a_loop_over_its_base_or_log,
          test_replay_out_onto_a_loop_over_a_loop_over_its_base,
          test_replay_out_through_a_planted_symlink,
          test_failed_replay_leaves_nothing, test_output_lost_to_a_full_disk_is_an_error, test_file_size_limit,
          test_read_output_on_a_full_file_system, test_read_output_onto_devices,
          test_save_and_export_write_regular_files_only, test_no_rename_over_storage_in_use])
