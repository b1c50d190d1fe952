#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Tests of the Python binding against independent readings of the same facts:
lcloudctl's JSON (the C printers over the same library, in another process)
and the kernel through os.statvfs.

Environment: LCLOUD_LIBRARY (path to liblcloud.so.0) and LCLOUDCTL (path to
lcloudctl); meson test sets both, and PYTHONPATH to the package. Run by hand:
  LCLOUD_LIBRARY=build/lib/liblcloud.so.0 LCLOUDCTL=build/cli/lcloudctl \
      python3 bindings/python/tests/test_binding.py
"""

import errno
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

# Run as a script from the source tree: the package is next to this folder.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import lcloud  # noqa: E402

LCLOUDCTL = os.environ.get("LCLOUDCTL") or shutil.which("lcloudctl")
THIS_FILE = os.path.abspath(__file__)


def skip(reason):
    """Skip a test, saying why on stderr too (the reason is the point)."""
    print("skipped: " + reason, file=sys.stderr)
    raise unittest.SkipTest(reason)


def lcloudctl(*args, ok=True):
    """Run lcloudctl with ARGS; returns (exit status, parsed JSON stdout)."""
    if not LCLOUDCTL:
        raise AssertionError("lcloudctl not found: set LCLOUDCTL to its path")
    proc = subprocess.run([LCLOUDCTL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    if ok and proc.returncode != 0:
        raise AssertionError("lcloudctl %s exited %d: %s" % (" ".join(args), proc.returncode,
                                                             proc.stderr.strip()))
    return proc.returncode, json.loads(proc.stdout)


def cli_probe(path, *options):
    return lcloudctl("probe", "--format", "json", *options, path)[1]["probes"][0]


def root_blockdev():
    """Kernel name of the block device '/' is on, or None (with why)."""
    st = os.stat("/")
    major, minor = os.major(st.st_dev), os.minor(st.st_dev)
    if major == 0:
        return None, "'/' is on a device-less file system (%d:%d: overlay, tmpfs, nfs...)" % (major, minor)
    link = "/sys/dev/block/%d:%d" % (major, minor)
    if not os.path.exists(link):
        return None, "%s does not exist (no sysfs, or not a block device)" % link
    return os.path.basename(os.path.realpath(link)), None


class CompareWithCli(unittest.TestCase):
    """lcloud.probe(path).to_dict() is exactly what lcloudctl probe --format json prints."""

    maxDiff = None

    def assert_same_as_cli(self, path, *options, **kwargs):
        mine = lcloud.probe(path, **kwargs).to_dict()
        theirs = cli_probe(path, *options)
        self.assertEqual(mine, theirs, "probe(%r) differs from lcloudctl probe --format json" % path)
        return mine

    def test_cwd(self):
        d = self.assert_same_as_cli(".")
        self.assertEqual(d["resolved_path"], os.getcwd())
        self.assertEqual(d["target"], "directory")

    def test_root(self):
        d = self.assert_same_as_cli("/")
        self.assertEqual(d["layers"][0]["layer"], "filesystem")

    def test_this_file(self):
        d = self.assert_same_as_cli(THIS_FILE)
        self.assertEqual(d["target"], "regular")
        self.assertEqual(d["resolved_path"], os.path.realpath(THIS_FILE))

    def test_no_signatures(self):
        self.assert_same_as_cli(".", "--no-signatures", signatures=False)

    def test_root_block_device(self):
        name, why = root_blockdev()
        if name is None:
            skip(why)
        node = "/dev/" + name
        if not os.path.exists(node):
            skip("%s (the device of '/') has no node in /dev here" % node)
        d = self.assert_same_as_cli(node)
        self.assertIn(d["target"], ("disk", "partition"))
        self.assertEqual(d["layers"][0]["name"], name)

    def test_probe_blockdev_matches_list(self):
        """probe_blockdev(name) has the facts lcloudctl list -J shows for NAME."""
        name, why = root_blockdev()
        if name is None:
            skip(why)
        columns = {"size": "size", "ro": "ro", "rota": "rotational", "log-sec": "logical_block_size",
                   "phy-sec": "physical_block_size", "min-io": "minimum_io_size", "opt-io": "optimal_io_size",
                   "awu-min": "atomic_write_unit_min_bytes", "awu-max": "atomic_write_unit_max_bytes",
                   "aw-max": "atomic_write_max_bytes", "aw-bound": "atomic_write_boundary_bytes",
                   "streams": "max_write_streams", "stream-gran": "write_stream_granularity"}
        entry = [d for d in lcloudctl("list", "-J", "-o", "NAME,TYPE," + ",".join(columns).upper())[1]["blockdevices"]
                 if d["name"] == name]
        self.assertEqual(len(entry), 1, "%s not (or twice) in lcloudctl list" % name)
        entry = entry[0]
        p = lcloud.probe_blockdev(name, signatures=False)
        self.assertEqual(p.path, "/dev/" + name)
        self.assertEqual(p.layers[0].name, name)
        self.assertEqual(p.layers[0].kind, entry["type"])
        for column, key in columns.items():
            # lcloudctl list takes each fact from the device or, for a partition, its disk.
            have = [l.facts[key] for l in p.layers[:2] if key in l.facts]
            self.assertEqual(have[0] if have else None, entry[column], "fact %s of %s" % (key, name))


class Errors(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="lcloud-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_nonexistent(self):
        path = os.path.join(self.tmp, "does-not-exist")
        with self.assertRaises(FileNotFoundError) as cm:
            lcloud.probe(path)
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        self.assertEqual(cm.exception.filename, path)

    def test_dev_null_is_enodev(self):
        if not os.path.exists("/dev/null"):
            skip("/dev/null does not exist here")
        with self.assertRaises(OSError) as cm:
            lcloud.probe("/dev/null")
        self.assertEqual(cm.exception.errno, errno.ENODEV)
        self.assertEqual(cm.exception.filename, "/dev/null")
        # The CLI, another reader, reports the same errno.
        rc, out = lcloudctl("probe", "--format", "json", "/dev/null", ok=False)
        self.assertNotEqual(rc, 0)
        self.assertEqual(out["probes"][0]["error"]["errno"], errno.ENODEV)

    def test_no_follow(self):
        link = os.path.join(self.tmp, "link")
        os.symlink(THIS_FILE, link)
        with self.assertRaises(OSError) as cm:
            lcloud.probe(link, follow=False)
        self.assertEqual(cm.exception.errno, errno.ELOOP)
        followed = lcloud.probe(link)
        self.assertEqual(followed.path, link)
        self.assertEqual(followed.resolved_path, os.path.realpath(THIS_FILE))

    def test_embedded_nul(self):
        with self.assertRaises(ValueError):
            lcloud.probe("./\0x")

    def test_sysroot_errors(self):
        missing = os.path.join(self.tmp, "missing")
        with self.assertRaises(FileNotFoundError) as cm:
            lcloud.probe("/dev/sda", sysroot=missing)
        self.assertEqual(cm.exception.filename, missing)
        with self.assertRaises(FileNotFoundError):
            lcloud.blockdevs(sysroot=missing)
        # An existing but empty sysroot has no /sys/class/block.
        with self.assertRaises(FileNotFoundError):
            lcloud.blockdevs(sysroot=self.tmp)
        with self.assertRaises(FileNotFoundError):
            lcloud.probe_blockdev("sda", sysroot=self.tmp)


class Facts(unittest.TestCase):

    def test_block_size_is_statvfs(self):
        p = lcloud.probe(".")
        self.assertEqual(p.get("filesystem", "block_size"), os.statvfs(".").f_bsize)

    def test_get_follows_fact_states(self):
        """get() agrees with each fact's value and state, for every layer kind present."""
        p = lcloud.probe(".")
        seen = set()
        for layer in p.layers:
            if layer.kind in seen:
                continue  # get() reads the first layer of a kind
            seen.add(layer.kind)
            for name, value in layer.facts.items():
                state = layer.unavailable.get(name, {}).get("state", "present")
                if state == "present" and isinstance(value, str):
                    with self.assertRaises(OSError) as cm:
                        p.get(layer.kind, name)
                    self.assertEqual(cm.exception.errno, errno.EINVAL)
                elif state == "present":
                    self.assertEqual(p.get(layer.kind, name), int(value))
                elif state == "not-provided":
                    self.assertIsNone(p.get(layer.kind, name))
                elif state == "needs-root":
                    self.assertRaises(PermissionError, p.get, layer.kind, name)
                else:
                    with self.assertRaises(OSError) as cm:
                        p.get(layer.kind, name)
                    self.assertEqual(cm.exception.errno, errno.EIO)
        self.assertIsNone(p.get("filesystem", "no_such_fact"))
        if p.layer("md") is None:  # no such layer: None, like a missing fact
            self.assertIsNone(p.get("md", "size"))
        self.assertRaises(ValueError, p.get, "no-such-kind", "block_size")

    def test_layers_and_notes_shape(self):
        p = lcloud.probe(".")
        self.assertGreaterEqual(len(p.layers), 1)
        self.assertIsNone(p.layers[0].parent)
        for i, layer in enumerate(p.layers[1:], 1):
            self.assertIsNotNone(layer.parent)
            self.assertLess(layer.parent, i)
            self.assertEqual(set(layer.facts), set(layer.sources))
            self.assertLessEqual(set(layer.unavailable), set(layer.facts))
        for note in p.notes:
            self.assertIn(note.severity, ("info", "warning", "needs-root", "error"))
            self.assertTrue(note.layer is None or 0 <= note.layer < len(p.layers))

    def test_probe_fd_same_as_path(self):
        fd = os.open(THIS_FILE, os.O_PATH)
        try:
            by_fd = lcloud.probe_fd(fd).to_dict()
        finally:
            os.close(fd)
        self.assertEqual(by_fd, lcloud.probe(os.path.realpath(THIS_FILE)).to_dict())


