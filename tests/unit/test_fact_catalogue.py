#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fact catalogue (lib/core/facts.def) against what it describes: every fact
is produced on some captured tree under tests/unit/fixtures (probe --format json of
every device of every tree, present or unavailable), or is in LIVE_ONLY
below with the reason no tree can show it; every fact has a line in
lcloud(7) and an entry in cli/lcloudctl.schema.json of the catalogue's type;
and every fact the schema or a tree shows is in the catalogue. A fact added
without any of these fails here."""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
from hostlib import main  # noqa: E402

LCLOUDCTL = os.environ["LCLOUDCTL"]
TOP = os.path.join(HERE, "..", "..")
FIXTURES = os.path.join(HERE, "fixtures")

# Facts no captured tree can show, each with why. A fact here must still be in the catalogue.
LIVE_ONLY = {
    # the udev database and libblkid are read on the live system only, never under --sysroot
    "udev_id_serial": "udev database",
    "udev_id_wwn": "udev database",
    "udev_id_path": "udev database",
    "udev_id_model": "udev database",
    "signature_type": "libblkid reads the device's own blocks",
    "signature_usage": "libblkid reads the device's own blocks",
    "partition_table": "libblkid reads the device's own blocks",
    # the dm table comes from the DM_TABLE_STATUS ioctl on /dev/mapper/control, not from sysfs
    "dm_target_N": "device-mapper ioctl",
    "dm_stripes_N": "device-mapper ioctl",
    "dm_stripe_chunk_bytes_N": "device-mapper ioctl",
    "dm_crypt_sector_bytes_N": "device-mapper ioctl",
    "dm_crypt_integrity_N": "device-mapper ioctl",
    # read only for a dm device whose table (device-mapper ioctl) has a striped or crypt target,
    # or for a loop device with direct I/O, whose binding LOOP_GET_STATUS64 gives
    "kernel_release": "device-mapper ioctl or a live loop device",
    "dm_crypt_max_write_size": "device-mapper ioctl",
    "loop_backing_dev": "LOOP_GET_STATUS64 on a live loop device",
    "loop_backing_inode": "LOOP_GET_STATUS64 on a live loop device",
    # statx of the target itself: a captured tree holds sysfs, not the files or device nodes
    "stx_atomic_write_unit_min": "statx",
    "stx_atomic_write_unit_max": "statx",
    "stx_atomic_write_segments_max": "statx",
    "stx_atomic_write_unit_max_opt": "statx",
    "stx_attr_write_atomic": "statx",
    "stx_dio_mem_align": "statx",
    "stx_dio_offset_align": "statx",
    "stx_dio_read_offset_align": "statx",
    "stx_blksize": "statx",
    # a live RWF_ATOMIC write on a mounted file system (LCLOUD_PROBE_CONFIRM_ATOMIC)
    "live_rwf_atomic_max_bytes": "live write",
    "live_rwf_atomic_refused": "live write",
    "live_rwf_atomic_unenforced": "live write",
    # the file system layer: a file's target needs the mounted file system (statfs, FIEMAP, ioctls)
    "fstype": "mounted file system",
    "mount_point": "mounted file system",
    "mount_source": "mounted file system",
    "mount_options": "mounted file system",
    "block_size": "statfs",
    "cluster_size": "the ext4 superblock of a mounted file system",
    "extents": "FIEMAP of a file",
    "extent_edge_alignment": "FIEMAP of a file",
    "extent_edge_worst": "FIEMAP of a file",
    "realtime": "FS_IOC_FSGETXATTR of a file",
    "realtime_device": "mount options of a mounted XFS",
    "btrfs_devices": "a mounted btrfs",
    # NVMe data no captured namespace carries: NOIOB 0 everywhere, no multipath head
    # (the verdict tests add these to captured trees by hand), no Streams directive data
    "optimal_io_boundary_bytes": "no captured namespace has NOIOB set",
    "multipath_paths": "no captured namespace is a multipath head",
    "atomic_write_power_fail_bytes_every_path": "no captured namespace is a multipath head",
    "streams_max_limit": "no captured namespace has Streams directive data",
    "streams_available": "no captured namespace has Streams directive data",
    "streams_allocated": "no captured namespace has Streams directive data",
    "stream_write_size_bytes": "no captured namespace has Streams directive data",
    # the Linux cloud extension: no captured controller carries it (lcloud-target fills it;
    # tests/vm/test_current_target.py reads it live, tests/unit/test_nvme.c from crafted bytes)
    "lcloud_ext_version": "no captured controller has the Linux cloud extension",
    "lcloud_ext_untorn_bytes": "no captured controller has the Linux cloud extension",
    "lcloud_ext_untorn_boundary_bytes": "no captured controller has the Linux cloud extension",
    "lcloud_ext_untorn_boundary_offset_bytes": "no captured controller has the Linux cloud extension",
    "lcloud_ext_untorn_with_cache": "no captured controller has the Linux cloud extension",
    "lcloud_ext_read_ahead_hint": "no captured controller has the Linux cloud extension",
    "lcloud_ext_placement": "no captured controller has the Linux cloud extension",
}

TYPES = {"U64": "integer", "BOOL": "boolean", "STRING": "string"}


def catalogue():
    """(name, type) of every fact in lib/core/facts.def, in order."""
    with open(os.path.join(TOP, "lib", "core", "facts.def")) as f:
        facts = re.findall(r'^FACT\(\w+, "([A-Za-z0-9_]+)", (U64|BOOL|STRING), (\w+), "[^"]*", (\w+)\)$', f.read(),
                           re.M)
    assert len(facts) > 150, "the catalogue was not read (%d facts)" % len(facts)
    return [(name, TYPES[t]) for name, t, _unit, _use in facts]


def family_stem(name):
    """dm_target_ for dm_target_N, md_data_offset_ for md_data_offset_MEMBER, else None."""
    m = re.match(r"(.*_)(N|MEMBER)$", name)
    return m.group(1) if m else None


def in_catalogue(name, names):
    return name in names or any(family_stem(n) and name.startswith(family_stem(n)) for n in names)


def facts_of_captured_trees():
    seen = set()
    for tree in sorted(os.listdir(FIXTURES)):
        root = os.path.join(FIXTURES, tree)
        if not os.path.isdir(os.path.join(root, "sys", "class", "block")):
            continue
        devs = subprocess.run([LCLOUDCTL, "--sysroot", root, "list", "-r", "-n", "-o", "NAME", "--all"],
                              capture_output=True, text=True, check=True).stdout.split()
        assert devs, tree
        for dev in devs:
            out = subprocess.run([LCLOUDCTL, "--sysroot", root, "probe", "--format", "json", "/dev/" + dev],
                                 capture_output=True, text=True).stdout
            for probe in json.loads(out)["probes"]:
                for layer in probe["layers"]:
                    seen.update(layer["facts"])
                    seen.update(layer.get("unavailable", {}))
    assert len(seen) > 100, "the captured trees showed few facts (%d)" % len(seen)
    return seen


def test_every_fact_has_a_producer_in_a_captured_tree():
    seen = facts_of_captured_trees()
    names = [n for n, _ in catalogue()]
    problems = []
    for name in names:
        stem = family_stem(name)
        produced = any(s.startswith(stem) for s in seen) if stem else name in seen
        if produced and name in LIVE_ONLY:
            problems.append("%s is in LIVE_ONLY but a captured tree shows it: take it out" % name)
        elif not produced and name not in LIVE_ONLY:
            problems.append("%s: no captured tree produces it (add a tree that does, or say why in LIVE_ONLY)"
                            % name)
    problems += ["%s is in LIVE_ONLY but not in the catalogue" % n for n in LIVE_ONLY if n not in names]
    problems += ["a captured tree shows %s, which the catalogue lacks" % s for s in sorted(seen)
                 if not in_catalogue(s, names)]
    assert not problems, "\n".join(problems)


def test_every_fact_has_a_line_in_lcloud_7():
    with open(os.path.join(TOP, "man", "lcloud.7")) as f:
        macro_lines = [line for line in f.read().splitlines() if re.match(r"\.(B|BR|RB|BI|IB)\s", line)]
    words = set()
    for line in macro_lines:
        words.update(re.findall(r"[a-z][a-z0-9_]*", line.replace("\\-", "-")))
    problems = []
    for name, _ in catalogue():
        stem = family_stem(name)
        if stem and not any(w.startswith(stem) for w in words):
            problems.append("family %s* has no line in man/lcloud.7" % stem)
        elif not stem and name not in words:
            problems.append("%s has no line in man/lcloud.7" % name)
    assert not problems, "\n".join(problems)


def test_every_fact_is_in_the_schema_with_its_type():
    with open(os.path.join(TOP, "cli", "lcloudctl.schema.json")) as f:
        layer = json.load(f)["$defs"]["layer"]["properties"]
    props, patterns = layer["facts"]["properties"], layer["facts"].get("patternProperties", {})
    listed = {key: layer[key]["propertyNames"] for key in ("sources", "unavailable")}

    def key_allowed(rule, key):
        if "enum" in rule:
            return key in rule["enum"]
        if "pattern" in rule:
            return re.search(rule["pattern"], key) is not None
        return any(key_allowed(r, key) for r in rule.get("anyOf", []))

    names = [n for n, _ in catalogue()]
    problems = []
    for name, typ in catalogue():
        stem = family_stem(name)
        key = stem + ("0" if name.endswith("_N") else "sda1") if stem else name
        types = [v["type"] for k, v in patterns.items() if re.search(k, key)] if stem else \
            [props[name]["type"]] if name in props else []
        if not types:
            problems.append("%s is not in the schema's facts" % name)
        elif types[0] != [typ, "null"]:
            problems.append("%s is %s in the catalogue, %s in the schema" % (name, typ, types[0]))
        for where, rule in listed.items():
            if not key_allowed(rule, key):
                problems.append("%s is not a key the schema takes in %s" % (name, where))
    problems += ["the schema declares %s, which the catalogue lacks" % k for k in props if not in_catalogue(k, names)]
    assert not problems, "\n".join(problems)


if __name__ == "__main__":
    main([test_every_fact_has_a_producer_in_a_captured_tree, test_every_fact_has_a_line_in_lcloud_7,
          test_every_fact_is_in_the_schema_with_its_type])
