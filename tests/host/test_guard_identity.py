#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The write guard decides on the storage's identity, not its name, for
storage in use that no loop device or mount table of this namespace shows
plainly: an overlay file and the layer file that holds its bytes (both
ways, also reached by a hard link, a bind mount or /proc/self/fd, and an
active swap area on a loop over the merged name), a file mounted without a
loop device (erofs from its image, fuse2fs given a relative name), the bytes
of a disk outside its partitions (a whole-disk file system under a stale
partition table mounted in another namespace, an ext4 external journal),
a loop chain deeper than the guard follows and a mounted loop whose node
and backing file's name are gone. Each write is refused with and without
--force and the storage compared byte for byte; the same write goes through
once nothing uses the storage. Last, a loop over a file on a FUSE server
that stopped answering must not hang a write to an unrelated file or
lcloud-target's start (bound: BOUND seconds; the guard gives each question
about another file system 2 s). The file runs in a mount namespace of its
own (hostlib.in_a_mount_namespace_of_its_own)."""
import contextlib
import ctypes
import os
import pwd
import select
import signal
import subprocess
import sys
import time

from hostlib import (digest, in_a_mount_namespace_of_its_own, lcloudctl, loop_device, main, need_root, need_tool, run,
                     scratch_dir)
from test_guard_aliases import extra_loop, write, write_when_free

BOUND = 20  # seconds a write to an unrelated file may take while a FUSE server does not answer
TARGET = os.environ.get("LCLOUD_TARGET", "lcloud-target")


def region_digest(path, offset, length):
    with open(path, "rb") as f:
        f.seek(offset)
        return f.read(length)


def assert_refused(path, why, storage, torture=True, region=None):
    """write (with and without --force), and torture run, on PATH are refused for WHY; STORAGE is unchanged
    (or its bytes REGION = (offset, length), where storage in use writes on its own meanwhile)."""
    run(["sync"])
    before = region_digest(storage, *region) if region else digest(storage)
    for extra in ((), ("--force",)):
        p = write(path, *extra)
        assert p.returncode == 7, (path, extra, p.returncode, p.stdout, p.stderr)
        assert why in p.stderr and "--force does not override" in p.stderr, (why, p.stderr)
    if torture:
        with scratch_dir() as d:
            p = lcloudctl("torture", "run", path, "--path", "plain_direct", "--pages", "4", "--writes", "8",
                          "--force", "--record", os.path.join(d, "rec"))
            assert p.returncode == 7 and why in p.stderr, (p.returncode, p.stderr)
    run(["sync"])
    after = region_digest(storage, *region) if region else digest(storage)
    assert after == before, "a refused write changed %s" % storage


@contextlib.contextmanager
def overlay(d):
    """An overlay at D/m over D/l, upper D/u; yields (lower, upper, merged)."""
    lower, upper, work, merged = (os.path.join(d, x) for x in ("l", "u", "w", "m"))
    for x in (lower, upper, work, merged):
        os.makedirs(x, exist_ok=True)
    run(["mount", "-t", "overlay", "overlay", "-o", "lowerdir=%s,upperdir=%s,workdir=%s" % (lower, upper, work),
         merged], check=True)
    try:
        yield lower, upper, merged
    finally:
        run(["umount", merged])


@contextlib.contextmanager
def loop_over(backing, read_only=False):
    args = ["losetup", "-f", "--show"] + (["-r"] if read_only else []) + [backing]
    dev = run(args, check=True).stdout.strip()
    try:
        yield dev
    finally:
        run(["losetup", "-d", dev])


@contextlib.contextmanager
def ext4_mounted(dev, mnt, options="ro"):
    """A fresh ext4 on DEV mounted at MNT (read-only by default, so that the image stays as it is)."""
    run(["mkfs.ext4", "-q", "-F", dev], check=True)
    os.makedirs(mnt, exist_ok=True)
    run(["mount", "-o", options, dev, mnt], check=True)
    try:
        yield mnt
    finally:
        run(["umount", mnt])


def make_image(path, size):
    with open(path, "wb") as f:
        f.truncate(size)


def image_in_layer(d, layer, name):
    """A 32 MiB file NAME made in layer folder D/LAYER before the overlay is mounted."""
    os.makedirs(os.path.join(d, layer), exist_ok=True)
    path = os.path.join(d, layer, name)
    make_image(path, 32 << 20)
    return path


# ---------------------------------------------------------------- overlay layers

def test_overlay_loop_over_merged_written_through_the_upper_layer():
    need_root()
    with scratch_dir() as d, overlay(d) as (lower, upper, merged):
        make_image(os.path.join(merged, "img"), 32 << 20)
        img = os.path.join(upper, "img")
        assert os.path.exists(img)
        os.link(img, os.path.join(upper, "img.link"))
        bind = os.path.join(d, "bind")
        os.mkdir(bind)
        run(["mount", "--bind", upper, bind], check=True)
        try:
            with loop_over(os.path.join(merged, "img")) as dev, ext4_mounted(dev, os.path.join(d, "mnt")) as mnt:
                why = "which is mounted (at %s)" % mnt
                assert_refused(img, why, img)
                assert_refused(os.path.join(upper, "img.link"), why, img, torture=False)
                assert_refused(os.path.join(bind, "img"), why, img, torture=False)
                # a name the caller opened itself, handed down as /proc/self/fd/N
                fd = os.open(img, os.O_RDONLY)
                try:
                    p = subprocess.run([os.environ["LCLOUDCTL"], "write", "--offset", "0", "--length", "4096",
                                        "--pattern", "0x5a", "--force", "/proc/self/fd/%d" % fd], pass_fds=(fd,), capture_output=True,
                                       text=True)
                    assert p.returncode == 7 and why in p.stderr, (p.returncode, p.stderr)
                finally:
                    os.close(fd)
        finally:
            run(["umount", bind])
        # nothing uses it now: the same write goes through (the refusals were the guard's)
        p = write_when_free(img, "--force")
        assert p.returncode == 0, p.stderr


def test_overlay_lower_file_not_copied_up():
    need_root()
    with scratch_dir() as d:
        limg = image_in_layer(d, "l", "limg")
        run(["mkfs.ext4", "-q", "-F", limg], check=True)
        with overlay(d) as (lower, upper, merged):
            # read-only: the loop reads the lower file through the overlay, nothing is copied up
            with loop_over(os.path.join(merged, "limg"), read_only=True) as dev, \
                    ext4_mounted_as_is(dev, os.path.join(d, "mnt")) as mnt:
                assert not os.path.exists(os.path.join(upper, "limg"))
                assert_refused(limg, "which is mounted (at %s)" % mnt, limg)


def test_overlay_loop_over_upper_written_through_the_merged_name():
    need_root()
    with scratch_dir() as d:
        uimg = image_in_layer(d, "u", "u.img")
        with overlay(d) as (lower, upper, merged):
            with loop_over(uimg) as dev, ext4_mounted(dev, os.path.join(d, "mnt")) as mnt:
                assert_refused(os.path.join(merged, "u.img"), "which is mounted (at %s)" % mnt, uimg)
            p = write_when_free(os.path.join(merged, "u.img"), "--force")
            assert p.returncode == 0, p.stderr


def test_overlay_swap_on_a_loop_over_the_merged_name():
    need_root()
    with scratch_dir() as d, overlay(d) as (lower, upper, merged):
        make_image(os.path.join(merged, "sw"), 16 << 20)
        sw = os.path.join(upper, "sw")
        with loop_over(os.path.join(merged, "sw")) as dev:
            run(["mkswap", "-q", dev], check=True)
            run(["swapon", dev], check=True)
            try:
                assert_refused(sw, "active swap area", sw)
            finally:
                run(["swapoff", dev], check=True)
        p = write_when_free(sw, "--force")
        assert p.returncode == 0, p.stderr


# ---------------------------------------------------------------- mounts from a file

libc = ctypes.CDLL(None, use_errno=True)


def mount_syscall(source, target, fstype, flags=1, cwd=None):
    """mount(2) itself (MS_RDONLY): mount(8) would set up a loop device for a file."""
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        if libc.mount(source.encode(), target.encode(), fstype.encode(), flags, None) != 0:
            raise OSError(ctypes.get_errno(), "mount %s %s: %s" % (source, target, os.strerror(ctypes.get_errno())))
    finally:
        os.chdir(old)


def test_erofs_mounted_from_its_image():
    need_root()
    need_tool("mkfs.erofs", "erofs-utils")
    with scratch_dir() as d:
        src = os.path.join(d, "src")
        os.mkdir(src)
        with open(os.path.join(src, "f"), "w") as f:
            f.write("erofs" * 1000)
        img = os.path.join(d, "img")
        run(["mkfs.erofs", "--quiet", img, src], check=True)
        with open(img, "ab") as f:
            f.truncate(max(os.path.getsize(img), 1 << 20))
        mnt = os.path.join(d, "mnt")
        os.mkdir(mnt)
        for source, cwd, why in ((img, None, "which the erofs file system mounted at %s reads as its device"),
                                 ("img", d, "cannot tell whether")):
            mount_syscall(source, mnt, "erofs", cwd=cwd)
            try:
                assert not [l for l in run(["losetup", "-a"]).stdout.splitlines() if img in l]
                assert_refused(img, why % mnt if "%s" in why else why, img)
                # a loop device over the image reaches the same bytes
                if cwd is None:
                    with extra_loop(img) as alias:
                        assert_refused(alias, why % mnt, img, torture=False)
            finally:
                run(["umount", mnt], check=True)
        p = write_when_free(img, "--force")
        assert p.returncode == 0, p.stderr


def test_fuse2fs_given_a_relative_name():
    need_root()
    need_tool("fuse2fs", "fuse2fs")
    with scratch_dir() as d:
        img = os.path.join(d, "fs.img")
        make_image(img, 32 << 20)
        run(["mkfs.ext4", "-q", "-F", img], check=True)
        os.mkdir(os.path.join(d, "mnt"))
        p = subprocess.run(["fuse2fs", "fs.img", "mnt", "-o", "ro,fakeroot"], cwd=d, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        try:
            assert "fs.img" in [l.split(" - ")[1].split()[1] for l in open("/proc/self/mountinfo")
                                if " - " in l and l.split()[4] == os.path.join(d, "mnt")]
            assert_refused(img, "which the fuse.ext4 file system mounted at %s" % os.path.join(d, "mnt"), img)
        finally:
            run(["umount", os.path.join(d, "mnt")], check=True)
        p = write_when_free(img, "--force")
        assert p.returncode == 0, p.stderr


# a FUSE file system whose server never answers, mounted by whoever runs this (with the source it is given)
USER_FUSE = r"""
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/dev/fuse", os.O_RDWR)
opts = "fd=%d,rootmode=40000,user_id=%d,group_id=%d" % (fd, os.getuid(), os.getgid())
if libc.mount(sys.argv[1].encode(), sys.argv[2].encode(), b"fuse", 0, opts.encode()) != 0:
    print("mount failed:", os.strerror(ctypes.get_errno()), flush=True)
    sys.exit(1)