def make_sysroot(root):
    """A captured-style sysfs tree written here, so its facts are known:
    disk fake0 (250:0) with partition fake0p1 (250:1) starting at sector 2048."""
    disk = os.path.join(root, "sys/devices/virtual/block/fake0")
    files = {
        "dev": "250:0", "size": "2097152", "ro": "0",
        "queue/logical_block_size": "512", "queue/physical_block_size": "16384",
        "queue/minimum_io_size": "16384", "queue/optimal_io_size": "0",
        "queue/atomic_write_unit_min_bytes": "4096", "queue/atomic_write_unit_max_bytes": "16384",
        "queue/atomic_write_max_bytes": "16384", "queue/atomic_write_boundary_bytes": "0",
        "fake0p1/dev": "250:1", "fake0p1/partition": "1", "fake0p1/start": "2048",
        "fake0p1/size": "1024", "fake0p1/ro": "0",
        "queue/max_sectors_kb": "not-a-number",  # unreadable: get() raises EIO
        "queue/dma_alignment": "511",  # mode 000: needs root unless we are root
    }
    for rel, value in files.items():
        os.makedirs(os.path.dirname(os.path.join(disk, rel)), exist_ok=True)
        with open(os.path.join(disk, rel), "w") as f:
            f.write(value + "\n")
    for folder in ("sys/class/block", "sys/dev/block"):
        os.makedirs(os.path.join(root, folder))
    for name, devno, target in (("fake0", "250:0", "fake0"), ("fake0p1", "250:1", "fake0/fake0p1")):
        os.symlink("../../devices/virtual/block/" + target, os.path.join(root, "sys/class/block", name))
        os.symlink("../../devices/virtual/block/" + target, os.path.join(root, "sys/dev/block", devno))
    os.chmod(os.path.join(disk, "queue/dma_alignment"), 0)


