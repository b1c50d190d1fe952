#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The verdict on the real 6.18 kernel, table driven. Expected values come
from the documented rules applied to independent readings:
  - rwf_atomic on a file: the tests' own statx (unit max, rounded down to a
    power of two; the kernel guarantees untorn-or-error there);
  - plain_direct: 0 on loop devices and virtio disks, which promise nothing;
  - rwf_atomic on a block device: its sysfs atomic_write_unit_max_bytes;
  - buffered: never."""
import errno
import json
import mmap
import os
import resource
import subprocess

from hostlib import (layer, lcloudctl, loop_device, main, mounted_fs, need_root, own_statx, probe_json,
                     read_sysfs, scratch_dir, sysfs_block_dir)


def pow2_floor(v):
    while v & (v - 1):
        v &= v - 1
    return v


def verdict(path):
    return probe_json(path)["verdict"]


def check(path, size, *extra):
    p = lcloudctl("check", "--size", str(size), *extra, path)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def test_xfs_file():
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        path = os.path.join(mnt, "ibdata1")
        open(path, "w").close()
        mine = own_statx(path)
        v = verdict(path)
        assert v["rwf_atomic"]["max_untorn_bytes"] == pow2_floor(mine["stx_atomic_write_unit_max"])
        assert v["rwf_atomic"]["min_untorn_bytes"] == mine["stx_atomic_write_unit_min"]
        assert v["rwf_atomic"]["alignment"] == 0 and v["rwf_atomic"]["aligned_to_size"] is True
        assert all(isinstance(v[k]["alignment"], int) for k in v), "one type per key"
        # hardware or software: loop has no atomic writes of its own (sysfs), and statx gives no split,
        # so every RWF_ATOMIC write on this XFS is its copy-on-write software path
        loop_hw = int(read_sysfs(sysfs_block_dir(os.path.basename(dev)) + "/queue/atomic_write_unit_max_bytes"))
        assert loop_hw == 0 and mine.get("stx_atomic_write_unit_max_opt", 0) == 0
        assert v["rwf_atomic"]["hardware_max_bytes"] == 0
        assert "in software" in check(path, 16384)[1]
        # the loop device writes to its image with direct I/O: followed only as Linux 7.3 and later run it, and
        # on them to the image's own verdict, on a disk of this host that promises nothing either way
        assert v["plain_direct"]["max_untorn_bytes"] == 0, v["plain_direct"]
        reasons = " ".join(r["reason"] for r in v["plain_direct"]["reasons"])
        loop = os.path.basename(dev)
        assert ("%s: Linux " % loop in reasons and "only as Linux 7.3 and later" in reasons) or \
            ("backing file" in reasons and "promises no untorn writes" in reasons), reasons
        assert v["passthrough"]["max_untorn_bytes"] == 0
        assert v["buffered"]["max_untorn_bytes"] == 0
        rc, out, _ = check(path, 16384)
        assert rc == 0 and "untorn on rwf_atomic" in out, out
        rc, out, _ = check(path, 16384, "--path", "plain_direct")
        assert rc == 6 and "not untorn on plain_direct" in out, out
        rc, out, _ = check(path, mine["stx_atomic_write_unit_max"] * 2)
        assert rc == 6 and str(mine["stx_atomic_write_unit_max"]) in out, out
        advice = json.loads(lcloudctl("advise", "--db", "mysql", "--format", "json", mnt).stdout)
        assert advice["settings"]["innodb_doublewrite"] == "ON"
        assert any("RWF_ATOMIC" in line for line in advice["advice"])
        # and what the software path costs, with the benchmark as the source
        assert any("software path" in line and "tests/bench/README.md" in line for line in advice["advice"])


RWF_ATOMIC = 0x40


def own_atomic_write(path, size):
    """The test's own RWF_ATOMIC write (O_DIRECT, page-aligned buffer): 0 or the errno."""
    buf = mmap.mmap(-1, size)
    buf.write(b"\x6c" * size)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o600)
    try:
        n = os.pwritev(fd, [buf], 0, RWF_ATOMIC)
        return 0 if n == size else errno.EIO
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)
        buf.close()


