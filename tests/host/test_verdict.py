#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The verdict on the real 6.18 kernel, table driven. Expected values come
from the documented rules applied to independent readings:
  - rwf_atomic on a file: the tests' own statx (unit max, rounded down to a
    power of two; the kernel guarantees untorn-or-error there);
  - plain_direct: 0 on loop devices and virtio disks, which promise nothing;
  - rwf_atomic on a block device: its sysfs atomic_write_unit_max_bytes;
  - buffered: never."""
import json
import os

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
        assert v["rwf_atomic"]["alignment"] == "natural"
        assert v["plain_direct"]["max_untorn_bytes"] == 0, "a loop device promises nothing"
        assert any("promises no untorn writes" in r["reason"] for r in v["plain_direct"]["reasons"])
        assert v["passthrough"]["max_untorn_bytes"] == 0
        assert v["buffered"]["max_untorn_bytes"] == 0
        rc, out, _ = check(path, 16384)
        assert rc == 0 and "untorn on rwf_atomic" in out, out
        rc, out, _ = check(path, 16384, "--path", "plain_direct")
        assert rc == 6 and "not untorn on plain_direct" in out, out
        rc, out, _ = check(path, mine["stx_atomic_write_unit_max"] * 2)
        assert rc == 6 and str(mine["stx_atomic_write_unit_max"]) in out, out
        advice = json.loads(lcloudctl("advise", "--db", "mysql", "-o", "json", mnt).stdout)
        assert advice["settings"]["innodb_doublewrite"] == "ON"
        assert any("RWF_ATOMIC" in line for line in advice["advice"])


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
        advice = json.loads(lcloudctl("advise", "--db", "postgresql", "-o", "json", mnt).stdout)
        assert advice["settings"]["full_page_writes"] == "on" and advice["page_size"] == 8192


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


if __name__ == "__main__":
    main([test_xfs_file, test_ext4_file, test_root_disk_and_partitions])
