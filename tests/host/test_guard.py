#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The write guard against the real kernel, as an attacker or a busy system
would meet it: a symlink swapped between a scratch file and a device with a
file system while write runs never lets a byte reach the device; --sysroot
never writes; a device another process holds with O_EXCL is refused (and
--force does not change that) with the process named; a mount at a path
longer than any fixed buffer is seen by probe and by the guard."""
import os
import subprocess
import sys
import time

from hostlib import (digest, in_a_mount_namespace_of_its_own, layer, lcloudctl, loop_device, main, need_root,
                     probe_json, run, scratch_dir, symlink_flipper)


def write(path, offset, length, *extra):
    return lcloudctl("write", "--offset", str(offset), "--length", str(length), *extra, path)


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit", "fixtures")




def test_symlink_swapped_during_write():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 32 << 20) as dev:
        run(["mkfs.ext4", "-q", "-F", dev], check=True)
        scratch = os.path.join(d, "scratch")
        with open(scratch, "wb") as f:
            f.truncate(1 << 20)
        link = os.path.join(d, "link")
        os.symlink(scratch, link)
        run(["sync"])
        before = digest(os.path.join(d, "img"))
        # the flipper runs until the writes are done (a slow machine makes fewer writes per second,
        # not fewer writes), or 120 s at most
        stop = os.path.join(d, "stop")
        flipper = symlink_flipper(link, scratch, dev, stop, 120)
        outcomes = {}
        try:
            for _ in range(400):
                p = write(link, 0, 4096, "--pattern", "0x5a")
                key = "wrote" if p.returncode == 0 else "refused %d" % p.returncode
                outcomes[key] = outcomes.get(key, 0) + 1
                if flipper.poll() is not None:
                    break
        finally:
            open(stop, "w").close()
            flips = flipper.communicate(timeout=30)[0].strip()
        run(["sync"])
        after = digest(os.path.join(d, "img"))
        print("  %s flips; outcomes %s" % (flips, outcomes))
        assert before == after, "a write through the swapped link reached the ext4 device: %s" % outcomes
        # both sides were really hit: the race was run, not avoided
        assert outcomes.get("wrote", 0) > 0 and outcomes.get("refused 7", 0) > 0, outcomes
        assert sum(outcomes.values()) >= 100, outcomes
        with open(scratch, "rb") as f:
            assert f.read(4096) == b"\x5a" * 4096


def test_sysroot_never_writes():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 16 << 20) as dev:
        before = digest(os.path.join(d, "img"))
        for extra in ((), ("--force",)):
            p = lcloudctl("--sysroot", os.path.join(FIXTURES, "host-6.18"), "write", "--offset", "0", "--length",
                          "4096", "--pattern", "0x77", *extra, dev)
            assert p.returncode == 7 and "a sysroot is for reading" in p.stderr, (p.returncode, p.stderr)
        run(["sync"])
        assert digest(os.path.join(d, "img")) == before
        # the same write without --sysroot does reach the device: the test can tell
        p = write(dev, 0, 4096, "--pattern", "0x77")
        assert p.returncode == 0, p.stderr
        run(["sync"])
        assert digest(os.path.join(d, "img")) != before


HOLDER = r"""
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
print("held", flush=True)
time.sleep(60)
"""


def test_exclusive_holder_refused():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 16 << 20) as dev:
        before = digest(os.path.join(d, "img"))
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, dev], stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"
            for extra in ((), ("--force",)):
                p = write(dev, 0, 4096, "--pattern", "0x11", *extra)
                assert p.returncode == 7, (p.returncode, p.stderr)
                assert "O_EXCL" in p.stderr and "open in process %d (python3" % holder.pid in p.stderr, p.stderr
                assert "--force does not override" in p.stderr, p.stderr
            # reading claims nothing: still allowed
            p = subprocess.run([os.environ["LCLOUDCTL"], "read", "--offset", "0", "--length", "4096", dev],
                               capture_output=True)
            assert p.returncode == 0 and len(p.stdout) == 4096, p.stderr
        finally:
            holder.kill()
            holder.wait()
        run(["sync"])
        assert digest(os.path.join(d, "img")) == before
        p = write(dev, 0, 4096, "--pattern", "0x11")
        assert p.returncode == 0, p.stderr


def test_held_disk_below_partition_refused():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 32 << 20, partitions="start=2048, size=16384\n") as dev:
        part = dev + "p1"
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, dev], stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"
            p = write(part, 0, 4096, "--pattern", "0x22", "--force")
            assert p.returncode == 7, (p.returncode, p.stderr)
            # the holder of the disk below is named, with the disk it holds
            assert "open in process %d (python3" % holder.pid in p.stderr, p.stderr
        finally:
            holder.kill()
            holder.wait()
        p = write(part, 0, 4096, "--pattern", "0x22")
        assert p.returncode == 0, p.stderr
        with open(os.path.join(d, "img"), "rb") as f:
            f.seek(2048 * 512)
            assert f.read(4096) == b"\x22" * 4096


def test_mount_at_long_path():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 64 << 20) as dev:
        run(["mkfs.ext4", "-q", "-F", dev], check=True)
        mnt = d
        while len(mnt) < 1200:
            mnt = os.path.join(mnt, "m" * 200)
        os.makedirs(mnt)
        assert len(mnt) >= 1200
        run(["mount", dev, mnt], check=True)
        try:
            path = os.path.join(mnt, "f")
            with open(path, "w") as f:
                f.write("x")
            p = probe_json(path)
            fs = layer(p, "filesystem")
            assert fs["facts"]["mount_point"] == mnt, fs["facts"]["mount_point"]
            assert fs["facts"]["mount_source"] == dev, fs["facts"]["mount_source"]
            assert not [n for n in p["notes"] if n["code"] in ("mount-not-found", "mountinfo-unparsed")], p["notes"]
            w = write(dev, 0, 4096, "--pattern", "0")
            assert w.returncode == 7 and "mounted at " + mnt in w.stderr, w.stderr
        finally:
            run(["umount", mnt])


if __name__ == "__main__":
    in_a_mount_namespace_of_its_own(__file__)
    main([test_symlink_swapped_during_write, test_sysroot_never_writes, test_exclusive_holder_refused,
          test_held_disk_below_partition_refused,
          test_mount_at_long_path])