def test_overlayfs_does_not_inherit_xfs_guarantee():
    """overlayfs passes XFS's statx limits through, but its files refuse RWF_ATOMIC: the verdict
    must follow the kernel (the test's own pwritev2), not statx."""
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        lower, upper, work, ov = (os.path.join(mnt, n) for n in ("lower", "upper", "work", "ov"))
        for d in (lower, upper, work, ov):
            os.mkdir(d)
        subprocess.run(["mount", "-t", "overlay", "overlay", "-o",
                        "lowerdir=%s,upperdir=%s,workdir=%s" % (lower, upper, work), ov], check=True)
        try:
            path = os.path.join(ov, "ibdata1")
            open(path, "w").close()
            assert own_statx(path).get("stx_atomic_write_unit_max", 0) >= 16384, "overlay forwards statx"
            assert own_atomic_write(path, 16384) == errno.EOPNOTSUPP, "the kernel refuses RWF_ATOMIC on overlay"
            assert own_atomic_write(os.path.join(upper, "direct"), 16384) == 0, "and accepts it on XFS"
            for target in (path, ov):
                rc, out, err = check(target, 16384)
                assert rc == 6, (rc, out, err)
                assert "overlay" in out, out
                rc, out, _ = check(target, 16384, "--no-confirm")
                assert rc == 6 and "overlay" in out, out
            p = probe_json(path, extra=("--confirm",))
            fs = layer(p, "filesystem")
            assert "EOPNOTSUPP" in fs["facts"]["live_rwf_atomic_refused"], fs["facts"]
            reasons = [r["reason"] for r in p["verdict"]["rwf_atomic"]["reasons"]]
            assert any("EOPNOTSUPP" in r and "live" in r for r in reasons), reasons
            assert p["verdict"]["rwf_atomic"]["max_untorn_bytes"] == 0
            advice = json.loads(lcloudctl("advise", "--db", "mysql", "--format", "json", ov).stdout)
            assert advice["settings"]["innodb_doublewrite"] == "ON"
            assert not any("RWF_ATOMIC" in line and "would guarantee" in line for line in advice["advice"])
            # and the XFS below, checked the same way, agrees with the kernel
            rc, out, _ = check(upper, 16384)
            assert rc == 0 and "confirmed" not in out or rc == 0, out
            p = probe_json(upper, extra=("--confirm",))
            assert layer(p, "filesystem")["facts"]["live_rwf_atomic_max_bytes"] == \
                p["verdict"]["rwf_atomic"]["max_untorn_bytes"] >= 16384
        finally:
            subprocess.run(["umount", ov])


def test_unreadable_evidence_is_unknown():
    """As nobody, a directory on XFS cannot hold the temporary file statx needs: unknown (8), not no
    (6); as root the same check is untorn (0)."""
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        rc, out, err = check(mnt, 16384)
        assert rc == 0, (rc, out, err)
        p = lcloudctl("check", "--size", "16K", mnt, user="nobody")
        assert p.returncode == 8, (p.returncode, p.stdout, p.stderr)
        assert "unknown" in p.stdout and "sudo" in p.stdout, p.stdout
        p = lcloudctl("check", "--size", "16K", "--format", "json", mnt, user="nobody")
        doc = json.loads(p.stdout)
        assert doc["answer"] == "unknown" and doc["untorn"] is False, doc
        # InnoDB's advice rests on plain_direct, which is known here (a loop device promises nothing)
        p = lcloudctl("advise", "--db", "mysql", "--format", "json", mnt, user="nobody")
        doc = json.loads(p.stdout)
        assert p.returncode == 0 and doc["settings"]["innodb_doublewrite"] == "ON", (p.returncode, doc)
        assert any("could not be told" in line for line in doc["advice"]), doc["advice"]
        # where it rests on what could not be read (a dm table without root), there is no advice
        tree = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit", "fixtures", "scsi")
        p = lcloudctl("--sysroot", tree, "advise", "--db", "mysql", "--format", "json", "/dev/dm-0")
        doc = json.loads(p.stdout)
        assert p.returncode == 8 and doc["settings"] == {} and doc["answer"] == "unknown", (p.returncode, doc)
        assert "run as root" in doc["advice"][0], doc
        # a file in it needs no temporary file: statx of the file is evidence enough
        path = os.path.join(mnt, "ibdata1")
        open(path, "w").close()
        os.chmod(path, 0o644)
        p = lcloudctl("check", "--size", "16K", path, user="nobody")
        assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)


