#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""advise on a cloud disk model (issue 24): named with --disk-model, or
recognised from the probe's cloud layer (an AWS EBS volume: gp3 assumed), it
says what the doublewrite buffer costs under the model's caps, the limit
computed from the caps, the page size and doublewrite's batch of 64 pages,
and cites liblcloud's measured figures (tests/bench/README.md) for 16 KiB
pages only. Captured sysfs trees (tests/unit/fixtures): no root, no device."""
import json
import os

from hostlib import lcloudctl, main
from schemalib import validate

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "unit", "fixtures")


def advise(tree, dev, *extra, db="mariadb"):
    p = lcloudctl("--sysroot", os.path.join(FIX, tree), "advise", dev, "--db", db, "--format", "json", *extra)
    assert p.returncode == 0, (p.returncode, p.stderr)
    doc = json.loads(p.stdout)
    validate("advise", doc, "advise %s %s %s" % (tree, dev, " ".join(extra)))
    return doc


def model_line(doc):
    lines = [l for l in doc["advice"] if "doublewrite" in l and "pages per second" in l and "cap" in l]
    assert len(lines) == 1, doc["advice"]
    return lines[0]


def test_ebs_volume_is_recognised_as_gp3():
    doc = advise("nvme-crafted", "/dev/nvme1n1")
    assert doc["settings"]["innodb_doublewrite"] == "OFF"
    m = doc["disk_model"]
    assert (m["name"], m["source"], m["iops"], m["bytes_per_second"], m["iops_size"]) == \
        ("gp3", "recognised", 3000, 125 << 20, 256 << 10), m
    # 16 KiB pages: 3000 in place, 3000 / (1 + 4/64) with doublewrite (its 1 MiB batch in 4 operations)
    assert m["bound"] == "iops" and abs(m["limit"] - 1.0625) < 1e-9, m
    assert m["measured_page_flush"] is not None
    line = model_line(doc)
    assert "AWS EBS volume" in line and "assumed" in line and "tests/bench/README.md" in line, line
    assert "allow 1.06x" in line and "up to 1.19x where they are enforced over a tenth of a second" in line, line
    assert m["limit_phased"] == 1.19 and m["measured_mariadb"] is not None


def test_named_model_overrides_and_bandwidth_binds():
    doc = advise("nvme-crafted", "/dev/nvme1n1", "--disk-model", "bw-bound")
    m = doc["disk_model"]
    assert (m["name"], m["source"], m["bound"], m["limit"]) == ("bw-bound", "named", "bandwidth", 2.0), m
    assert "recognised" not in model_line(doc) and "allow 2.00x" in model_line(doc)
    assert "tenth of a second" not in model_line(doc)  # one cap binds both phases


def test_other_page_sizes_get_the_limit_but_no_measured_figure():
    doc = advise("nvme-crafted", "/dev/nvme1n1", "--disk-model", "bw-bound", "--page-size", "4K")
    m = doc["disk_model"]
    # 4 KiB pages on 16000 IOPS, 125 MiB/s: the IOPS cap binds, doublewrite adds 1/64 operation per page
    assert m["bound"] == "iops" and abs(m["limit"] - 65 / 64) < 1e-9, m
    assert m["measured_page_flush"] is None and m["measured_mariadb"] is None and m["limit_phased"] is None
    assert "measured" not in model_line(doc)


def test_kept_doublewrite_names_its_cost():
    doc = advise("stacks", "/dev/md0", "--disk-model", "gp3")
    assert doc["settings"]["innodb_doublewrite"] == "ON"
    assert model_line(doc).startswith("what the doublewrite buffer costs on AWS EBS gp3"), model_line(doc)


def test_no_model_without_a_cloud_disk_or_for_postgresql():
    for tree, dev in (("stacks", "/dev/nvme0n1"), ("scsi", "/dev/sda")):
        doc = advise(tree, dev)
        assert "disk_model" not in doc and not any("pages per second" in l for l in doc["advice"]), doc
    doc = advise("nvme-crafted", "/dev/nvme1n1", "--disk-model", "gp3", db="postgresql")
    assert "disk_model" not in doc


def test_unknown_model_is_a_usage_error():
    p = lcloudctl("--sysroot", os.path.join(FIX, "stacks"), "advise", "/dev/nvme0n1", "--db", "mariadb",
                  "--disk-model", "gp2")
    assert p.returncode == 2 and "gp3, hyperdisk-balanced, ops-bound, bw-bound" in p.stderr, (p.returncode, p.stderr)


if __name__ == "__main__":
    main([test_ebs_volume_is_recognised_as_gp3, test_named_model_overrides_and_bandwidth_binds,
          test_other_page_sizes_get_the_limit_but_no_measured_figure, test_kept_doublewrite_names_its_cost,
          test_no_model_without_a_cloud_disk_or_for_postgresql, test_unknown_model_is_a_usage_error])
