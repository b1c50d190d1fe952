#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The verdict where fleets look for it: udev properties (lcloudctl udev and
the installed rule, run by udev's own 'udevadm test') and the node_exporter
textfile (lcloudctl export --prometheus, parsed by the Prometheus project's
Python parser from Debian). Each value is compared with 'probe --format json' of
the same device: on crafted NVMe and SCSI trees (a promise to report) and on
the host's own disks and an XFS loop device."""
import os
import stat
import subprocess
import tempfile

from hostlib import lcloudctl, main, mounted_fs, need_root, run

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "unit", "fixtures")
KEYS = {"rwf_atomic": "RWF_ATOMIC", "passthrough": "PASSTHROUGH", "plain_direct": "PLAIN_DIRECT",
        "buffered": "BUFFERED"}


def probe(dev, sysroot=None):
    import json
    args = (["--sysroot", sysroot] if sysroot else []) + ["probe", "--format", "json", dev]
    p = lcloudctl(*args)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["probes"][0]


def udev_props(name, sysroot=None):
    args = (["--sysroot", sysroot] if sysroot else []) + ["udev", name]
    p = lcloudctl(*args)
    assert p.returncode == 0, p.stderr
    props = dict(line.split("=", 1) for line in p.stdout.splitlines())
    for k, v in props.items():
        assert k.startswith("ID_LCLOUD_") and " " not in v, (k, v)
    return props


def same_as_probe(props, doc):
    for path, key in KEYS.items():
        v = doc["verdict"][path]
        assert int(props["ID_LCLOUD_%s_MAX" % key]) == v["max_untorn_bytes"], (key, props, v)
        assert props["ID_LCLOUD_%s_ABOVE" % key] == v["above_max"], (key, props)
    assert int(props["ID_LCLOUD_RWF_ATOMIC_HW_MAX"]) == doc["verdict"]["rwf_atomic"]["hardware_max_bytes"]


def test_udev_properties_on_crafted_devices():
    cases = (("nvme-crafted", "nvme0n1"), ("nvme-crafted", "nvme1n1"), ("scsi", "sda"), ("scsi", "dm-0"))
    for tree, name in cases:
        root = os.path.join(FIXTURES, tree)
        props = udev_props(name, root)
        doc = probe("/dev/" + name, root)
        same_as_probe(props, doc)
    # the Azure-shaped namespace: 16 KiB power-fail atomic, read from Identify
    assert udev_props("nvme0n1", os.path.join(FIXTURES, "nvme-crafted"))["ID_LCLOUD_POWER_FAIL_BYTES"] == "16384"
    # the EBS-shaped one: AWS's promise and its source, one word for udev
    ebs = udev_props("nvme1n1", os.path.join(FIXTURES, "nvme-crafted"))
    assert ebs["ID_LCLOUD_CLOUD"] == "aws" and ebs["ID_LCLOUD_PROMISE_SOURCE"].startswith("Amazon_EC2"), ebs
    # a dm table that cannot be read: unknown, as udev says it
    assert udev_props("dm-0", os.path.join(FIXTURES, "scsi"))["ID_LCLOUD_PLAIN_DIRECT_ABOVE"] == "unknown"
    p = lcloudctl("udev", "no-such-disk")
    assert p.returncode == 3, (p.returncode, p.stderr)


def test_udev_rule_through_udevadm():
    """The installed rule, with this build's lcloudctl, run by udevadm test on an XFS loop device."""
    need_root()
    rule_in = os.path.join(HERE, "..", "..", "cli", "60-lcloud.rules.in")
    with open(rule_in) as f:
        rule = f.read().replace("@LCLOUDCTL@", os.path.realpath(os.environ["LCLOUDCTL"]))
    os.makedirs("/run/udev/rules.d", exist_ok=True)
    installed = "/run/udev/rules.d/60-lcloud-test-%d.rules" % os.getpid()
    with mounted_fs("xfs") as (dev, mnt):
        with open(installed, "w") as f:
            f.write(rule)
        try:
            name = os.path.basename(dev)
            p = run(["udevadm", "test", "--action=add", "/sys/class/block/" + name])
            assert p.returncode == 0, p.stderr[-2000:]
            seen = dict(line.split("=", 1) for line in p.stdout.splitlines() if line.startswith("ID_LCLOUD_"))
            assert seen, p.stdout[-2000:] + p.stderr[-2000:]
            same_as_probe(seen, probe(dev))
        finally:
            os.unlink(installed)


def metrics(text):
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        # Debian's python3-prometheus-client, when this python3 is not Debian's own
        import sys
        sys.path.append("/usr/lib/python3/dist-packages")
        from prometheus_client.parser import text_string_to_metric_families
    out = {}
    for family in text_string_to_metric_families(text):
        assert family.type == "gauge", family
        for s in family.samples:
            out[(s.name, s.labels.get("target"), s.labels.get("io_path"))] = (s.value, s.labels)
    return out