print("mounted", flush=True)
time.sleep(300)
"""


@contextlib.contextmanager
def fuse_mounted_by(user, source, mnt):
    """USER mounts a FUSE file system at MNT with SOURCE as its source, in a user and mount namespace of its
    own (as any user may); it goes with its server's process."""
    pw = pwd.getpwnam(user)
    os.makedirs(mnt, exist_ok=True)
    os.chown(mnt, pw.pw_uid, pw.pw_gid)
    # the system's Python: one under root's home is not for other users to run
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    p = subprocess.Popen(["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid, "--clear-groups", "--",
                          "unshare", "-Urm", python, "-c", USER_FUSE, source, mnt],
                         stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline().strip()
        assert line == "mounted", line
        yield p.pid
    finally:
        p.kill()
        p.wait()


def test_a_fuse_source_any_user_names():
    """A FUSE file system's source is the name its server gives it, and any user may mount one: nobody, in a
    user namespace of its own, names it like a file that does not exist. Root's write to an unrelated file
    goes through (the image of a FUSE file system is a file its server holds, and this one holds none)."""
    need_root()
    with scratch_dir() as d:
        unrelated = os.path.join(d, "unrelated")
        make_image(unrelated, 1 << 20)
        with fuse_mounted_by("nobody", "/nonexistent/fs.img", os.path.join(d, "umnt")):
            p = write(unrelated)
            assert p.returncode == 0, p.stderr
        with open(unrelated, "rb") as f:
            assert f.read(4096) == b"\x5a" * 4096


# ---------------------------------------------------------------- a disk's own bytes

@contextlib.contextmanager
def mounted_elsewhere(dev, mnt):
    """DEV mounted at MNT in a mount namespace of its own (a process keeps it alive), not in this one."""
    os.makedirs(mnt, exist_ok=True)
    p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c",
                          "mount -o ro %s %s && echo mounted && exec sleep 600" % (dev, mnt)],
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "mounted"
        assert mnt not in open("/proc/self/mountinfo").read()
        yield p.pid
    finally:
        p.kill()
        p.wait()


