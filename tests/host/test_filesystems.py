#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""File system layer on the real kernel: XFS and ext4 on loop devices.
Expected values come from the tests' own statx reader and from sysfs."""
import json
import os

import re
import subprocess
import sys
import time

from hostlib import (STATX_ATTR_WRITE_ATOMIC, layer, main, mounted_fs, own_statx, probe_json,
                     need_tool, read_sysfs, run, sysfs_block_dir)

STX_FIELDS = ("stx_atomic_write_unit_min", "stx_atomic_write_unit_max", "stx_atomic_write_segments_max",
              "stx_atomic_write_unit_max_opt", "stx_dio_mem_align", "stx_dio_offset_align",
              "stx_dio_read_offset_align")


def compare_statx(probe, path):
    fs = layer(probe, "filesystem")
    mine = own_statx(path)
    for field in STX_FIELDS:
        if field in mine:
            assert fs["facts"][field] == mine[field], (field, fs["facts"][field], mine[field])
            assert fs["sources"][field] == "statx"
        else:
            assert fs["facts"][field] is None, field
            assert "not reported" in fs["unavailable"][field]["reason"]
    if mine["attributes_mask"] & STATX_ATTR_WRITE_ATOMIC:
        assert fs["facts"]["stx_attr_write_atomic"] == bool(mine["attributes"] & STATX_ATTR_WRITE_ATOMIC)
    return fs, mine


def compare_loop_queue(probe, dev):
    loop = layer(probe, "loop", os.path.basename(dev))
    qdir = sysfs_block_dir(os.path.basename(dev)) + "/queue/"
    for name in ("logical_block_size", "physical_block_size", "minimum_io_size", "optimal_io_size",
                 "max_sectors_kb", "max_hw_sectors_kb", "dma_alignment", "atomic_write_unit_min_bytes",
                 "atomic_write_unit_max_bytes", "atomic_write_max_bytes", "atomic_write_boundary_bytes",
                 "max_write_streams", "write_stream_granularity"):
        if os.path.exists(qdir + name):
            assert loop["facts"][name] == int(read_sysfs(qdir + name)), name
        else:
            assert loop["facts"][name] is None and "not provided by this kernel" in loop["unavailable"][name]["reason"]
    return loop


def test_xfs_file_reports_atomic_limits():
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        path = os.path.join(mnt, "ibdata1")
        with open(path, "wb") as f:
            f.write(b"\0" * 65536)
        probe = probe_json(path)
        assert probe["target"] == "regular"
        fs, mine = compare_statx(probe, path)
        assert fs["name"] == "xfs" and fs["facts"]["fstype"] == "xfs"
        assert fs["facts"]["mount_point"] == mnt
        assert fs["facts"]["mount_source"] == dev
        assert fs["facts"]["block_size"] == os.statvfs(path).f_bsize
        # XFS on 6.16+ does software atomic writes: the kernel says so, so must we
        assert mine.get("stx_atomic_write_unit_max", 0) > 0, "this kernel gives XFS no atomic writes: %s" % mine
        assert fs["facts"]["stx_attr_write_atomic"] is True
        loop = compare_loop_queue(probe, dev)
        assert loop["parent"] == 0
        assert loop["facts"]["loop_dio"] is True


def test_xfs_directory_reports_file_limits():
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        d = os.path.join(mnt, "mysql")
        os.mkdir(d)
        ref = os.path.join(mnt, "reference-file")
        open(ref, "w").close()
        probe = probe_json(d)
        assert probe["target"] == "directory"
        # a directory stands for the files created in it: compare with a file's statx
        compare_statx(probe, ref)
        assert layer(probe, "filesystem")["facts"]["stx_atomic_write_unit_max"] > 0


def test_ext4_reports_no_atomic_writes():
    with mounted_fs("ext4") as (dev, mnt):
        path = os.path.join(mnt, "data")
        open(path, "w").close()
        probe = probe_json(path)
        fs, mine = compare_statx(probe, path)
        assert fs["facts"]["fstype"] == "ext4"
        assert mine.get("stx_atomic_write_unit_max", 0) == 0
        assert fs["facts"]["stx_atomic_write_unit_max"] in (0, None)
        assert fs["facts"]["stx_attr_write_atomic"] in (False, None)
        compare_loop_queue(probe, dev)


def test_ext4_bigalloc_cluster_size():
    """The cluster size read from the superblock equals dumpe2fs's reading."""
    with mounted_fs("ext4", mkfs_args=("-O", "bigalloc", "-C", "16384")) as (dev, mnt):
        path = os.path.join(mnt, "ibdata1")
        open(path, "w").close()
        fs = layer(probe_json(path), "filesystem")
        out = run(["dumpe2fs", "-h", dev], check=True).stdout
        cluster = int(re.search(r"^Cluster size:\s+(\d+)", out, re.M).group(1))
        assert cluster == 16384
        assert fs["facts"]["cluster_size"] == cluster and fs["facts"]["block_size"] == 4096
        assert fs["sources"]["cluster_size"] == "ext4:superblock:s_log_cluster_size"


def filefrag_edges(path):
    """Every extent start and end in bytes, by filefrag (FIEMAP through e2fsprogs)."""
    out = run(["filefrag", "-b4096", "-e", path], check=True).stdout
    edges = []
    for m in re.finditer(r"^\s*\d+:\s+(\d+)\.\.\s*(\d+):", out, re.M):
        edges += [int(m.group(1)) * 4096, (int(m.group(2)) + 1) * 4096]
    return edges, out