class Sysroot(unittest.TestCase):
    """A sysfs tree under a sysroot: facts known by construction, and the CLI agrees."""

    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="lcloud-sysroot-")
        make_sysroot(cls.root)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root)

    def test_blockdevs(self):
        names = lcloud.blockdevs(sysroot=self.root)
        self.assertEqual(names, ["fake0", "fake0p1"])
        listed = lcloudctl("--sysroot", self.root, "list", "-J")[1]["blockdevices"]
        self.assertEqual(names, [d["name"] for d in listed])

    def test_probe_same_as_cli(self):
        for name in ("fake0", "fake0p1"):
            theirs = lcloudctl("--sysroot", self.root, "probe", "--format", "json", "/dev/" + name)[1]["probes"][0]
            self.assertEqual(lcloud.probe_blockdev(name, sysroot=self.root).to_dict(), theirs)
            self.assertEqual(lcloud.probe("/dev/" + name, sysroot=self.root).to_dict(), theirs)

    def test_known_facts(self):
        p = lcloud.probe_blockdev("fake0p1", sysroot=self.root)
        self.assertEqual(p.target, "partition")
        self.assertIsNone(p.resolved_path)
        self.assertEqual([(l.kind, l.name, l.parent) for l in p.layers],
                         [("partition", "fake0p1", None), ("disk", "fake0", 0)])
        self.assertEqual(p.get("partition", "start"), 2048)
        self.assertEqual(p.get("disk", "physical_block_size"), 16384)
        self.assertEqual(p.get("disk", "atomic_write_unit_max_bytes"), 16384)
        self.assertEqual(p.get("disk", "size"), 2097152 * 512)
        self.assertIs(p.layer("disk").facts["ro"], False)
        self.assertEqual(p.layer("disk").units["physical_block_size"], "bytes")
        # Not in the tree: the kernel "does not provide" it.
        self.assertIsNone(p.get("disk", "max_write_streams"))
        self.assertEqual(p.layer("disk").unavailable["max_write_streams"]["state"], "not-provided")
        self.assertIsNone(p.get("filesystem", "block_size"))

    def test_unreadable_and_needs_root(self):
        p = lcloud.probe_blockdev("fake0", sysroot=self.root)
        disk = p.layer("disk")
        self.assertEqual(disk.unavailable["max_sectors_kb"]["state"], "unreadable")
        with self.assertRaises(OSError) as cm:
            p.get("disk", "max_sectors_kb")
        self.assertEqual(cm.exception.errno, errno.EIO)
        if os.geteuid() == 0:  # root reads a mode-000 file: present
            self.assertEqual(p.get("disk", "dma_alignment"), 511)
        else:
            self.assertEqual(disk.unavailable["dma_alignment"]["state"], "needs-root")
            self.assertIsNone(disk.facts["dma_alignment"])
            with self.assertRaises(PermissionError):
                p.get("disk", "dma_alignment")
        with self.assertRaises(OSError) as cm:  # a string fact is not a number
            p.get("disk", "dev")
        self.assertEqual(cm.exception.errno, errno.EINVAL)

    def test_only_devices_under_sysroot(self):
        with self.assertRaises(OSError) as cm:
            lcloud.probe(THIS_FILE, sysroot=self.root)
        self.assertEqual(cm.exception.errno, errno.EOPNOTSUPP)
        with self.assertRaises(FileNotFoundError):
            lcloud.probe_blockdev("fake1", sysroot=self.root)