def shown_by_any_process(mnt):
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/mountinfo" % pid) as f:
                if " %s " % mnt in f.read():
                    return True
        except OSError:
            pass  # gone, or a kernel thread
    return False


@contextlib.contextmanager
def mounted_in_a_hidden_namespace(dev, mnt, d):
    """DEV mounted at MNT in a mount namespace that no process is in (kept by a bind of its nsfs file, as
    unshare --mount=FILE does): no /proc/PID/mountinfo shows it, only the kernel's claim tells."""
    keep = os.path.join(d, "nskeep")
    os.makedirs(keep)
    os.makedirs(mnt, exist_ok=True)
    run(["mount", "--bind", keep, keep], check=True)
    try:
        run(["mount", "--make-private", keep], check=True)
        ns = os.path.join(keep, "ns")
        open(ns, "w").close()
        for _ in range(20):
            # the bind of the new namespace's file fails now and then (EINVAL) on a busy machine (5 tries
            # 0.2 s apart all failed once beside CI's other lanes): again
            p = run(["unshare", "--mount=" + ns, "--propagation", "private", "true"])
            if p.returncode == 0:
                break
            time.sleep(0.5)
        assert p.returncode == 0, p.stderr
        try:
            run(["nsenter", "--mount=" + ns, "mount", "-o", "ro", dev, mnt], check=True)
            assert not shown_by_any_process(mnt)
            yield
        finally:
            run(["umount", ns])  # the namespace, and its mount, go with it
    finally:
        run(["umount", keep])