def pow2_dividing(n):
    return n & -n if n else 1 << 30


def test_file_extent_edges_match_filefrag():
    """extent_edge_alignment is the largest power of two dividing every
    extent edge filefrag lists; a file only nobody cannot read says why."""
    need_tool("filefrag", "e2fsprogs")
    with mounted_fs("ext4", mkfs_args=("-O", "bigalloc", "-C", "16384")) as (dev, mnt):
        files = {"tail12k": 12288, "pages": 65536, "holes": None, "empty": 0}
        for name, size in files.items():
            path = os.path.join(mnt, name)
            fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
            if size:
                os.write(fd, os.urandom(size))
            elif size is None:  # data at 0 and at 1 MiB + 4 KiB: a hole between, edges at 4 KiB steps
                os.pwrite(fd, os.urandom(4096), 0)
                os.pwrite(fd, os.urandom(4096), (1 << 20) + 4096)
            os.fsync(fd)
            os.close(fd)
        for name in files:
            path = os.path.join(mnt, name)
            facts = layer(probe_json(path), "filesystem")["facts"]
            edges, text = filefrag_edges(path)
            assert facts["extents"] == len(edges) // 2, (name, facts, text)
            if not edges:
                assert "extent_edge_alignment" not in facts, (name, facts)
                continue
            want = min(min(pow2_dividing(e) for e in edges), 1 << 30)
            assert facts["extent_edge_alignment"] == want, (name, facts, text)
        assert layer(probe_json(os.path.join(mnt, "tail12k")), "filesystem")["facts"]["extent_edge_worst"] == 12288
        # nobody may not read the file: the fact is unreadable with the reason, never a guess
        probe = probe_json(os.path.join(mnt, "pages"), user="nobody")
        fs = layer(probe, "filesystem")
        assert fs["facts"].get("extent_edge_alignment") is None, fs
        assert "ermission" in json.dumps(fs), fs


def test_file_extents_inline_reflinked_and_busy():
    """ext4 inline data is not placed in blocks (alignment 1); a reflinked XFS file's shared extents
    count like any, as filefrag lists them; a file written while probed never hangs the probe and its
    facts are filefrag's of a moment."""
    need_tool("filefrag", "e2fsprogs")
    with mounted_fs("ext4", 1 << 28, mkfs_args=("-O", "inline_data")) as (dev, mnt):
        path = os.path.join(mnt, "inline")
        with open(path, "w") as f:
            f.write("x" * 40)
        os.sync()
        assert "inline" in run(["filefrag", "-v", path], check=True).stdout
        facts = layer(probe_json(path), "filesystem")["facts"]
        assert (facts["extents"], facts["extent_edge_alignment"]) == (1, 1), facts
    with mounted_fs("xfs") as (dev, mnt):
        a, b = os.path.join(mnt, "a"), os.path.join(mnt, "b")
        with open(a, "wb") as f:
            f.write(os.urandom(1 << 20))
        run(["cp", "--reflink=always", a, b], check=True)
        run(["fallocate", "-p", "-o", str(65536 + 4096), "-l", "4096", b], check=True)  # a hole in the copy
        edges, text = filefrag_edges(b)
        assert "shared" in run(["filefrag", "-v", b], check=True).stdout
        facts = layer(probe_json(b), "filesystem")["facts"]
        assert facts["extents"] == len(edges) // 2 == 2 and facts["extent_edge_alignment"] == 4096, (facts, text)
        assert facts["extent_edge_worst"] == 65536 + 4096, facts
        busy = os.path.join(mnt, "busy")
        open(busy, "wb").close()  # the probes below must find it however slowly the writer starts
        writer = subprocess.Popen([sys.executable, "-c", "import os,sys,time\nf=open(sys.argv[1],'ab')\n"
                                   "end=time.monotonic()+3\nwhile time.monotonic()<end:\n f.write(os.urandom(65536))"
                                   "\n f.flush()\n", busy])
        try:
            end = time.monotonic() + 20
            while os.path.getsize(busy) == 0 and time.monotonic() < end:
                time.sleep(0.05)
            for _ in range(10):
                facts = layer(probe_json(busy), "filesystem")["facts"]
                assert facts["extents"] >= 1 and facts.get("extent_edge_alignment"), facts
        finally:
            writer.wait(timeout=30)


def test_block_device_statx_and_signature():
    with mounted_fs("xfs") as (dev, mnt):
        probe = probe_json(dev)
        assert probe["target"] == "disk"
        top = layer(probe, "loop", os.path.basename(dev))
        mine = own_statx(dev)
        for field in ("stx_dio_mem_align", "stx_dio_offset_align", "stx_atomic_write_unit_max"):
            if field in mine:
                assert top["facts"][field] == mine[field], field
        # blkid reads the XFS superblock on the device
        assert top["facts"]["signature_type"] == "xfs"


if __name__ == "__main__":
    main([test_xfs_file_reports_atomic_limits, test_xfs_directory_reports_file_limits,
          test_ext4_reports_no_atomic_writes, test_ext4_bigalloc_cluster_size,
          test_block_device_statx_and_signature, test_file_extent_edges_match_filefrag,
          test_file_extents_inline_reflinked_and_busy])
