#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The write guard sees storage, not names. A loop device claims nothing
below it, so a second loop over a mounted image, a loop at an offset over a
mounted disk or partition, the lower device of a mounted offset loop, the
image file of a mounted loop and a loop over an active swap image all reach
storage in use under another name. Each is refused, with and without
--force, by write and torture run, and the image is compared byte for byte
before and after. The same writes go through once nothing uses the storage,
so each refusal is the guard's, not an accident of the setup. Last, the
buffered torture path is raced with a symlink flipped between a scratch
file and a mounted device: no stamp may reach the device."""
import contextlib
import os
import subprocess
import sys
import time

from hostlib import (digest, in_a_mount_namespace_of_its_own, lcloudctl, loop_device, main, need_root, run, scratch_dir,
                     symlink_flipper)


@contextlib.contextmanager
def extra_loop(backing, offset=0, sizelimit=0):
    """Another loop device over BACKING (a file or a device) at OFFSET."""
    args = ["losetup", "-f", "--show", "--offset", str(offset)]
    if sizelimit:
        args += ["--sizelimit", str(sizelimit)]
    dev = run(args + [backing], check=True).stdout.strip()
    try:
        yield dev
    finally:
        run(["losetup", "-d", dev])


@contextlib.contextmanager
def mounted(dev, mnt, quiet=True):
    """DEV mounted at MNT with a file in it; QUIET: then read-only, so that the file system's own writes
    (journal commits, lazy init) cannot change the image while the test compares it byte for byte."""
    os.makedirs(mnt, exist_ok=True)
    run(["mount", dev, mnt], check=True)
    try:
        with open(os.path.join(mnt, "data"), "wb") as f:
            f.write(b"\x33" * (1 << 20))
        run(["sync"])
        if quiet:
            run(["mount", "-o", "remount,ro", mnt], check=True)
        yield mnt
    finally:
        run(["umount", mnt])


def write_when_free(path, *extra):
    """The write the guard lets through once nothing uses the storage; the kernel may take a moment after
    an umount or a swapoff to let go of the device (udev's probe of it, for one)."""
    for _ in range(40):
        p = write(path, *extra)
        if p.returncode != 7 or "in use" not in p.stderr:
            return p
        time.sleep(0.25)
    return p


def write(path, *extra):
    return lcloudctl("write", "--offset", "0", "--length", "4096", "--pattern", "0x5a", *extra, path)


def assert_refused(path, why, image):
    """write (with and without --force) and torture run on PATH are refused for WHY; IMAGE is unchanged."""
    run(["sync"])
    before = digest(image)
    for extra in ((), ("--force",)):
        p = write(path, *extra)
        assert p.returncode == 7, (path, extra, p.returncode, p.stdout, p.stderr)
        assert why in p.stderr and "--force does not override" in p.stderr, p.stderr
    with scratch_dir() as d:
        p = lcloudctl("torture", "run", path, "--path", "plain_direct", "--pages", "4", "--writes", "8",
                      "--force", "--record", os.path.join(d, "rec"))
        assert p.returncode == 7 and why in p.stderr, (p.returncode, p.stderr)
    run(["sync"])
    assert digest(image) == before, "a refused write changed %s" % image


def test_offset_loop_over_mounted_partition():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 64 << 20,
                                         partitions="start=2048, size=40960\n") as dev:
        part = dev + "p1"
        run(["mkfs.ext4", "-q", "-F", part], check=True)
        img = os.path.join(d, "img")
        # a loop over the partitioned disk, at the partition's start, and one inside it
        with extra_loop(dev, offset=2048 * 512) as alias, extra_loop(dev, offset=4 << 20) as inner:
            with mounted(part, os.path.join(d, "m")) as mnt:
                assert_refused(alias, "which is mounted (at %s)" % mnt, img)
                assert_refused(inner, "which is mounted (at %s)" % mnt, img)
            # nothing mounted: the same loop is written, the guard can tell
            p = write_when_free(alias, "--force")
            assert p.returncode == 0, p.stderr
        with open(img, "rb") as f:
            f.seek(2048 * 512)
            assert f.read(4096) == b"\x5a" * 4096


def test_lower_device_of_mounted_offset_loop():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 64 << 20) as dev:
        img = os.path.join(d, "img")
        with extra_loop(dev, offset=1 << 20) as upper:
            run(["mkfs.ext4", "-q", "-F", upper], check=True)
            with mounted(upper, os.path.join(d, "m")) as mnt:
                # the lower device carries no signature at 0: only the shared storage says no
                assert_refused(dev, "shares storage with %s" % upper, img)
                assert "which is mounted (at %s)" % mnt in write(dev).stderr
            p = write_when_free(dev, "--force")
            assert p.returncode == 0, p.stderr


SIGNATURELESS = (20 << 20) + 4096  # inside a block group, off every backup superblock