TABLE = "start=2048, size=20480\n"  # one partition, 1 MiB to 11 MiB: the rest is the disk's own
GAP = 32 << 20


def test_partition_gap_of_a_disk_mounted_whole_in_another_namespace():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "disk"), 64 << 20, partitions=TABLE) as disk:
        # a whole-disk ext4 made after the table: the kernel still has the partition
        run(["mkfs.ext4", "-q", "-F", disk], check=True)
        assert os.path.exists(disk + "p1")
        img = os.path.join(d, "disk")
        mnt = os.path.join(d, "mnt")
        with extra_loop(disk, offset=GAP) as gap:
            with mounted_elsewhere(disk, mnt) as pid:
                assert_refused(gap, "which is mounted (at %s in the mount namespace of process %d)" % (mnt, pid), img)
            # no process shows the mount: the kernel refuses the disk and its partition, and the guard says why
            with mounted_in_a_hidden_namespace(disk, mnt, d):
                assert_refused(gap, "which is in use as a whole", img)
        with extra_loop(disk, offset=GAP) as gap:
            p = write_when_free(gap, "--force")
            assert p.returncode == 0, p.stderr


def test_partition_gap_beside_a_mounted_partition_is_written():
    """A mounted partition makes its disk's own O_EXCL open fail too; the bytes outside it stay free."""
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "disk"), 64 << 20, partitions=TABLE) as disk:
        with extra_loop(disk, offset=GAP) as gap, ext4_mounted(disk + "p1", os.path.join(d, "mnt")):
            p = write(gap, "--force")
            assert p.returncode == 0, p.stderr


def test_partitioned_disk_written_whole():
    """The target's own claim on a disk makes its partitions' claims fail: they are its own, not in use.
    A partition another program mounted is refused by the kernel at open."""
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "disk"), 64 << 20, partitions=TABLE) as disk:
        p = write(disk, "--force")  # --force: the partition table
        assert p.returncode == 0, p.stderr
        with ext4_mounted(disk + "p1", os.path.join(d, "mnt")) as mnt:
            p = write(disk, "--force")
            assert p.returncode == 7 and "mounted at %s" % mnt in p.stderr, p.stderr


