# SPDX-License-Identifier: LGPL-2.1-or-later
"""The binding over the crafted fixture trees (tests/unit/fixtures, read
through a sysroot): the same cases, sizes and reasons as the C tests
(tests/unit/test_verdict.c), and the same answers as lcloudctl reading the
same tree in another process. Runs as any user."""
import errno
import os
from typing import Dict

import pytest

import lcloud
from common import FIXTURES, lcloudctl_json

# tree, device, largest untorn write on rwf_atomic, passthrough, plain_direct,
# passthrough boundary and its offset, a text the plain_direct verdict's reasons
# or evidence carry: test_verdict.c's table, row for row
VERDICT_ROWS = [
    ("nvme-crafted", "/dev/nvme0n1", 16384, 16384, 16384, 65536, 16384, "nvme:id-ns:nawupf"),
    ("nvme-crafted", "/dev/nvme1n1", 512, 16384, 16384, 0, 0, "cloud:aws-ebs-twp"),
    ("nvme-crafted", "/dev/nvme6n1", 8192, 32768, 8192, 32768, 8192, "8192 + k * 32768"),
    ("nvme-crafted", "/dev/nvme7n1p1", 0, 16384, 4096, 65536, 65536 - 4096, "1052672"),
    ("nvme-crafted", "/dev/nvme7n1p2", 16384, 16384, 16384, 65536, 0, "nvme:id-ns:nawupf"),
    ("nvme-crafted", "/dev/nvme1n1p1", 512, 512, 512, 0, 0, "32256"),
    ("nvme-qemu", "/dev/nvme0n1", 4096, 4096, 4096, 0, 0, "nvme:id-ctrl:awupf"),
    ("scsi", "/dev/sda", 0, 0, 16384, 0, 0, "cloud:gcp-pd-16k"),
    ("stacks", "/dev/md0", 16384, 0, 4096, 0, 0, "1052672"),
    ("stacks", "/dev/md1", 16384, 0, 0, 0, 0, "raid5"),
    ("old-kernel", "/dev/vda", 0, 0, 0, 0, 0, "promises no untorn writes"),
]


def tree(name: str) -> str:
    return os.path.join(FIXTURES, name)


def mentions(verdict: Dict[str, object], needle: str) -> bool:
    reasons = verdict["reasons"]
    assert isinstance(reasons, list)
    return any(needle in (r["reason"] or "") or needle in (r["evidence"] or "") for r in reasons)


@pytest.mark.parametrize("name,dev,rwf_atomic,passthrough,plain_direct,boundary,boundary_offset,reason",
                         VERDICT_ROWS, ids=["%s:%s" % (r[0], r[1]) for r in VERDICT_ROWS])
def test_verdict_table(name: str, dev: str, rwf_atomic: int, passthrough: int, plain_direct: int, boundary: int,
                       boundary_offset: int, reason: str) -> None:
    p = lcloud.probe(dev, sysroot=tree(name))
    v = p.verdict
    assert v["rwf_atomic"]["max_untorn_bytes"] == rwf_atomic
    assert v["passthrough"]["max_untorn_bytes"] == passthrough
    assert v["plain_direct"]["max_untorn_bytes"] == plain_direct
    assert v["buffered"]["max_untorn_bytes"] == 0
    if passthrough:
        assert v["passthrough"]["boundary_bytes"] == boundary
        assert v["passthrough"]["boundary_offset_bytes"] == boundary_offset
    assert mentions(v["plain_direct"], reason), v["plain_direct"]["reasons"]
    for path in ("rwf_atomic", "passthrough", "plain_direct", "buffered"):
        assert v[path]["reasons"], "the %s verdict says no why" % path
    # lcloudctl, another process over the same tree, prints the same probe
    rc, doc = lcloudctl_json("--sysroot", tree(name), "probe", "--format", "json", dev)
    assert rc == 0
    assert doc["probes"][0] == p.to_dict()


@pytest.mark.parametrize("dev,yes_4k,yes_16k", [("/dev/sda", "untorn", "untorn"), ("/dev/sda1", "untorn", "no")])
def test_gpd_rule_disk_and_partition(dev: str, yes_4k: str, yes_16k: str) -> None:
    """Google PD's 16 KiB promise: sda1 starts 4 KiB past a physical block, so 16 KiB aligned writes straddle two."""
    assert lcloud.check(dev, 4096, "plain_direct", sysroot=tree("scsi")).answer == yes_4k
    c = lcloud.check(dev, 16384, "plain_direct", sysroot=tree("scsi"))
    assert c.answer == yes_16k and c.untorn == (yes_16k == "untorn")
    assert c.io_path == "plain_direct"
    if yes_16k == "no":
        assert "more than the largest untorn write, 4096 bytes" in c.why
        v = lcloud.probe(dev, sysroot=tree("scsi")).verdict["plain_direct"]
        assert v["max_untorn_bytes"] == 4096 and mentions(v, "10489856")


def test_merge_gap() -> None:
    """sdo, a Google PD clone whose block layer merges: a whole 16 KiB block stays untorn in merged commands,
    512-byte writes too, the sizes between not; the binding's verdict has the gap as lcloudctl's JSON does."""
    v = lcloud.probe("/dev/sdo", sysroot=tree("scsi")).verdict["plain_direct"]
    assert (v["max_untorn_bytes"], v["merge_gap_above_bytes"], v["merge_gap_below_bytes"]) == (16384, 512, 16384), v
    assert lcloud.check("/dev/sdo", 16384, "plain_direct", sysroot=tree("scsi")).answer == "untorn"
    c = lcloud.check("/dev/sdo", 8192, "plain_direct", sysroot=tree("scsi"))
    assert c.answer == "no" and "merge such a write with a neighbour" in c.why, c.why