def test_confirmation_that_cannot_be_done_is_not_a_refusal():
    """A full file system or the caller's file size limit stops the live RWF_ATOMIC writes before
    the kernel has said anything about atomicity: that is no refusal, so the answer is statx's
    (XFS honours it), never 'not untorn'."""
    with mounted_fs("xfs", size=300 << 20, mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        path, filler = os.path.join(mnt, "ibdata1"), os.path.join(mnt, "filler")
        open(path, "w").close()
        subprocess.run(["dd", "if=/dev/zero", "of=" + filler, "bs=1M"], capture_output=True)
        os.sync()
        # room for the temporary file and the small writes, not for 1 MiB
        os.truncate(filler, os.stat(filler).st_size - (512 << 10))
        os.sync()
        assert own_atomic_write(path, 1 << 20) == errno.ENOSPC, "the file system is nearly full"
        rc, out, err = check(path, 1 << 20)
        assert rc == 0 and "untorn on rwf_atomic" in out, (rc, out, err)
        fs = layer(probe_json(path, extra=("--confirm",)), "filesystem")
        why = fs["unavailable"]["live_rwf_atomic_max_bytes"]
        assert why["state"] == "unreadable" and "No space left" in why["reason"], why
        assert "live_rwf_atomic_refused" not in fs["facts"], fs["facts"]
        os.unlink(filler)
        # a file size limit of 128 KiB cuts the 256 KiB write short: not a refusal either
        def small_limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (128 << 10, 128 << 10))
        p = subprocess.run([os.environ.get("LCLOUDCTL", "lcloudctl"), "check", "--size", "1M", mnt],
                           capture_output=True, text=True, preexec_fn=small_limit)
        assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
        p = subprocess.run([os.environ.get("LCLOUDCTL", "lcloudctl"), "probe", "--confirm", "--format", "json", mnt],
                           capture_output=True, text=True, preexec_fn=small_limit)
        fs = layer(json.loads(p.stdout)["probes"][0], "filesystem")
        assert "RLIMIT_FSIZE" in fs["unavailable"]["live_rwf_atomic_max_bytes"]["reason"], fs


def test_directory_refused_for_root_is_not_a_permission_matter():
    """A read-only file system or an immutable directory refuses root the temporary file too: the
    answer is unknown, and the reason must not send the user to sudo."""
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        # an immutable directory refuses root with EPERM: not a permission another user has
        immutable = os.path.join(mnt, "immutable")
        os.mkdir(immutable)
        open(os.path.join(immutable, "ibdata1"), "w").close()
        subprocess.run(["chattr", "+i", immutable], check=True)
        try:
            rc, out, err = check(immutable, 16384)
            fs = layer(probe_json(os.path.join(immutable, "ibdata1"), extra=("--confirm",)), "filesystem")
        finally:
            subprocess.run(["chattr", "-i", immutable], check=True)
        assert rc == 8 and "sudo" not in out, (rc, out, err)
        # the live confirmation beside a file in it: not a matter of privileges either
        why = fs["unavailable"]["live_rwf_atomic_max_bytes"]
        assert why["state"] == "unreadable" and "run as a user" not in why["reason"], why
        subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
        try:
            os.open(mnt, os.O_TMPFILE | os.O_RDWR, 0o600)
            raise AssertionError("a read-only file system accepted O_TMPFILE")
        except OSError as e:
            assert e.errno == errno.EROFS, e
        rc, out, err = check(mnt, 16384)
        assert rc == 8 and "unknown" in out, (rc, out, err)
        assert "sudo" not in out and "tmpfile-refused" in out, out
        assert layer(probe_json(mnt), "filesystem") and "Read-only file system" in \
            " ".join(n["message"] for n in probe_json(mnt)["notes"] if n["code"] == "tmpfile-refused")


def test_sizes_above_the_confirmation_rest_on_statx_where_it_is_honoured():
    """The live confirmation tries sizes up to 8 MiB. XFS mounted with max_atomic_write=16m accepts
    16 MiB RWF_ATOMIC writes (the test's own pwritev2): statx decides there, as without the
    confirmation, not 'unknown'."""
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        subprocess.run(["umount", mnt], check=True)
        subprocess.run(["mount", "-o", "max_atomic_write=16m", dev, mnt], check=True)
        path = os.path.join(mnt, "ibdata1")
        open(path, "w").close()
        assert own_statx(path)["stx_atomic_write_unit_max"] == 16 << 20
        assert own_atomic_write(path, 16 << 20) == 0, "the kernel accepts 16 MiB"
        for target in (path, mnt):
            rc, out, err = check(target, 16 << 20, "--no-confirm")
            assert rc == 0, (rc, out, err)
            rc, out, err = check(target, 16 << 20)
            assert rc == 0 and "untorn on rwf_atomic" in out, (rc, out, err)
            rc, out, err = check(target, 32 << 20)
            assert rc == 6 and "16777216" in out and "statx" in out, (rc, out, err)
        p = probe_json(path, extra=("--confirm",))
        assert layer(p, "filesystem")["facts"]["live_rwf_atomic_max_bytes"] == 8 << 20
        assert p["verdict"]["rwf_atomic"]["max_untorn_bytes"] == 16 << 20


