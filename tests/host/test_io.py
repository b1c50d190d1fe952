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
import resource
import subprocess

from hostlib import LCLOUDCTL, lcloudctl, loop_device, main, mounted_fs, need_root, scratch_dir, run

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


def test_atomic_write_cut_short_is_a_failure():
    """Under a 64 KiB file size limit the kernel accepts a 128 KiB RWF_ATOMIC write and writes
    only 64 KiB of it: the command must fail and say so, not report the write done."""
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        path = os.path.join(mnt, "ibdata1")
        open(path, "w").close()

        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))
        p = subprocess.run([LCLOUDCTL, "write", "--offset", "0", "--length", "128K", "--atomic", "--pattern",
                            "0x5a", path], capture_output=True, text=True, preexec_fn=limit)
        assert os.stat(path).st_size == 64 << 10, "the kernel cut the write at the limit"
        assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
        assert "only 65536 of 131072 bytes" in p.stderr and "untorn" in p.stderr, p.stderr


if __name__ == "__main__":
    main([test_xfs_atomic_writes, test_ext4_atomic_refused_plain_works, test_write_guard,
          test_sync_fallback_when_io_uring_is_disabled, test_atomic_write_cut_short_is_a_failure])