def test_partition_without_start_is_unknown() -> None:
    """sda2's start is missing from the capture: where its writes land is unknown; the answers that need no
    start (no atomic writes on the disk, no NVMe namespace) stay no."""
    root = tree("scsi")
    c = lcloud.check("/dev/sda2", 16384, "plain_direct", sysroot=root)
    assert c.answer == "unknown" and "where the partition starts could not be read" in c.why, c.why
    assert lcloud.check("/dev/sda2", 4096, "best", sysroot=root).answer == "unknown"
    assert lcloud.check("/dev/sda2", 4096, "rwf_atomic", sysroot=root).answer == "no"
    assert lcloud.check("/dev/sda2", 4096, "passthrough", sysroot=root).answer == "no"


def test_uncaptured_identify_is_unknown() -> None:
    """md-nvme has no Identify data for nvme0n1: the power-fail size was not read (unknown, not no)."""
    root = tree("md-nvme")
    c = lcloud.check("/dev/nvme0n1", 16384, "plain_direct", sysroot=root)
    assert c.answer == "unknown" and "captured tree has none" in c.why, c.why
    c = lcloud.check("/dev/nvme0n1", 16384, "passthrough", sysroot=root)
    assert c.answer == "unknown" and "not an NVMe namespace" not in c.why
    # RWF_ATOMIC rests on the kernel's queue limits, which were captured
    assert lcloud.check("/dev/nvme0n1", 16384, "rwf_atomic", sysroot=root).answer == "untorn"


def test_dm_without_table_is_unknown() -> None:
    """dm-0 on the Google PD tree: the table is not in a capture, so where writes land is unknown."""
    for io_path in ("plain_direct", "best"):
        c = lcloud.check("/dev/dm-0", 4096, io_path, sysroot=tree("scsi"))
        assert c.answer == "unknown" and not c.untorn, c
        assert "run as root" in c.why
        rc, doc = lcloudctl_json("--sysroot", tree("scsi"), "check", "/dev/dm-0", "--size", "4096", "--path",
                                 io_path, "--format", "json")
        assert rc == 8 and doc["answer"] == "unknown" and doc["why"] == c.why
    v = lcloud.probe("/dev/dm-0", sysroot=tree("scsi")).verdict["plain_direct"]
    assert v["max_untorn_bytes"] == 0 and v["above_max"] == "unknown" and v["unknown_reason"]


# buffers the kernel accepts at any 512-byte boundary may touch one page more than they fill (sdm's
# must be page-aligned); sdj, sdk and sdl lack a limit, so above one page is unknown
SPLITS = [("/dev/sdf", 4096, "sysfs:queue/max_segments"), ("/dev/sdg", 4096, "sysfs:queue/max_segments"),
          ("/dev/sdh", 512, "sysfs:queue/virt_boundary_mask"), ("/dev/sdi", 8192, "sysfs:queue/max_sectors_kb"),
          ("/dev/sdj", 4096, "sysfs:queue/max_segments"), ("/dev/sdk", 4096, "sysfs:queue/max_sectors_kb"),
          ("/dev/sdl", 4096, "sysfs:queue/chunk_sectors"), ("/dev/sdm", 8192, "sysfs:queue/max_segments")]
UNKNOWN_ABOVE_A_PAGE = ("/dev/sdj", "/dev/sdk", "/dev/sdl")


@pytest.mark.parametrize("dev,largest,evidence", SPLITS, ids=[s[0] for s in SPLITS])
def test_block_layer_split_rules(dev: str, largest: int, evidence: str) -> None:
    if os.sysconf("SC_PAGESIZE") != 4096:
        pytest.skip("the split rules' sizes are worked out for 4 KiB pages")
    p = lcloud.probe(dev, sysroot=tree("scsi"))
    v = p.verdict["plain_direct"]
    assert v["max_untorn_bytes"] == largest
    assert mentions(v, evidence)
    disk = p.layer("disk")
    assert disk is not None and "max_segment_size" in disk.facts and "virt_boundary_mask" in disk.facts
    expected = "unknown" if dev in UNKNOWN_ABOVE_A_PAGE else "no"
    assert lcloud.check(dev, 16384, "plain_direct", sysroot=tree("scsi")).answer == expected
    assert lcloud.check(dev, largest, "plain_direct", sysroot=tree("scsi")).answer == "untorn"


def test_check_answers_and_errors() -> None:
    root = tree("nvme-crafted")
    c = lcloud.check("/dev/nvme0n1", 16384, sysroot=root)
    assert (c.answer, c.io_path) == ("untorn", "rwf_atomic") and "untorn on rwf_atomic" in c.why
    c = lcloud.check("/dev/nvme0n1", 32768, sysroot=root)
    assert c.answer == "no" and "16384" in c.why
    c = lcloud.check("/dev/nvme0n1", 4096, "buffered", sysroot=root)
    assert c.answer == "no" and "page cache" in c.why
    c = lcloud.check("/dev/nvme0n1", 2048, "rwf_atomic", sysroot=root)
    assert c.answer == "no" and "below the smallest" in c.why
    for size in (0, 12288):
        with pytest.raises(ValueError):
            lcloud.check("/dev/nvme0n1", size, sysroot=root)
    with pytest.raises(OSError) as e:  # larger than the 1 GiB namespace
        lcloud.check("/dev/nvme0n1", 1 << 31, sysroot=root)
    assert e.value.errno == errno.ERANGE
    with pytest.raises(ValueError):
        lcloud.check("/dev/nvme0n1", 4096, "atomic", sysroot=root)