def test_ext4_file():
    with mounted_fs("ext4") as (dev, mnt):
        path = os.path.join(mnt, "base")
        open(path, "w").close()
        assert own_statx(path).get("stx_atomic_write_unit_max", 0) == 0
        v = verdict(path)
        for name in ("rwf_atomic", "passthrough", "plain_direct", "buffered"):
            assert v[name]["max_untorn_bytes"] == 0, name
        rc, out, _ = check(path, 4096)
        assert rc == 6, out
        advice = json.loads(lcloudctl("advise", "--db", "postgresql", "--format", "json", mnt).stdout)
        assert advice["settings"]["full_page_writes"] == "on" and advice["page_size"] == 8192
        assert any("crash lab" in line and "matrix" in line for line in advice["advice"]), advice["advice"]
        # nobody may not write in it, but ext4 has only the device's atomic writes, and it has none
        assert read_sysfs(sysfs_block_dir(os.path.basename(dev)) + "/queue/atomic_write_unit_max_bytes") == "0"
        p = lcloudctl("check", "--size", "16K", mnt, user="nobody")
        assert p.returncode == 6 and "atomic_write_unit_max_bytes" in p.stdout, (p.returncode, p.stdout, p.stderr)


def test_root_disk_and_partitions():
    st = os.stat("/")
    devdir = os.path.realpath("/sys/dev/block/%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev)))
    if os.path.exists(devdir + "/partition"):
        devdir = os.path.dirname(devdir)
    name = os.path.basename(devdir)
    v = verdict("/dev/" + name)
    want = int(read_sysfs(devdir + "/queue/atomic_write_unit_max_bytes"))
    assert v["rwf_atomic"]["max_untorn_bytes"] == pow2_floor(want)
    assert v["plain_direct"]["max_untorn_bytes"] == 0
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "disk"), 64 << 20,
                                         "label: dos\nstart=2049, size=40000, type=83\n") as dev:
        v = verdict(dev + "p1")
        assert v["rwf_atomic"]["max_untorn_bytes"] == 0 and v["plain_direct"]["max_untorn_bytes"] == 0
        # sizes that cannot be: not a power of two, larger than the device
        rc, _, err = check(dev, 12288)
        assert rc == 2 and "not a power of two" in err, err
        rc, _, err = check(dev + "p1", 64 << 20)
        assert rc == 2 and "larger than" in err, err
        rc, _, err = check(dev, 4096, "--path", "atomic")
        assert rc == 2 and "unknown path" in err, err


def test_advise_page_larger_than_the_device():
    """A 16 KiB page on an 8 KiB device has no verdict: advise says so (usage error, like check)
    instead of advising with an empty reason."""
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "tiny"), 8192) as dev:
        assert int(read_sysfs(sysfs_block_dir(os.path.basename(dev)) + "/size")) * 512 == 8192
        rc, _, err = check(dev, 16384)
        assert rc == 2 and "larger than" in err, (rc, err)
        p = lcloudctl("advise", "--db", "mysql", dev)
        assert p.returncode == 2 and "larger than" in p.stderr, (p.returncode, p.stdout, p.stderr)
        p = lcloudctl("advise", "--db", "postgresql", "--page-size", "8K", dev)
        assert p.returncode == 0 and "full_page_writes = on" in p.stdout, (p.returncode, p.stdout, p.stderr)


if __name__ == "__main__":
    main([test_xfs_file, test_overlayfs_does_not_inherit_xfs_guarantee, test_unreadable_evidence_is_unknown,
          test_confirmation_that_cannot_be_done_is_not_a_refusal,
          test_directory_refused_for_root_is_not_a_permission_matter,
          test_sizes_above_the_confirmation_rest_on_statx_where_it_is_honoured, test_ext4_file,
          test_root_disk_and_partitions, test_advise_page_larger_than_the_device])