def test_external_journal_disk():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "journal"), 32 << 20, partitions=TABLE) as journal, \
            loop_device(os.path.join(d, "fs"), 64 << 20) as fs:
        run(["mke2fs", "-q", "-F", "-O", "journal_dev", "-b", "4096", journal], check=True)
        run(["mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-J", "device=" + journal, fs], check=True)
        mnt = os.path.join(d, "mnt")
        os.mkdir(mnt)
        run(["mount", "-o", "data=journal", fs, mnt], check=True)
        img = os.path.join(d, "journal")
        try:
            assert os.path.exists("/proc/fs/jbd2/" + os.path.basename(journal))
            # the journal disk itself: held by ext4, and said so
            p = write(journal, "--force")
            assert p.returncode == 7, (p.returncode, p.stderr)
            assert "external journal of a mounted ext4" in p.stderr and "no holder" not in p.stderr, p.stderr
            # its bytes outside its (stale) partition, through an offset loop
            # (ext4 commits to its journal meanwhile: only the bytes the refused writes aimed at are compared)
            with extra_loop(journal, offset=16 << 20) as gap:
                assert_refused(gap, "external journal of a mounted ext4", img, region=(16 << 20, 1 << 20))
        finally:
            run(["umount", mnt], check=True)


# ---------------------------------------------------------------- maps the guard cannot follow

def test_loop_chain_deeper_than_followed():
    need_root()
    with scratch_dir() as d, contextlib.ExitStack() as stack:
        img = os.path.join(d, "img")
        make_image(img, 32 << 20)
        dev = img
        for _ in range(18):
            dev = stack.enter_context(loop_over(dev))
        with ext4_mounted(dev, os.path.join(d, "mnt")) as mnt:
            assert_refused(img, "cannot tell whether %s shares storage with /dev/%s, which is mounted at %s"
                           % (img, os.path.basename(dev), mnt), img)
    with scratch_dir() as d, contextlib.ExitStack() as stack:
        img = os.path.join(d, "img")
        make_image(img, 32 << 20)
        chain = [img]
        for _ in range(18):
            chain.append(stack.enter_context(loop_over(chain[-1])))
        # the image itself is a loop device's backing file, which that loop keeps open: refused, used or not
        p = write(img, "--force")
        # the refusal names the loop device right over the file, whichever of the chain the guard met first
        assert p.returncode == 7 and "backing file of %s " % chain[1] in p.stderr, (p.returncode, p.stderr, chain)
        # nobody uses the chain: a write to its first loop device goes through, and the rest of the chain,
        # deeper than the guard follows, is claimed meanwhile
        p = write(chain[1], "--force")
        assert p.returncode == 0, p.stderr


@contextlib.contextmanager
def node_removed(dev):
    """DEV's /dev node and /dev/block link gone (put back afterwards: losetup -d needs them)."""
    st = os.stat(dev)
    link = "/dev/block/%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    os.unlink(dev)
    had_link = os.path.lexists(link)
    if had_link:
        os.unlink(link)
    try:
        yield
    finally:
        if not os.path.exists(dev):
            os.mknod(dev, 0o660 | (st.st_mode & 0o170000), st.st_rdev)
            os.chown(dev, st.st_uid, st.st_gid)
        if had_link and not os.path.lexists(link):
            os.symlink("../" + os.path.basename(dev), link)


def test_mounted_loop_without_node_over_a_deleted_file_kept_by_a_link():
    need_root()
    for elsewhere in (False, True):
        with scratch_dir() as d:
            img, keep = os.path.join(d, "img"), os.path.join(d, "keep")
            make_image(img, 32 << 20)
            os.link(img, keep)
            mnt = os.path.join(d, "mnt")
            with loop_over(img) as dev:
                run(["mkfs.ext4", "-q", "-F", dev], check=True)
                os.unlink(img)
                with contextlib.ExitStack() as stack:
                    if elsewhere:
                        stack.enter_context(mounted_in_a_hidden_namespace(dev, mnt, d))
                    else:
                        stack.enter_context(ext4_mounted_as_is(dev, mnt))
                    with node_removed(dev):
                        assert "(deleted)" in open("/sys/block/%s/loop/backing_file" % os.path.basename(dev)).read()
                        assert_refused(keep, "/dev/" + os.path.basename(dev), keep)
                # unmounted, the loop still keeps the file open: its backing file is not written
                p = write_when_free(keep, "--force")
                assert p.returncode == 7 and "backing file of " + dev in p.stderr, (p.returncode, p.stderr)
            p = write_when_free(keep, "--force")
            assert p.returncode == 0, p.stderr


@contextlib.contextmanager
def ext4_mounted_as_is(dev, mnt):
    os.makedirs(mnt, exist_ok=True)
    run(["mount", "-o", "ro", dev, mnt], check=True)
    try:
        yield mnt
    finally:
        run(["umount", mnt])


# ---------------------------------------------------------------- a FUSE server that stopped answering

def fuse_connection(mnt):
    return os.minor(os.stat(mnt).st_dev)


