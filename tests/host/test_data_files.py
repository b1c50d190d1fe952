#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""advise's walk over the InnoDB data files already in a directory
(cli/data_file_edges.c), against what a data directory can hold: files it
cannot read as nobody, symbolic links and mounts that lead elsewhere, FIFOs,
sockets and devices with data file names (never opened, never waited on),
MySQL's undo tablespaces, trees deeper than PATH_MAX, files with thousands of
extents, and names no terminal or JSON reader should get raw. The rule: a
data file that could not be read is counted as unread, which keeps the
doublewrite buffer on. advise itself never reaches the walk on loop devices
(they promise nothing), so the walk runs on its own (data_files_scan)."""
import contextlib
import ctypes
import json
import os
import socket
import subprocess
import sys

from hostlib import lcloudctl, main, mounted_fs, run, scratch_dir

SCAN = os.environ.get("DATA_FILES_SCAN", "data_files_scan")
PAGE = 16384
BLOCK = 4096


def scan(d, user=None, timeout=60):
    args = [SCAN, d, str(PAGE)]
    if user:
        args = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] + args
    p = subprocess.run(args, capture_output=True, timeout=timeout)
    assert p.returncode == 0, p.stderr
    out = {}
    for line in p.stdout.decode("ascii").splitlines():
        k, _, v = line.partition(" ")
        out[k] = int(v) if k in ("result", "files", "split", "unread", "split_first_edge") else v
    return out


def punch(fd, offset, length):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.fallocate(fd, 3, ctypes.c_long(offset), ctypes.c_long(length)) != 0:  # PUNCH_HOLE | KEEP_SIZE
        raise OSError(ctypes.get_errno(), "fallocate punch")


def whole(path, size=4 * PAGE, mode=0o644):
    """A data file written in one piece: one extent, no edge inside a page."""
    with open(path, "wb") as f:
        f.write(b"\x5a" * size)
        os.fsync(f.fileno())
    os.chmod(path, mode)


def split(path, mode=0o644):
    """A data file with a hole at 4 KiB: extent edges inside its first page."""
    with open(path, "wb") as f:
        f.write(b"\x5a" * BLOCK)
        f.seek(2 * BLOCK)
        f.write(b"\x5a" * (4 * PAGE - 2 * BLOCK))
        os.fsync(f.fileno())
    os.chmod(path, mode)


@contextlib.contextmanager
def xfs():
    with mounted_fs("xfs", 1 << 30) as (_, mnt):
        yield mnt


def datadir(mnt, name):
    d = os.path.join(mnt, name)
    os.makedirs(os.path.join(d, "db"))
    os.chmod(d, 0o755)
    os.chmod(os.path.join(d, "db"), 0o755)
    whole(os.path.join(d, "ibdata1"))
    whole(os.path.join(d, "db", "t1.ibd"))
    return d


def assert_unread(s, what):
    assert s["result"] == 0 and s["unread"] >= 1, "%s: counted as read: %s" % (what, s)


def test_plain_tree_is_read():
    """The baseline: whole files pass, a split one is found, with its edge."""
    with xfs() as mnt:
        d = datadir(mnt, "dd")
        s = scan(d)
        assert (s["result"], s["files"], s["split"], s["unread"]) == (0, 2, 0, 0), s
        split(os.path.join(d, "db", "t2.ibd"))
        s = scan(d, user="nobody")
        assert (s["files"], s["split"], s["unread"]) == (3, 1, 0), s
        assert s["split_first"].endswith("/db/t2.ibd") and s["split_first_edge"] == BLOCK, s


def test_unreadable_as_nobody():
    """A subdirectory nobody cannot list, or can list but not enter, hides data files: unread."""
    with xfs() as mnt:
        d = datadir(mnt, "closed")
        os.mkdir(os.path.join(d, "secret"), 0o700)
        whole(os.path.join(d, "secret", "t.ibd"))
        assert scan(d)["unread"] == 0
        s = scan(d, user="nobody")
        assert_unread(s, "a directory nobody cannot open")
        assert "Permission denied; run as a user who can read" in s["unread_first"], s
        d = datadir(mnt, "listonly")
        os.mkdir(os.path.join(d, "db2"))
        whole(os.path.join(d, "db2", "t.ibd"))
        os.chmod(os.path.join(d, "db2"), 0o744)  # names visible, files not
        assert_unread(scan(d, user="nobody"), "a directory nobody can list but not enter")
        d = datadir(mnt, "modes")
        whole(os.path.join(d, "db", "t3.ibd"), mode=0o600)
        assert_unread(scan(d, user="nobody"), "a data file nobody cannot open")


def test_symlinks_lead_elsewhere():
    """A data file or database directory behind a symbolic link is not read: unread."""
    with xfs() as mnt, scratch_dir() as other:
        whole(os.path.join(other, "far.ibd"))
        os.mkdir(os.path.join(other, "fardb"))
        whole(os.path.join(other, "fardb", "t.ibd"))
        d = datadir(mnt, "link_file")
        os.symlink(os.path.join(other, "far.ibd"), os.path.join(d, "db", "far.ibd"))
        assert_unread(scan(d), "a data file that is a symbolic link")
        d = datadir(mnt, "link_dir")
        os.symlink(os.path.join(other, "fardb"), os.path.join(d, "fardb"))
        assert_unread(scan(d), "a database directory that is a symbolic link")
        d = datadir(mnt, "link_loop")
        os.symlink("loop.ibd", os.path.join(d, "db", "loop.ibd"))
        os.symlink("..", os.path.join(d, "db", "up"))
        s = scan(d, timeout=20)
        assert_unread(s, "a symbolic link loop")
        d = datadir(mnt, "link_other")
        os.symlink("/etc/hostname", os.path.join(d, "hostname"))
        os.symlink("/nonexistent", os.path.join(d, "dangling"))
        s = scan(d)
        assert (s["files"], s["unread"]) == (2, 0), "links that lead to no data file: %s" % s


def test_mounts_inside():
    """Data files on a file system mounted inside are not the verdict's: unread. A mount without any is fine."""
    with xfs() as mnt:
        d = datadir(mnt, "mounts")
        sub = os.path.join(d, "tmpdb")
        os.mkdir(sub)
        run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", sub], check=True)
        try:
            s = scan(d)
            assert (s["files"], s["unread"]) == (2, 0), "an empty mount inside: %s" % s
            whole(os.path.join(sub, "t.ibd"))
            assert_unread(scan(d), "a data file on a tmpfs mounted inside")
        finally:
            run(["umount", sub], check=True)
        d = datadir(mnt, "self")
        run(["mount", "--bind", d, os.path.join(d, "db")], check=True)
        try:
            s = scan(d, timeout=20)
            assert (s["files"], s["unread"]) == (3, 0), "the data directory bound into itself: %s" % s  # db/ibdata1 too
        finally:
            run(["umount", os.path.join(d, "db")], check=True)
        d = datadir(mnt, "binds")
        with scratch_dir() as other:
            whole(os.path.join(other, "t.ibd"))
            sub = os.path.join(d, "bound")
            os.mkdir(sub)
            run(["mount", "--bind", other, sub], check=True)
            try:
                assert_unread(scan(d), "a data file behind a bind mount of another file system")
            finally:
                run(["umount", sub], check=True)


