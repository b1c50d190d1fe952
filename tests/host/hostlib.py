# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared pieces of the host tests: running lcloudctl, the tests' own statx
reading, loop devices with file systems (always cleaned up), and a small
runner that prints one line per test and 'N passed, N failed'."""
import contextlib
import hashlib
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

LCLOUDCTL = os.environ.get("LCLOUDCTL", "lcloudctl")
STATX_READER = os.environ.get("STATX_READER", "statx_reader")
SKIP = 77
STATX_ATTR_WRITE_ATOMIC = 0x400000
STATX_WRITE_ATOMIC = 0x10000


def run(args, user=None, check=False):
    """Run a command, as USER when given (setpriv drops root entirely)."""
    if user:
        pw = pwd.getpwnam(user)
        args = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid, "--clear-groups", "--"] + list(args)
    p = subprocess.run(args, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def lcloudctl(*args, user=None):
    return run([LCLOUDCTL] + list(args), user=user)


def probe_json(path, user=None, extra=()):
    p = lcloudctl("probe", "--format", "json", *extra, path, user=user)
    assert p.returncode == 0, "probe %s exited %d: %s" % (path, p.returncode, p.stderr)
    doc = json.loads(p.stdout)
    assert len(doc["probes"]) == 1
    return doc["probes"][0]


def layer(probe, kind, name=None):
    for l in probe["layers"]:
        if l["layer"] == kind and (name is None or l["name"] == name):
            return l
    raise AssertionError("no %s layer %s in %s" % (kind, name or "", [l["name"] for l in probe["layers"]]))


def notes(probe, code):
    return [n for n in probe["notes"] if n["code"] == code]


def own_statx(path):
    """statx through the tests' own reader, as a dict of ints."""
    p = run([STATX_READER, path], check=True)
    return {k: int(v) for k, v in (line.split() for line in p.stdout.splitlines())}


def sysfs_block_dir(name):
    return os.path.realpath("/sys/class/block/" + name)


def read_sysfs(path):
    with open(path) as f:
        return f.read().strip()


def need_root():
    if os.geteuid() != 0:
        print("SKIP: loop devices and mounts need root; run the host tests as root")
        sys.exit(SKIP)


def need_tool(name, package):
    if shutil.which(name) is None:
        raise AssertionError("%s missing: install Debian package %s (scripts/install-deps does)" % (name, package))


@contextlib.contextmanager
def scratch_dir():
    d = tempfile.mkdtemp(prefix="lcloud-host-")
    os.chmod(d, 0o755)  # the unprivileged tests walk through it
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _wait_for(path, seconds=5.0):
    end = time.monotonic() + seconds
    while not os.path.exists(path):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


@contextlib.contextmanager
def loop_device(image, size, partitions=None, direct_io=True):
    """A loop device over a new IMAGE; with PARTITIONS (sfdisk script) it is partitioned."""
    with open(image, "wb") as f:
        f.truncate(size)
    if partitions:
        need_tool("sfdisk", "fdisk")
        subprocess.run(["sfdisk", "-q", image], input=partitions, text=True, check=True, capture_output=True)
    args = ["losetup", "-f", "--show"]
    if direct_io:
        args.append("--direct-io=on")
    if partitions:
        args.append("-P")
    dev = run(args + [image], check=True).stdout.strip()
    try:
        if partitions and not _wait_for(dev + "p1", 2.0):
            # The kernel's own scan can miss; partx asks it again.
            run(["partx", "-a", dev])
            assert _wait_for(dev + "p1"), "partitions of %s did not appear" % dev
        yield dev
    finally:
        run(["losetup", "-d", dev])


@contextlib.contextmanager
def mounted_fs(fstype, size=1 << 30, mkfs_args=()):
    """A fresh FSTYPE file system on a loop device, mounted; yields (device, mount point)."""
    need_root()
    need_tool("mkfs." + fstype, "xfsprogs" if fstype == "xfs" else "e2fsprogs")
    with scratch_dir() as d:
        mnt = os.path.join(d, "mnt")
        os.mkdir(mnt)
        with loop_device(os.path.join(d, "img"), size) as dev:
            run(["mkfs." + fstype, "-q"] + (["-f"] if fstype == "xfs" else ["-F"]) + list(mkfs_args) + [dev],
                check=True)
            run(["mount", dev, mnt], check=True)
            try:
                os.chmod(mnt, 0o755)
                yield dev, mnt
            finally:
                # a busy mount is detached lazily: the scratch folder's removal must never reach into it
                if run(["umount", mnt]).returncode != 0:
                    run(["umount", "-l", mnt])


def in_a_mount_namespace_of_its_own(script):
    """Runs SCRIPT again in a private mount namespace (once; as root only). A namespace another program
    makes meanwhile (unshare with --make-rprivate /) would otherwise keep a copy of the test's mounts, and
    with them the storage in use, after the test unmounted them here: the write guard, which sees every
    namespace, would then rightly refuse what the test expects written."""
    if os.environ.get("LCLOUD_TEST_OWN_MOUNT_NS") == "1" or os.geteuid() != 0 or not shutil.which("unshare"):
        return
    env = dict(os.environ, LCLOUD_TEST_OWN_MOUNT_NS="1")
    os.execvpe("unshare", ["unshare", "-m", "--propagation", "private", sys.executable, os.path.abspath(script)],
               env)


def main(tests):
    """Run the test functions; print one line each and the closing count line."""
    passed = failed = 0
    for t in tests:
        try:
            t()
        except Exception:  # a failing test must not stop the others
            failed += 1
            print("FAIL %s" % t.__name__)
            traceback.print_exc(file=sys.stdout)
        else:
            passed += 1
            print("ok   %s" % t.__name__)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


SYMLINK_FLIPPER = r"""
import os, sys, time
link, a, b, stop, seconds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
tmp = link + ".new"
end = time.monotonic() + seconds
n = 0
while not os.path.exists(stop) and time.monotonic() < end:
    for target in (a, b):
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        os.symlink(target, tmp)
        os.rename(tmp, link)  # atomic: LINK always exists, pointing at one or the other
        n += 1
print(n)
"""


def symlink_flipper(link, a, b, stop, seconds):
    """A process that points LINK at A, then B, again and again until STOP exists or SECONDS pass;
    its standard output says how many flips it made."""
    return subprocess.Popen([sys.executable, "-c", SYMLINK_FLIPPER, link, a, b, stop, str(seconds)],
                            stdout=subprocess.PIPE, text=True)


def digest(path):
    """SHA-256 of a file or device, read in 1 MiB pieces: a test compares it before and after."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()