class PagePlan(unittest.TestCase):
    """lcloud_plan_page_writes() against lcloudctl check for the same file and size."""

    def test_plan_agrees_with_check(self):
        for size in (4096, 16384):
            with open(__file__, "rb") as f:
                plan = lcloud.plan_page_writes(f.fileno(), size)
            cli = subprocess.run([LCLOUDCTL, "check", "--size", str(size), "--format", "json", __file__],
                                 capture_output=True, text=True)
            self.assertIn(cli.returncode, (0, 6), cli.stderr)
            verdict = json.loads(cli.stdout)
            self.assertEqual(plan["untorn"], verdict["untorn"])
            self.assertEqual(plan["untorn"], cli.returncode == 0)
            self.assertTrue(plan["reason"])
            if plan["untorn"]:
                self.assertEqual(plan["path"], verdict["io_path"])

    def test_bad_page_size(self):
        with open(__file__, "rb") as f:
            with self.assertRaises(OSError) as cm:
                lcloud.plan_page_writes(f.fileno(), 3000)
        self.assertEqual(cm.exception.errno, errno.EINVAL)


SCSI_TREE = os.path.join(os.path.dirname(THIS_FILE), "..", "..", "..", "tests", "unit", "fixtures", "scsi")


class Check(unittest.TestCase):
    """check() against 'lcloudctl check' on the crafted Google PD tree: untorn, no and unknown."""

    CASES = (("/dev/sda", 16384, "untorn", 0), ("/dev/sda1", 16384, "no", 6), ("/dev/sda1", 4096, "untorn", 0),
             ("/dev/dm-0", 4096, "unknown", 8), ("/dev/sdf", 16384, "no", 6))

    def test_check_same_as_cli(self):
        for dev, size, answer, code in self.CASES:
            with self.subTest(dev=dev, size=size):
                got = lcloud.check(dev, size, "plain_direct", sysroot=SCSI_TREE)
                rc, doc = lcloudctl("--sysroot", SCSI_TREE, "check", dev, "--size", str(size),
                                    "--path", "plain_direct", "--format", "json", ok=False)
                self.assertEqual(rc, code)
                self.assertEqual(got.answer, answer)
                self.assertEqual(doc["answer"], answer)
                self.assertEqual(doc["untorn"], got.untorn)
                self.assertEqual(doc["why"], got.why)
                self.assertEqual(got.io_path, "plain_direct")

    def test_unknown_reason_in_verdict(self):
        p = lcloud.probe("/dev/dm-0", sysroot=SCSI_TREE)
        v = p.verdict["plain_direct"]
        self.assertEqual(v["above_max"], "unknown")
        self.assertIn("run as root", v["unknown_reason"])
        cli = lcloudctl("--sysroot", SCSI_TREE, "probe", "--format", "json", "/dev/dm-0")[1]["probes"][0]
        self.assertEqual(cli["verdict"]["plain_direct"], v)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError):
            lcloud.check("/dev/sda", 12288, sysroot=SCSI_TREE)
        with self.assertRaises(ValueError):
            lcloud.check("/dev/sda", 4096, "atomic", sysroot=SCSI_TREE)

    def test_old_programs_never_see_unknown(self):
        """Programs built against 0.1 call lcloud_probe_check@LCLOUD_0.1, which must answer 0, never 2."""
        import ctypes
        libdl = ctypes.CDLL(None)
        libdl.dlvsym.restype = ctypes.c_void_p
        libdl.dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
        handle = ctypes.CDLL(lcloud.library_name())._handle
        old = libdl.dlvsym(handle, b"lcloud_probe_check", b"LCLOUD_0.1")
        new = libdl.dlvsym(handle, b"lcloud_probe_check", b"LCLOUD_0.2")
        self.assertTrue(old and new and old != new)
        proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64, ctypes.c_void_p,
                                 ctypes.c_char_p, ctypes.c_size_t)
        lib = lcloud._ffi.lib()
        ctx, p = ctypes.c_void_p(), ctypes.c_void_p()
        self.assertEqual(lib.lcloud_ctx_new(ctypes.byref(ctx)), 0)
        try:
            self.assertEqual(lib.lcloud_ctx_set_sysroot(ctx, SCSI_TREE.encode()), 0)
            self.assertEqual(lib.lcloud_probe_path(ctx, b"/dev/dm-0", 0, ctypes.byref(p)), 0)
            self.assertEqual(proto(new)(p, 3, 4096, None, None, 0), 2)
            self.assertEqual(proto(old)(p, 3, 4096, None, None, 0), 0)
            lib.lcloud_probe_free(p)
        finally:
            lib.lcloud_ctx_free(ctx)