def test_special_files_named_like_data_files():
    """A FIFO, socket or device named like a data file: never opened (no wait, no side effect), unread."""
    with xfs() as mnt:
        for kind in ("fifo", "socket", "chardev"):
            d = datadir(mnt, "special_" + kind)
            path = os.path.join(d, "db", "x.ibd")
            if kind == "fifo":
                os.mkfifo(path)
            elif kind == "socket":
                sk = socket.socket(socket.AF_UNIX)
                sk.bind(path)
                sk.close()
            else:
                os.mknod(path, 0o666 | 0o020000, os.makedev(1, 3))  # /dev/null's numbers
            assert_unread(scan(d, timeout=20), "a %s named x.ibd" % kind)


def test_mysql_undo_and_isl():
    """MySQL's undo tablespaces (undo_001, *.ibu) are data files; a MariaDB .isl names one elsewhere."""
    with xfs() as mnt:
        d = datadir(mnt, "undo")
        split(os.path.join(d, "undo_001"))
        s = scan(d)
        assert (s["files"], s["split"]) == (3, 1), "undo_001: %s" % s
        d = datadir(mnt, "ibu")
        split(os.path.join(d, "u1.ibu"))
        s = scan(d)
        assert (s["files"], s["split"]) == (3, 1), "u1.ibu: %s" % s
        d = datadir(mnt, "isl")
        with open(os.path.join(d, "db", "far.isl"), "w") as f:
            f.write("/elsewhere/db/far.ibd")
        assert_unread(scan(d), "a .isl file (DATA DIRECTORY elsewhere)")


SWAPPER = r"""
import errno, os, sys, time
d, seconds = sys.argv[1], float(sys.argv[2])
name, fifo, reg = d + "/x.ibd", d + "/.fifo", d + "/.reg"
end = time.monotonic() + seconds
opened = 0
while time.monotonic() < end:
    os.mkfifo(fifo)
    os.rename(fifo, name)
    for _ in range(20):
        try:  # succeeds only while a reader has the FIFO open
            os.close(os.open(name, os.O_WRONLY | os.O_NONBLOCK))
            opened += 1
        except OSError as e:
            if e.errno not in (errno.ENXIO, errno.ENOENT):
                raise
    with open(reg, "wb") as f:
        f.write(b"\x5a" * 65536)
    os.rename(reg, name)
    os.unlink(name)
print(opened)
"""


def test_names_swapped_during_the_walk():
    """A name that turns into a FIFO, a file and nothing while the walk runs: never opened as a FIFO,
    never a wait; read whole, or counted as unread."""
    with xfs() as mnt:
        d = datadir(mnt, "swap")
        swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, os.path.join(d, "db"), "4"],
                                   stdout=subprocess.PIPE, text=True)
        try:
            runs = 0
            while swapper.poll() is None:
                s = scan(d, timeout=20)
                assert s["result"] == 0 and s["split"] == 0, s
                assert s["unread"] or s["files"] in (2, 3), s
                runs += 1
        finally:
            out = swapper.communicate(timeout=30)[0]
        assert swapper.returncode == 0 and out.strip() == "0", "a FIFO was opened for reading: %s" % out
        assert runs > 10, runs


