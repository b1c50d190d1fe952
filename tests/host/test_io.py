#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hinted, aligned direct I/O on the real 6.18 kernel: atomic 4 KiB and 16 KiB
writes to a file on XFS over loop go through io_uring and read back; a
misaligned or non-power-of-two atomic write is refused before submission;
on ext4 the atomic write is refused with a clear message while a plain write
succeeds; the write guard refuses a loop device that is mounted or carries a
file system, and --force overrides it; with io_uring switched off the
queue falls back to pwritev2."""
import os
import subprocess

from hostlib import lcloudctl, loop_device, main, mounted_fs, need_root, scratch_dir, run

QUEUE_EXERCISE = os.environ["QUEUE_EXERCISE"]


def write(path, offset, length, *extra):
    return lcloudctl("write", "--offset", str(offset), "--length", str(length), *extra, path)


def read_back(path, offset, length):
    p = subprocess.run([os.environ["LCLOUDCTL"], "read", "--offset", str(offset), "--length", str(length), path],
                       capture_output=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_xfs_atomic_writes():
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        path = os.path.join(mnt, "data")
        open(path, "w").close()
        for size, byte in ((4096, 0x11), (16384, 0x22)):
            p = write(path, size * 2, size, "--atomic", "--pattern", hex(byte), "--hint", "data")
            assert p.returncode == 0 and "via io_uring (atomic)" in p.stdout, (p.stdout, p.stderr)
            assert read_back(path, size * 2, size) == bytes([byte]) * size
            # an independent read of the same bytes
            with open(path, "rb") as f:
                f.seek(size * 2)
                assert f.read(size) == bytes([byte]) * size
        p = write(path, 4096, 16384, "--atomic", "--pattern", "1")
        assert p.returncode == 7 and "refused before submission" in p.stderr and "naturally aligned" in p.stderr, p.stderr
        p = write(path, 0, 12288, "--atomic", "--pattern", "1")
        assert p.returncode == 7 and "power of two" in p.stderr, p.stderr
        p = write(path, 0, 4 << 20, "--atomic", "--pattern", "1")
        assert p.returncode == 7 and "more than the largest untorn write" in p.stderr, p.stderr
        # the whole queue API: batches, reaping, the sync backend, refusals
        out = run([QUEUE_EXERCISE, path, "atomic"])
        assert out.returncode == 0, out.stdout + out.stderr
        assert "0 failed" in out.stdout


def test_ext4_atomic_refused_plain_works():
    with mounted_fs("ext4") as (dev, mnt):
        path = os.path.join(mnt, "data")
        open(path, "w").close()
        p = write(path, 0, 4096, "--atomic", "--pattern", "7")
        assert p.returncode == 7 and "atomic write refused" in p.stderr and "not supported" in p.stderr, p.stderr
        p = write(path, 0, 4096, "--pattern", "7")
        assert p.returncode == 0, p.stderr
        assert read_back(path, 0, 4096) == b"\x07" * 4096
        out = run([QUEUE_EXERCISE, path, "plain"])
        assert out.returncode == 0, out.stdout + out.stderr


def test_write_guard():
    with mounted_fs("xfs") as (dev, mnt):
        p = write(dev, 0, 4096, "--pattern", "0")
        assert p.returncode == 7 and "mounted at " + mnt in p.stderr and "--force does not override" in p.stderr, p.stderr
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "disk"), 64 << 20) as dev:
        run(["mkfs.ext4", "-q", "-F", dev], check=True)
        p = write(dev, 0, 4096, "--pattern", "0")
        assert p.returncode == 7 and "ext4 signature" in p.stderr, p.stderr
        p = write(dev, 1 << 20, 4096, "--pattern", "0x33", "--force")
        assert p.returncode == 0, p.stderr
        assert read_back(dev, 1 << 20, 4096) == b"\x33" * 4096
        # reads are never guarded
        assert len(read_back(dev, 0, 4096)) == 4096
        p = write(dev, 64 << 20, 4096, "--pattern", "0", "--force")
        assert p.returncode != 0 and "past the end" in p.stderr, p.stderr


def test_sync_fallback_when_io_uring_is_disabled():
    knob = "/proc/sys/kernel/io_uring_disabled"
    need_root()
    if not os.path.exists(knob):
        print("SKIP part: this kernel has no %s (Linux 6.6+)" % knob)
        return
    with mounted_fs("xfs") as (dev, mnt):
        path = os.path.join(mnt, "data")
        open(path, "w").close()
        with open(knob) as f:
            old = f.read().strip()
        try:
            with open(knob, "w") as f:
                f.write("2")
            p = write(path, 0, 16384, "--atomic", "--pattern", "0x44")
            assert p.returncode == 0 and "via sync (atomic)" in p.stdout, (p.stdout, p.stderr)
            p = write(path, 0, 4096, "--pattern", "1", "--backend", "io_uring")
            assert p.returncode != 0 and "io_uring is disabled" in p.stderr, p.stderr
        finally:
            with open(knob, "w") as f:
                f.write(old)
        with open(path, "rb") as f:
            assert f.read(16384) == b"\x44" * 16384


if __name__ == "__main__":
    main([test_xfs_atomic_writes, test_ext4_atomic_refused_plain_works, test_write_guard,
          test_sync_fallback_when_io_uring_is_disabled])
