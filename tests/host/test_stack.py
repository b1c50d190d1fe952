#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Device stack on the real kernel: a partitioned loop device with one
partition off the 4 KiB grid, and the machine's root disk against sysfs."""
import json
import os
import re

from hostlib import (layer, lcloudctl, loop_device, main, need_root, notes, probe_json, read_sysfs,
                     scratch_dir, sysfs_block_dir)

# p1 at sector 2049: 2049 * 512 = 1049088 bytes, 512 past a 4 KiB boundary.
# p2 at sector 65536 = 32 MiB: aligned to everything.
PARTITIONS = "label: dos\nstart=2049, size=40000, type=83\nstart=65536, size=40000, type=83\n"
P1_START_BYTES = 2049 * 512

QUEUE_FACTS = ("logical_block_size", "physical_block_size", "minimum_io_size", "optimal_io_size",
               "max_sectors_kb", "max_hw_sectors_kb", "dma_alignment", "rotational", "write_cache",
               "atomic_write_unit_min_bytes", "atomic_write_unit_max_bytes", "atomic_write_max_bytes",
               "atomic_write_boundary_bytes", "max_write_streams", "write_stream_granularity")


def test_misaligned_partition_is_flagged():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "disk"), 64 << 20, PARTITIONS) as dev:
        name = os.path.basename(dev)
        p1 = probe_json(dev + "p1")
        assert p1["target"] == "partition"
        part = layer(p1, "partition", name + "p1")
        # the start as the kernel has it, read by the test
        start = int(read_sysfs(sysfs_block_dir(name + "p1") + "/start"))
        assert part["facts"]["start"] == start and part["facts"]["start_bytes"] == start * 512
        assert start * 512 == P1_START_BYTES
        flagged = notes(p1, "partition-misaligned")
        assert len(flagged) == 1, p1["notes"]
        assert str(P1_START_BYTES) in flagged[0]["message"] and "4096" in flagged[0]["message"]
        assert flagged[0]["severity"] == "warning"
        assert layer(p1, "loop", name)["parent"] == 0

        p2 = probe_json(dev + "p2")
        assert notes(p2, "partition-misaligned") == []

        # list shows the same, one line per device
        listing = json.loads(lcloudctl("list", "-J").stdout)["blockdevices"]
        rows = {r["name"]: r for r in listing}
        assert rows[name + "p1"]["align"] == "MISALIGNED" and rows[name + "p2"]["align"] == "ok"
        assert rows[name + "p1"]["type"] == "part"
        # --tree hangs the partitions under their loop device
        tree = json.loads(lcloudctl("list", "--tree", "-J", "-o", "NAME,TYPE,ALIGN", name).stdout)["blockdevices"]
        assert [r["name"] for r in tree] == [name], tree
        assert [c["name"] for c in tree[0]["children"]] == [name + "p1", name + "p2"], tree
        text = lcloudctl("list").stdout
        line = [l for l in text.splitlines() if l.split()[0] == name + "p1"][0]
        assert line.split()[-1] == "MISALIGNED", line


def root_disk():
    st = os.stat("/")
    devdir = os.path.realpath("/sys/dev/block/%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev)))
    if os.path.exists(devdir + "/partition"):
        devdir = os.path.dirname(devdir)
    return os.path.basename(devdir), devdir


def test_root_disk_matches_sysfs():
    name, devdir = root_disk()
    node = "/dev/" + name
    probe = probe_json(node)
    disk = probe["layers"][0]
    assert disk["name"] == name
    for fact in QUEUE_FACTS:
        path = devdir + "/queue/" + fact
        if not os.path.exists(path):
            assert disk["facts"][fact] is None
            assert disk["unavailable"][fact]["state"] == "not-provided"
            continue
        raw = read_sysfs(path)
        value = disk["facts"][fact]
        if isinstance(value, bool):
            assert value == (raw == "1"), fact
        elif isinstance(value, str):
            assert value == raw, fact
        else:
            assert value == int(raw), (fact, value, raw)
    assert disk["facts"]["size"] == int(read_sysfs(devdir + "/size")) * 512
    # the same disk through the file system of /
    fs_probe = probe_json("/")
    assert any(l["name"] == name for l in fs_probe["layers"]), fs_probe["layers"]


def is_unbound_loop(name):
    """lsblk's rule, read from sysfs: a loop device with no file has no loop/ folder and size 0."""
    return (re.fullmatch(r"loop[0-9]+", name) is not None and not os.path.exists("/sys/class/block/%s/loop" % name)
            and read_sysfs("/sys/class/block/%s/size" % name) == "0")


def test_list_covers_every_block_device():
    listing = json.loads(lcloudctl("list", "--all", "--format", "json").stdout)["blockdevices"]
    names = sorted(r["name"] for r in listing)
    assert names == sorted(os.listdir("/sys/class/block")), (names, os.listdir("/sys/class/block"))
    # without --all, as lsblk: every device but the unbound loop devices
    bound = json.loads(lcloudctl("list", "-J").stdout)["blockdevices"]
    expected = sorted(n for n in os.listdir("/sys/class/block") if not is_unbound_loop(n))
    assert sorted(r["name"] for r in bound) == expected
    for r in listing:
        qdir = sysfs_block_dir(r["name"])
        if r["type"] == "part":
            qdir = os.path.dirname(qdir)
        if os.path.exists(qdir + "/queue/physical_block_size"):
            assert r["phy-sec"] == int(read_sysfs(qdir + "/queue/physical_block_size"))


if __name__ == "__main__":
    main([test_misaligned_partition_is_flagged, test_root_disk_matches_sysfs,
          test_list_covers_every_block_device])