def test_without_proc():
    """Without /proc the walk cannot reopen a file it holds by O_PATH: unread, and it says so."""
    with xfs() as mnt:
        d = datadir(mnt, "noproc")
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            'umount -l /proc && exec "$0" "$1" "$2"', SCAN, d, str(PAGE)], capture_output=True, text=True)
        # a sanitizer build's leak check needs /proc (even to read ASAN_OPTIONS) and fails at exit, after the output
        assert p.returncode == 0 or "LeakSanitizer has encountered a fatal error" in p.stderr, p.stderr
        assert "unread 2" in p.stdout and "/proc" in p.stdout, p.stdout


def test_deep_tree():
    """A split data file deeper than PATH_MAX is found, or the walk says it could not go there."""
    with xfs() as mnt:
        d = datadir(mnt, "deep")
        fd = os.open(d, os.O_RDONLY)
        try:
            for _ in range(300):
                os.mkdir("d" * 30, dir_fd=fd)
                nfd = os.open("d" * 30, os.O_RDONLY, dir_fd=fd)
                os.close(fd)
                fd = nfd
            with open(os.open("deep.ibd", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "wb") as f:
                f.write(b"\x5a" * BLOCK)
                f.seek(2 * BLOCK)
                f.write(b"\x5a" * PAGE)
                os.fsync(f.fileno())
        finally:
            os.close(fd)
        s = scan(d, timeout=60)
        assert s["split"] >= 1 or s["unread"] >= 1, "a split file 300 directories down passed: %s" % s
        run(["rm", "-rf", os.path.join(d, "d" * 30)], check=True)


def test_many_extents():
    """Thousands of extents are all read: the one edge inside a page among them is found."""
    with xfs() as mnt:
        d = datadir(mnt, "many")
        path = os.path.join(d, "db", "big.ibd")
        n = 2048
        with open(path, "wb") as f:
            f.write(b"\x5a" * (n * PAGE))
            os.fsync(f.fileno())
            for i in range(1, n - 8, 2):  # a hole every other page: edges on pages, more than one FIEMAP batch
                punch(f.fileno(), i * PAGE, PAGE)
        s = scan(d)
        assert (s["files"], s["split"], s["unread"]) == (3, 0, 0), s
        with open(path, "r+b") as f:
            punch(f.fileno(), (n - 4) * PAGE + BLOCK, BLOCK)
        s = scan(d)
        assert (s["split"], s["split_first_edge"]) == (1, (n - 4) * PAGE + BLOCK), s


def test_hostile_names_in_advice():
    """A data directory named with escapes, a newline and bytes that are not UTF-8: escaped text, valid JSON."""
    with xfs() as mnt:
        d = os.path.join(mnt.encode(), b"\x1b[31mred\nline\xff\xfe")
        os.mkdir(d)
        p = subprocess.run([os.environ.get("LCLOUDCTL", "lcloudctl").encode(), b"advise", b"--db", b"mysql", d],
                           capture_output=True)
        assert p.returncode in (0, 8), p
        assert b"\x1b" not in p.stdout and b"\xff" not in p.stdout, p.stdout
        assert p.stdout.count(b"\n\n") >= 1 and not p.stdout.startswith(b"\n")
        first = p.stdout.split(b"\n", 1)[0]
        assert first.endswith(b"with 16384-byte pages"), "the path broke the first line: %r" % p.stdout
        assert b"\\x1b[31mred\\x0aline\\xff\\xfe: mysql" in first, first  # the name's own bytes, escaped
        p = subprocess.run([os.environ.get("LCLOUDCTL", "lcloudctl").encode(), b"advise", b"--db", b"mysql",
                            b"-o", b"json", d], capture_output=True)
        assert p.returncode in (0, 8), p
        doc = json.loads(p.stdout.decode("utf-8"))
        assert doc["advice"], doc


def test_dir_is_a_file_or_link():
    """The walk on a file is an error, not an empty pass; through a symbolic link it reads the target."""
    with xfs() as mnt:
        d = datadir(mnt, "target")
        split(os.path.join(d, "db", "t2.ibd"))
        os.symlink(d, os.path.join(mnt, "via_link"))
        s = scan(os.path.join(mnt, "via_link"))
        assert (s["files"], s["split"]) == (3, 1), s
        s = scan(os.path.join(d, "ibdata1"))
        assert s["result"] < 0 or s["unread"] >= 1, "a file as the directory: %s" % s


if __name__ == "__main__":
    main([test_plain_tree_is_read, test_unreadable_as_nobody, test_symlinks_lead_elsewhere, test_mounts_inside,
          test_special_files_named_like_data_files, test_names_swapped_during_the_walk,
          test_mysql_undo_and_isl, test_deep_tree, test_without_proc, test_many_extents,
          test_hostile_names_in_advice, test_dir_is_a_file_or_link])