@contextlib.contextmanager
def stalled_fuse_loop(d):
    """A loop device over a file on fuse2fs, whose server is then stopped (SIGSTOP): anything that asks the
    file system about that file waits. Afterwards the connection is aborted (through a fusectl mounted in
    the scratch folder) and the server let go, so that nothing is left waiting."""
    img, mnt = os.path.join(d, "fuse.img"), os.path.join(d, "fmnt")
    make_image(img, 64 << 20)
    run(["mkfs.ext4", "-q", "-F", img], check=True)
    os.mkdir(mnt)
    run(["fuse2fs", img, mnt, "-o", "fakeroot"], check=True)
    server = int(run(["pgrep", "-f", "^fuse2fs %s" % img], check=True).stdout.split()[0])
    conn = fuse_connection(mnt)
    dev = None
    try:
        back = os.path.join(mnt, "back")
        with open(back, "wb") as f:
            f.write(b"\0" * (8 << 20))
        dev = run(["losetup", "-f", "--show", back], check=True).stdout.strip()
        os.kill(server, signal.SIGSTOP)
        time.sleep(1.5)  # past the kernel's cached attributes of the file (FUSE's attr_timeout, 1 s)
        yield dev
    finally:
        ctl = os.path.join(d, "fusectl")
        os.makedirs(ctl, exist_ok=True)
        if run(["mount", "-t", "fusectl", "fusectl", ctl]).returncode == 0:
            with open(os.path.join(ctl, str(conn), "abort"), "w") as f:
                f.write("1")
            run(["umount", ctl])
        os.kill(server, signal.SIGCONT)
        os.kill(server, signal.SIGTERM)
        if dev:
            run(["losetup", "-d", dev])
        run(["umount", "-l", mnt])


def test_unrelated_write_beside_a_loop_on_a_stalled_fuse_server():
    need_root()
    need_tool("fuse2fs", "fuse2fs")
    with scratch_dir() as d:
        unrelated = os.path.join(d, "unrelated")
        make_image(unrelated, 1 << 20)
        with stalled_fuse_loop(d) as dev:
            start = time.monotonic()
            try:
                p = subprocess.run([os.environ["LCLOUDCTL"], "write", "--offset", "0", "--length", "4096",
                                    "--pattern", "0x5a", unrelated], capture_output=True, text=True, timeout=BOUND)
            except subprocess.TimeoutExpired:
                raise AssertionError("a write to %s hung for %d s beside %s" % (unrelated, BOUND, dev))
            took = time.monotonic() - start
            print("  the write took %.1f s" % took)
            # written, or refused by name when another program holds the unanswered loop meanwhile
            assert p.returncode == 0 or ("did not answer in time" in p.stderr and p.returncode == 7), p.stderr
            # lcloud-target opens its namespaces through the same guard
            start = time.monotonic()
            t = subprocess.Popen([TARGET, "--listen", "127.0.0.1:0", "--ns", unrelated, "-q"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                ready, _, _ = select.select([t.stdout], [], [], BOUND)
                assert ready, "lcloud-target's start hung for %d s beside %s" % (BOUND, dev)
                line = t.stdout.readline()
                print("  lcloud-target answered in %.1f s: %s" % (time.monotonic() - start, line.strip()))
                assert line.startswith("listening"), (line, t.stderr.read() if t.poll() is not None else "")
            finally:
                t.kill()
                t.wait(timeout=30)
        if p.returncode == 0:
            with open(unrelated, "rb") as f:
                assert f.read(4096) == b"\x5a" * 4096


if __name__ == "__main__":
    in_a_mount_namespace_of_its_own(__file__)
    main([test_overlay_loop_over_merged_written_through_the_upper_layer, test_overlay_lower_file_not_copied_up,
          test_overlay_loop_over_upper_written_through_the_merged_name, test_overlay_swap_on_a_loop_over_the_merged_name,
          test_erofs_mounted_from_its_image, test_fuse2fs_given_a_relative_name, test_a_fuse_source_any_user_names,
          test_partition_gap_of_a_disk_mounted_whole_in_another_namespace,
          test_partition_gap_beside_a_mounted_partition_is_written, test_partitioned_disk_written_whole,
          test_external_journal_disk,
          test_loop_chain_deeper_than_followed, test_mounted_loop_without_node_over_a_deleted_file_kept_by_a_link,
          test_unrelated_write_beside_a_loop_on_a_stalled_fuse_server])