class Enumeration(unittest.TestCase):

    def test_blockdevs_same_as_cli_list(self):
        names = lcloud.blockdevs()
        listed = [d["name"] for d in lcloudctl("list", "--all", "-J")[1]["blockdevices"]]
        # the same devices; list sorts them as lsblk does (by device number), blockdevs keeps sysfs's order
        self.assertEqual(sorted(names), sorted(listed))
        if os.path.isdir("/sys/block"):
            # Every disk the kernel lists is among them.
            self.assertLessEqual(set(os.listdir("/sys/block")), set(names))

    def test_cli_list_leaves_out_unbound_loops(self):
        # lsblk's rule, read here from sysfs: a loop device with no loop/ folder has no file
        listed = [d["name"] for d in lcloudctl("list", "-J")[1]["blockdevices"]]
        names = lcloud.blockdevs()
        unbound = [n for n in names if re.fullmatch(r"loop[0-9]+", n)
                   and not os.path.exists("/sys/class/block/%s/loop" % n)]
        self.assertEqual(sorted(listed), sorted(n for n in names if n not in unbound))

    def test_version_same_as_cli(self):
        proc = subprocess.run([LCLOUDCTL, "--version"], stdout=subprocess.PIPE,
                              universal_newlines=True, check=True)
        # "lcloudctl X (liblcloud Y)"
        self.assertIn("(liblcloud %s)" % lcloud.version(), proc.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