def test_second_loop_over_mounted_image():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 64 << 20) as dev:
        img = os.path.join(d, "img")
        run(["mkfs.ext4", "-q", "-F", dev], check=True)
        with mounted(dev, os.path.join(d, "m")) as mnt:
            with extra_loop(img) as same, extra_loop(img, offset=SIGNATURELESS) as offset:
                # the second loop at 0 sees the ext4 signature, the one further in sees none (blkid says so):
                # both are refused for the mount, and --force never overrides it
                assert run(["blkid", "-p", offset]).returncode == 2, "a signature at the offset loop"
                assert_refused(same, "which is mounted (at %s)" % mnt, img)
                assert_refused(offset, "which is mounted (at %s)" % mnt, img)
            # the image file itself is the mounted file system's storage
            before = digest(img)
            p = write(img, "--force")
            assert p.returncode == 7 and "which is mounted (at %s)" % mnt in p.stderr, p.stderr
            assert digest(img) == before
        with extra_loop(img, offset=SIGNATURELESS) as offset:
            p = write_when_free(offset)
            assert p.returncode == 0, p.stderr


def test_loop_over_active_swap_image():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 64 << 20) as dev:
        img = os.path.join(d, "img")
        run(["mkswap", "-q", dev], check=True)
        if run(["swapon", dev]).returncode != 0:
            print("  skipped: swapon refused here (no swap support in this kernel or container)")
            return
        try:
            with extra_loop(img, offset=16 << 20) as alias:
                assert_refused(alias, "active swap area", img)
        finally:
            run(["swapoff", dev], check=True)
        with extra_loop(img, offset=16 << 20) as alias:
            p = write_when_free(alias)
            assert p.returncode == 0, p.stderr


CLAIMER = r"""
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_EXCL)
print("held", flush=True)
time.sleep(60)
"""


def test_second_loop_over_claimed_loop():
    """A program holds the first loop (O_EXCL, as mkfs or a database would): the second one is not written.

    Nothing mounts it, nothing is swap, no dm holds it: only the guard's own O_EXCL open of the
    sharer can tell (shared_storage.c, check_sharer), which a unit test under a sysroot cannot reach."""
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 16 << 20) as dev:
        img = os.path.join(d, "img")
        claimer = subprocess.Popen([sys.executable, "-c", CLAIMER, dev], stdout=subprocess.PIPE, text=True)
        try:
            assert claimer.stdout.readline().strip() == "held"
            with extra_loop(img) as alias:
                assert_refused(alias, "the kernel refused to open it exclusively", img)
        finally:
            claimer.kill()
            claimer.wait()
        with extra_loop(img) as alias:
            p = write_when_free(alias)
            assert p.returncode == 0, p.stderr




def stamps_in(path):
    """512-byte blocks of PATH that start with the torture stamp's magic ("LCSt")."""
    n = 0
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            n += sum(1 for i in range(0, len(chunk), 512) if chunk[i:i + 4] == b"LCSt")
    return n


def test_buffered_torture_symlink_race():
    """300 buffered torture runs through a link that flips between a file and a mounted device."""
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 32 << 20) as dev:
        img = os.path.join(d, "img")
        run(["mkfs.ext4", "-q", "-F", dev], check=True)
        assert stamps_in(img) == 0
        with mounted(dev, os.path.join(d, "m")):
            scratch = os.path.join(d, "scratch")
            with open(scratch, "wb") as f:
                f.truncate(1 << 20)
            link = os.path.join(d, "link")
            os.symlink(scratch, link)
            run(["sync"])
            stop = os.path.join(d, "stop")
            flipper = symlink_flipper(link, scratch, dev, stop, 600)
            outcomes = {}
            try:
                for i in range(300):
                    record = os.path.join(d, "rec%d" % i)
                    p = lcloudctl("torture", "run", link, "--path", "buffered", "--pages", "4", "--writes", "4",
                                  "--record", record)
                    if os.path.exists(record):
                        os.unlink(record)
                    key = "ran" if p.returncode == 0 else "refused %d" % p.returncode
                    outcomes[key] = outcomes.get(key, 0) + 1
            finally:
                open(stop, "w").close()
                flips = flipper.communicate(timeout=30)[0].strip()
        run(["sync"])
        # the mounted ext4 writes its own metadata meanwhile: what must not be there is a stamp
        stamps = stamps_in(img)
        print("  %s flips; outcomes %s; stamps on the device %d" % (flips, outcomes, stamps))
        assert stamps == 0, "%d torture stamps reached the mounted device: %s" % (stamps, outcomes)
        assert stamps_in(scratch) > 0
        if True:
            assert sum(outcomes.values()) == 300
            assert outcomes.get("ran", 0) > 0, outcomes
            assert any(k.startswith("refused") for k in outcomes), outcomes


if __name__ == "__main__":
    in_a_mount_namespace_of_its_own(__file__)
    main([test_offset_loop_over_mounted_partition, test_lower_device_of_mounted_offset_loop,
          test_second_loop_over_mounted_image, test_loop_over_active_swap_image,
          test_second_loop_over_claimed_loop, test_buffered_torture_symlink_race])
