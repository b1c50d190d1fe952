#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Files another program holds, and storage that gains a user after the
check. A file a running program has open (a helper process; a real mariadbd
on its ibdata1 and .ibd files) is refused by write, torture run and an
output file's replacement, with --force too, naming the process, and the
server starts clean afterwards; the library's queue refuses it too unless
the caller says the file is its own (the Python binding's own_file). Then
storage gains a user while a writer runs: a loop device and a mount made
over the file torture run writes (direct and buffered), a loop device at an
offset over the block device it writes, and a loop device and a mount over
a namespace file lcloud-target writes: each writer stops and says why, and
the new file system is intact (e2fsck, and a file read back). Every loop
device and mount is the test's own and goes, also on failure."""
import contextlib
import hashlib
import os
import random
import subprocess
import sys
import threading
import time

from hostlib import LCLOUDCTL, digest, lcloudctl, loop_device, main, need_root, need_tool, run, scratch_dir

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "mariadb"))
import mdserver as md  # noqa: E402
from test_target import target, admin, io_queue  # noqa: E402
from test_guard_identity import overlay  # noqa: E402

BINDING = os.environ.get("LCLOUD_PYTHON", os.path.join(HERE, "..", "..", "bindings", "python"))
PAGE = 16384

HOLDER = r"""
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
print("held", flush=True)
time.sleep(300)
"""