def test_prometheus_textfile():
    root = os.path.join(FIXTURES, "scsi")
    p = lcloudctl("--sysroot", root, "export", "--prometheus", "/dev/sda", "/dev/sda1", "/dev/dm-0", "/dev/nope")
    assert p.returncode == 1 and "/dev/nope" in p.stderr, (p.returncode, p.stderr)
    m = metrics(p.stdout)
    for dev in ("/dev/sda", "/dev/sda1", "/dev/dm-0"):
        doc = probe(dev, root)
        for path in KEYS:
            value, labels = m[("lcloud_untorn_max_bytes", dev, path)]
            assert value == doc["verdict"][path]["max_untorn_bytes"], (dev, path, value)
            assert labels["evidence"] == doc["verdict"][path]["reasons"][0]["evidence"]
            unknown, _ = m[("lcloud_untorn_unknown", dev, path)]
            assert unknown == (1 if doc["verdict"][path]["above_max"] == "unknown" else 0)
        assert m[("lcloud_probe_success", dev, None)][0] == 1
    assert m[("lcloud_probe_success", "/dev/nope", None)][0] == 0
    assert m[("lcloud_info", "/dev/sda", None)][1]["provider"] == "gcp"
    # every block device of this host, into a file the collector can read, written whole
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "lcloud.prom")
        p = lcloudctl("export", "--prometheus", "--file", out)
        assert p.returncode == 0, p.stderr
        assert stat.S_IMODE(os.stat(out).st_mode) == 0o644
        assert os.listdir(d) == ["lcloud.prom"], os.listdir(d)
        with open(out) as f:
            host = metrics(f.read())
    disks = {k[1] for k in host if k[0] == "lcloud_probe_success"}
    for name in os.listdir("/sys/block"):
        with open("/sys/block/%s/size" % name) as f:
            empty = f.read().strip() == "0"
        assert (("/dev/" + name) in disks) != (empty and name.startswith("loop")), name
    p = lcloudctl("export")
    assert p.returncode == 2 and "--prometheus" in p.stderr


def test_drift_after_a_kernel_change():
    """A saved fingerprint, then the same device as a kernel that dropped its atomic limits shows it
    (a copy of the crafted tree with queue/atomic_write_unit_max_bytes lowered): diff must name the
    fact and the weaker verdict, and exit 13; unchanged, 0; a cosmetic change, 12."""
    import json
    import shutil
    with tempfile.TemporaryDirectory() as d:
        tree = os.path.join(d, "tree")
        shutil.copytree(os.path.join(FIXTURES, "nvme-crafted"), tree, symlinks=True)
        saved = os.path.join(d, "nvme0n1.fp")
        p = lcloudctl("--sysroot", tree, "probe", "--save", saved, "/dev/nvme0n1")
        assert p.returncode == 0, p.stderr
        with open(saved) as f:
            fp = json.load(f)
        assert fp["kind"] == "lcloud-fingerprint" and fp["schema"] == 1
        p = lcloudctl("--sysroot", tree, "diff", saved)
        assert p.returncode == 0 and "nothing changed" in p.stdout, (p.returncode, p.stdout)
        queue = os.path.join(tree, "sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/queue")
        with open(os.path.join(queue, "write_cache"), "w") as f:
            f.write("write through\n")
        p = lcloudctl("--sysroot", tree, "diff", saved)
        assert p.returncode == 12 and "write_cache" in p.stdout, (p.returncode, p.stdout)
        with open(os.path.join(queue, "atomic_write_unit_max_bytes"), "w") as f:
            f.write("4096\n")
        p = lcloudctl("--sysroot", tree, "diff", saved)
        assert p.returncode == 13, (p.returncode, p.stdout, p.stderr)
        assert "atomic_write_unit_max_bytes 16384 -> 4096" in p.stdout, p.stdout
        p = lcloudctl("--sysroot", tree, "diff", "--format", "json", saved)
        report = json.loads(p.stdout)
        weaker = [c for c in report["verdict_changes"] if c["weaker"]]
        assert report["weaker"] and any(c["io_path"] == "rwf_atomic" and c["field"] == "max_untorn_bytes"
                                        and c["old"] == 16384 and c["new"] == 4096 for c in weaker), report
        with open(os.path.join(d, "junk"), "w") as f:
            f.write("{}")
        p = lcloudctl("diff", os.path.join(d, "junk"))
        # a JSON file that is no fingerprint: the wrong kind of file, named with the key it lacks
        assert p.returncode == 5 and '"kind" is missing' in p.stderr, (p.returncode, p.stderr)


if __name__ == "__main__":
    main([test_udev_properties_on_crafted_devices, test_udev_rule_through_udevadm, test_prometheus_textfile,
          test_drift_after_a_kernel_change])