@contextlib.contextmanager
def held_by_a_program(path):
    """A process that keeps PATH open (read-only) until the block ends."""
    p = subprocess.Popen([sys.executable, "-c", HOLDER, path], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        yield p.pid
    finally:
        p.kill()
        p.wait()


@contextlib.contextmanager
def extra_loop(backing, *args):
    """A loop device over BACKING (options ARGS), detached at the end."""
    dev = run(["losetup", "-f", "--show"] + list(args) + [backing], check=True).stdout.strip()
    try:
        yield dev
    finally:
        run(["losetup", "-d", dev])


@contextlib.contextmanager
def running(args):
    """A background command, killed at the end if it is still running."""
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield p
    finally:
        if p.poll() is None:
            p.kill()
        p.communicate()


def python_queue(script, *args):
    """SCRIPT run by a Python with the binding of this tree (LCLOUD_LIBRARY names the build's library)."""
    env = dict(os.environ, PYTHONPATH=BINDING)
    if os.environ.get("LCLOUD_TEST_SANITIZERS"):
        # the sanitizer lane's library in a Python built without them: its runtime first, and Python leaks
        asan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
        env.update(LD_PRELOAD=asan, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1")
    return subprocess.run([sys.executable, "-c", script] + list(args), capture_output=True, text=True, env=env,
                          timeout=60)


QUEUE_OPEN = r"""
import errno, sys
import lcloud
try:
    with lcloud.Queue(sys.argv[1], write=True, own_file=sys.argv[2] == "own") as q:
        data = q.read(16384, 0)
        print("opened", q.backend, len(data))
except OSError as e:
    print("refused", errno.errorcode[e.errno], e.strerror)
"""


def assert_refused_while_held(path, pid, why):
    """write (with and without --force), torture run and a replacement by rename of PATH are refused while
    process PID holds it, naming it; PATH is not changed, nor grown."""
    size, before = os.path.getsize(path), digest(path)
    name = "(pid %d, " % pid
    for extra in ((), ("--force",)):
        p = lcloudctl("write", path, "--offset", "0", "--length", "4096", "--pattern", "0x5a", *extra)
        assert p.returncode == 7, (path, extra, p.returncode, p.stdout, p.stderr)
        assert why in p.stderr and name in p.stderr and "--force does not override" in p.stderr, p.stderr
    with scratch_dir() as d:
        pages = size // PAGE + 64  # more than the file holds: a run would grow it before it wrote
        p = lcloudctl("torture", "run", path, "--path", "plain_direct", "--pages", str(pages), "--writes", "8",
                      "--force", "--record", os.path.join(d, "rec"))
        assert p.returncode == 7 and name in p.stderr, (p.returncode, p.stderr)
        src = os.path.join(d, "src")
        with open(src, "wb") as f:
            f.write(b"\x11" * 4096)
        ino = os.stat(path).st_ino
        p = lcloudctl("read", src, "--offset", "0", "--length", "4096", "--output", path, "--force")
        assert p.returncode == 7 and name in p.stderr and "not replaced" in p.stderr, (p.returncode, p.stderr)
        assert os.stat(path).st_ino == ino, "the name was replaced"
    assert os.path.getsize(path) == size, "a refused run grew %s" % path
    assert digest(path) == before, "a refused write changed %s" % path


def test_a_file_another_program_holds():
    """A helper holds a file: refused, named; once it is gone, written. A loop device over it, unmounted,
    keeps it open too: refused, named."""
    need_root()
    with scratch_dir() as d:
        path = os.path.join(d, "data")
        with open(path, "wb") as f:
            f.write(bytes(range(256)) * 4096)
        with held_by_a_program(path) as pid:
            assert_refused_while_held(path, pid, "is open elsewhere")
            p = python_queue(QUEUE_OPEN, path, "not-own")
            assert p.stdout.startswith("refused EBUSY") and "(pid %d, " % pid in p.stdout, (p.stdout, p.stderr)
            p = python_queue(QUEUE_OPEN, path, "own")
            assert p.stdout.startswith("opened"), (p.stdout, p.stderr)
        p = lcloudctl("write", path, "--offset", "0", "--length", "4096", "--pattern", "0x5a")
        assert p.returncode == 0, p.stderr
        with extra_loop(path) as dev:
            for extra in ((), ("--force",)):
                p = lcloudctl("write", path, "--offset", "0", "--length", "4096", "--pattern", "0x5a", *extra)
                assert p.returncode == 7 and "backing file of %s" % dev in p.stderr, p.stderr
            # the flag that says a file is the caller's own does not make a loop device's file its own
            p = python_queue(QUEUE_OPEN, path, "own")
            assert p.stdout.startswith("refused EBUSY") and "backing file of %s" % dev in p.stdout, p.stdout


def test_mariadbd_data_files():
    """A running mariadbd's ibdata1 and .ibd file: refused, mariadbd named; the queue opens them only as
    the server's own (own_file, and nothing written); the server starts clean afterwards."""
    need_root()
    for prog in ("mariadbd", "mariadb-install-db", "mariadb"):
        need_tool(prog, "mariadb-server")
    with scratch_dir() as d:
        datadir = os.path.join(d, "data")
        md.install_db(datadir)
        server = md.Server(d, "srv", datadir, None, None)
        server.start()
        try:
            server.sql("CREATE DATABASE lab")
            server.sql("CREATE TABLE lab.pages (id INT PRIMARY KEY, v VARCHAR(64)) ENGINE=InnoDB")
            server.sql("INSERT INTO lab.pages VALUES " + ",".join("(%d, 'row %d')" % (i, i) for i in range(200)))
            pid = server.server_pid()
            files = [os.path.join(datadir, "ibdata1"), os.path.join(datadir, "lab", "pages.ibd")]
            open_now = [os.readlink("/proc/%d/fd/%s" % (pid, fd)) for fd in os.listdir("/proc/%d/fd" % pid)]
            for path in files:
                assert path in open_now, "mariadbd has no descriptor of %s: %s" % (path, open_now)
            for path in files:
                # the server may write its own files meanwhile: the byte-for-byte check is the restart's
                p = lcloudctl("write", path, "--offset", "0", "--length", "16384", "--pattern", "0x5a")
                assert p.returncode == 7 and "mariadbd (pid %d, " % pid in p.stderr, (p.returncode, p.stderr)
                p = lcloudctl("torture", "run", path, "--path", "plain_direct", "--pages", "4", "--writes", "4",
                              "--record", os.path.join(d, "rec"))
                assert p.returncode == 7 and "mariadbd (pid %d, " % pid in p.stderr, (p.returncode, p.stderr)
                p = python_queue(QUEUE_OPEN, path, "not-own")
                assert p.stdout.startswith("refused EBUSY") and "mariadbd (pid %d, " % pid in p.stdout, p.stdout
                p = python_queue(QUEUE_OPEN, path, "own")
                assert p.stdout.startswith("opened") and p.stdout.split()[-1] == "16384", (p.stdout, p.stderr)
        finally:
            server.stop()
        lines = "\n".join(server.lines())
        assert "corrupt" not in lines.lower(), lines[-3000:]
        with md.running(server):
            lines = "\n".join(server.lines())
            assert "corrupt" not in lines.lower() and "[ERROR]" not in lines, lines[-3000:]
            assert server.sql("CHECK TABLE lab.pages")[-1][-1] == "OK"
            assert server.sql("SELECT COUNT(*), SUM(id) FROM lab.pages") == [["200", str(sum(range(200)))]]


def wait_for_records(record, n, p, seconds=60):
    """Until the torture record holds N records (64 bytes each) or the run ends."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and p.poll() is None:
        if os.path.exists(record) and os.path.getsize(record) >= 64 * n:
            return
        time.sleep(0.05)
    raise AssertionError("torture run wrote no records (exit %s)" % p.poll())


def new_file_system_is_intact(dev, mnt):
    """ext4 made on DEV after the writer stopped, a file written into it: fsck finds nothing, the file reads back."""
    run(["mkfs.ext4", "-q", "-F", dev], check=True)
    os.makedirs(mnt, exist_ok=True)
    run(["mount", dev, mnt], check=True)
    try:
        data = random.Random(7).randbytes(1 << 20)
        with open(os.path.join(mnt, "file"), "wb") as f:
            f.write(data)
        run(["sync"])
        time.sleep(1)  # a writer still going would have written by now
    finally:
        run(["umount", mnt], check=True)
    p = run(["e2fsck", "-fn", dev])
    assert p.returncode == 0, "the new file system is damaged:\n" + p.stdout + p.stderr
    run(["mount", "-o", "ro", dev, mnt], check=True)
    try:
        with open(os.path.join(mnt, "file"), "rb") as f:
            assert hashlib.sha256(f.read()).digest() == hashlib.sha256(data).digest()
    finally:
        run(["umount", mnt], check=True)


def test_torture_run_stops_when_its_file_gains_a_loop_and_a_mount():
    """The file torture run writes (direct and buffered) gets a loop device: losetup waits until the batch in
    flight is done, the run stops with the reason (exit 7), and a file system made on the loop is intact."""
    need_root()
    for path in ("plain_direct", "buffered"):
        with scratch_dir() as d:
            img, record = os.path.join(d, "img"), os.path.join(d, "rec")
            with open(img, "wb") as f:
                f.truncate(32 << 20)
            with running([LCLOUDCTL, "torture", "run", img, "--path", path, "--pages", "2048", "--duration", "60",
                          "--record", record]) as p:
                wait_for_records(record, 10, p)
                with extra_loop(img) as dev:
                    rc = p.wait(30)
                    err = p.stderr.read()
                    assert rc == 7, (path, rc, err)
                    assert "gained a user" in err and "another program opened it" in err, err
                    new_file_system_is_intact(dev, os.path.join(d, "mnt"))


def test_torture_run_on_a_device_stops_at_a_loop_at_an_offset():
    """torture run on a loop device; another loop device at an offset over it appears (the kernel's uevent):
    the run stops naming it (exit 7), and a file system made on the new loop device is intact."""
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 64 << 20) as dev:
        record = os.path.join(d, "rec")
        with running([LCLOUDCTL, "torture", "run", dev, "--path", "plain_direct", "--pages", "4096",
                      "--duration", "60", "--record", record]) as p:
            wait_for_records(record, 10, p)
            with extra_loop(dev, "--offset", str(16 << 20), "--sizelimit", str(32 << 20)) as alias:
                rc = p.wait(30)
                err = p.stderr.read()
                assert rc == 7, (rc, err)
                assert "gained a user" in err and alias in err, err
                new_file_system_is_intact(alias, os.path.join(d, "mnt"))


def test_target_namespace_gains_a_loop_and_a_mount():
    """A host writes a namespace while a loop device is made over its file: losetup waits for the write in
    progress, every write after fails with Namespace Is Write Protected (DNR), reads go on, the log says why,
    and a file system made on the loop device is intact."""
    need_root()
    with scratch_dir() as d, target(size=32 << 20) as (port, path, p, log):
        a, cntlid = admin(port)
        assert a.command(0x09, cdw=(0x07, 1 | 1 << 16))[0] == 0  # two I/O queues
        statuses, stop = [], threading.Event()

        def writer():
            q = io_queue(port, cntlid, qid=2)
            rnd = random.Random(1)
            while not stop.is_set():
                statuses.append(q.command(0x01, nsid=1, cdw=(rnd.randrange(8192), 0, 0), write=b"\x77" * 4096)[0])

        q = io_queue(port, cntlid)
        assert q.command(0x01, nsid=1, cdw=(10, 0, 0), write=b"\x42" * 4096)[0] == 0
        t = threading.Thread(target=writer)
        t.start()
        try:
            while len(statuses) < 50 and t.is_alive():
                time.sleep(0.01)
            with extra_loop(path) as dev:
                end = time.monotonic() + 10
                while 0x4020 not in statuses and time.monotonic() < end:
                    time.sleep(0.01)
                stop.set()
                t.join(30)
                assert statuses.count(0) >= 50, statuses[:60]
                first = statuses.index(0x4020)  # ValueError: the target went on writing
                assert all(s == 0x4020 for s in statuses[first:]), statuses[first:]
                assert q.command(0x01, nsid=1, cdw=(10, 0, 0), write=b"\x43" * 4096)[0] == 0x4020
                st, _, _, data = q.command(0x02, nsid=1, cdw=(10, 0, 0), read=4096)
                assert st == 0 and data == b"\x42" * 4096, hex(st)
                text = open(log.name).read()
                assert text.count("write protected from now on") == 1 and "another program opened it" in text, text
                new_file_system_is_intact(dev, os.path.join(d, "mnt"))
                assert q.command(0x01, nsid=1, cdw=(10, 0, 0), write=b"\x43" * 4096)[0] == 0x4020
        finally:
            stop.set()
            t.join(30)
        assert p.poll() is None, "the target died"


def test_overlay_file_whose_layer_file_a_program_holds():
    """A program holds upper/img, the layer file under merged/img, by its own name: the write lease on the
    overlay file does not see it (the program never opened the overlay's inode). write and torture run on
    merged/img are refused naming the program, and the file is unchanged; once it is gone, written."""
    need_root()
    with scratch_dir() as d, overlay(d) as (lower, upper, merged):
        img, layer = os.path.join(merged, "img"), os.path.join(upper, "img")
        with open(img, "wb") as f:
            f.write(bytes(range(256)) * 4096)
        assert os.path.exists(layer)
        before = digest(layer)
        with held_by_a_program(layer) as pid:
            for extra in ((), ("--force",)):
                p = lcloudctl("write", img, "--offset", "0", "--length", "4096", "--pattern", "0x5a", *extra)
                assert p.returncode == 7 and "(pid %d, " % pid in p.stderr, (extra, p.returncode, p.stderr)
            p = lcloudctl("torture", "run", img, "--path", "plain_direct", "--pages", "4", "--writes", "8",
                          "--force", "--record", os.path.join(d, "rec"))
            assert p.returncode == 7 and "(pid %d, " % pid in p.stderr, (p.returncode, p.stderr)
            p = python_queue(QUEUE_OPEN, img, "not-own")
            assert p.stdout.startswith("refused EBUSY") and "(pid %d, " % pid in p.stdout, (p.stdout, p.stderr)
            assert digest(layer) == before, "a refused write changed %s" % layer
        p = lcloudctl("write", img, "--offset", "0", "--length", "4096", "--pattern", "0x5a")
        assert p.returncode == 0, p.stderr


def test_torture_run_on_an_overlay_file_stops_when_its_layer_file_gains_a_user():
    """torture run writes merged/img; a loop device is set up over upper/img, the layer file that holds those
    bytes (no open of the overlay file: its lease does not break), and then a program opens upper/img by
    its own name: each time the run stops saying why (exit 7), and a file system made on the loop device
    is intact."""
    need_root()
    with scratch_dir() as d, overlay(d) as (lower, upper, merged):
        img, layer, record = os.path.join(merged, "img"), os.path.join(upper, "img"), os.path.join(d, "rec")
        with open(img, "wb") as f:
            f.truncate(32 << 20)
        with running([LCLOUDCTL, "torture", "run", img, "--path", "plain_direct", "--pages", "2048",
                      "--duration", "60", "--record", record]) as p:
            wait_for_records(record, 10, p)
            with extra_loop(layer) as dev:
                rc = p.wait(30)
                err = p.stderr.read()
                assert rc == 7 and "gained a user" in err, (rc, err)
                new_file_system_is_intact(dev, os.path.join(d, "mnt"))
        os.unlink(record)
        with running([LCLOUDCTL, "torture", "run", img, "--path", "plain_direct", "--pages", "2048",
                      "--duration", "60", "--record", record]) as p:
            wait_for_records(record, 10, p)
            with held_by_a_program(layer) as pid:
                rc = p.wait(30)
                err = p.stderr.read()
                assert rc == 7 and "gained a user" in err and "(pid %d, " % pid in err, (rc, err)


def test_fuse2fs_image_renamed_with_a_decoy_at_its_name():
    """fuse2fs serves a file system from an image that is then renamed, and a new file takes its old name (the
    mount's source): the queue opened with own_file, which takes no lease and trusts the guard for file
    systems mounted from the file, refuses the image under its new name, naming the server. (The decoy,
    the file the source names, stays refused too: a server may read its image by that name.)"""
    need_root()
    need_tool("fuse2fs", "fuse2fs")
    with scratch_dir() as d:
        img, moved, mnt = os.path.join(d, "fs.img"), os.path.join(d, "moved.img"), os.path.join(d, "mnt")
        with open(img, "wb") as f:
            f.truncate(32 << 20)
        run(["mkfs.ext4", "-q", "-F", img], check=True)
        os.mkdir(mnt)
        run(["fuse2fs", img, mnt, "-o", "ro,fakeroot"], check=True)
        try:
            server = int(run(["pgrep", "-f", "^fuse2fs %s" % img], check=True).stdout.split()[0])
            os.rename(img, moved)
            with open(img, "wb") as f:
                f.truncate(1 << 20)
            before = digest(moved)
            p = python_queue(QUEUE_OPEN, moved, "own")
            assert p.stdout.startswith("refused EBUSY") and "FUSE server (pid %d)" % server in p.stdout, \
                (p.stdout, p.stderr)
            assert digest(moved) == before
        finally:
            run(["umount", mnt], check=True)


if __name__ == "__main__":
    main([test_a_file_another_program_holds, test_mariadbd_data_files,
          test_torture_run_stops_when_its_file_gains_a_loop_and_a_mount,
          test_torture_run_on_a_device_stops_at_a_loop_at_an_offset,
          test_target_namespace_gains_a_loop_and_a_mount,
          test_overlay_file_whose_layer_file_a_program_holds,
          test_torture_run_on_an_overlay_file_stops_when_its_layer_file_gains_a_user,
          test_fuse2fs_image_renamed_with_a_decoy_at_its_name])
