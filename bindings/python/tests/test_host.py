# SPDX-License-Identifier: LGPL-2.1-or-later
"""lcloud.Queue on the real kernel, as root, on loop devices (tests/host/hostlib.py):
atomic 16 KiB writes to a file on XFS read back (one at a time, and in a
batch on io_uring and on the sync backend); atomic writes refused before
submission with the queue's own words (misaligned, not a power of two,
oversized, ext4 without atomic writes); an atomic write the kernel cut short
(a file size limit) reported as an error; reads at and past the end of a
file; hints described as 'lcloudctl write' and 'lcloudctl read' describe
them; the write guard refusing a mounted device. Every refusal is compared
with what lcloudctl says for the same I/O."""
import errno
import json
import os
import resource
import signal
import subprocess
import sys
from typing import Iterator, Tuple

import pytest

if os.geteuid() != 0:
    pytest.skip("loop devices and mounts need root; run the host tests as root", allow_module_level=True)

import hostlib  # noqa: E402  (tests/host, on PYTHONPATH)
import lcloud  # noqa: E402
from common import error_line, lcloudctl  # noqa: E402

XFS_ARGS = ("-m", "reflink=1")  # as tests/host/test_io.py: XFS with atomic writes past one block


@pytest.fixture(scope="module")
def xfs() -> Iterator[Tuple[str, str]]:
    with hostlib.mounted_fs("xfs", mkfs_args=XFS_ARGS) as (dev, mnt):
        yield dev, mnt
    # a descriptor left open by a test (or a queue not closed) keeps it mounted
    assert not os.path.ismount(mnt), "%s could not be unmounted: something still holds it" % mnt


@pytest.fixture
def xfs_file(xfs: Tuple[str, str], request: pytest.FixtureRequest) -> str:
    path = os.path.join(xfs[1], request.node.name.replace("[", "_").replace("]", ""))
    open(path, "wb").close()
    return path


def pread(path: str, length: int, offset: int) -> bytes:
    """An independent read, through the page cache."""
    with open(path, "rb") as f:
        return os.pread(f.fileno(), length, offset)


def cli_write(path: str, offset: int, length: int, *extra: str) -> "subprocess.CompletedProcess[str]":
    return lcloudctl("write", "--offset", str(offset), "--length", str(length), "--pattern", "0x5a", *extra, path)


def assert_same_refusal(e: OSError, stderr: str) -> None:
    """lcloudctl prints 'lcloudctl write: [PATH: ]MESSAGE' with the queue's own message."""
    line = error_line(stderr)
    assert e.strerror and line.endswith(e.strerror), (line, e.strerror)


def test_a_new_opener_stops_the_queue(xfs_file: str) -> None:
    """Another process opens the file while a queue writes it: its open waits for the queue, the queue stops
    (check_storage and every write raise EBUSY with the reason), and the opener proceeds."""
    with lcloud.Queue(xfs_file, write=True) as q:
        assert q.write(b"\x44" * 4096, 0) == 4096
        q.check_storage()  # nobody else yet
        opener = subprocess.Popen([sys.executable, "-c", "import sys; open(sys.argv[1], 'rb').close()", xfs_file])
        try:
            for _ in range(500):
                try:
                    q.check_storage()
                except OSError as e:
                    assert e.errno == errno.EBUSY and "another program opened it" in e.strerror, e
                    break
                assert opener.poll() is None, "the opener did not wait for the queue's lease"
                __import__("time").sleep(0.01)
            else:
                raise AssertionError("the queue never saw the opener")
            assert opener.wait(10) == 0  # let go once nothing was in flight
            with pytest.raises(OSError) as e:
                q.write(b"\x45" * 4096, 0)
            assert e.value.errno == errno.EBUSY and "gained a user" in (e.value.strerror or "")
        finally:
            if opener.poll() is None:
                opener.kill()
    assert pread(xfs_file, 4096, 0) == b"\x44" * 4096


def test_atomic_writes_on_xfs_read_back(xfs_file: str) -> None:
    # the test reads the file itself while the queue is open: it is this program's own
    with lcloud.Queue(xfs_file, write=True, own_file=True) as q:
        assert q.backend == "io_uring"
        # the queue's own probe, whose verdict decides, is what probe() finds for the same file
        assert q.probe().verdict == lcloud.probe(xfs_file).verdict
        assert q.probe().verdict["rwf_atomic"]["max_untorn_bytes"] >= 16384
        for size, byte in ((4096, 0x11), (16384, 0x22)):
            data = bytes([byte]) * size
            assert q.write(data, size * 2, lcloud.Hint(write_class="data", atomic=True)) == size
            assert q.read(size, size * 2) == data
            assert pread(xfs_file, size, size * 2) == data
        # a bytearray and a memoryview are written as bytes are
        assert q.write(memoryview(bytearray(b"\x33" * 16384)), 65536, lcloud.Hint(atomic=True)) == 16384
    assert pread(xfs_file, 16384, 65536) == b"\x33" * 16384
    # lcloudctl read, another reader through its own queue, sees the same bytes
    p = lcloudctl("read", "--offset", "32768", "--length", "16384", "--out", xfs_file + ".out", xfs_file)
    assert p.returncode == 0, p.stderr
    with open(xfs_file + ".out", "rb") as f:
        assert f.read() == b"\x22" * 16384


@pytest.mark.parametrize("backend", ["io_uring", "sync"])
def test_atomic_batch_with_user_data(xfs_file: str, backend: str) -> None:
    n = 8
    with lcloud.Queue(xfs_file, depth=n, backend=backend, write=True) as q:
        assert q.backend == backend
        for i in range(n):
            q.prep_write(bytes([0x40 + i]) * 16384, i * 16384, lcloud.Hint(write_class="journal", atomic=True),
                         user_data=("page", i))
        assert q.submit() == n
        done = q.reap(min=n)
        assert sorted(c.user_data for c in done) == [("page", i) for i in range(n)]
        assert all(c.ok and c.result == 16384 and c.data is None and c.error() is None for c in done)
        for i in reversed(range(n)):
            q.prep_read(16384, i * 16384, lcloud.Hint(read_kind="sync"), user_data=i)
        assert q.submit() == n
        reads = {c.user_data: c.data for c in q.reap(n, n)}
    for i in range(n):
        assert reads[i] == bytes([0x40 + i]) * 16384
        assert pread(xfs_file, 16384, i * 16384) == bytes([0x40 + i]) * 16384


@pytest.mark.parametrize("offset,length,words", [
    (4096, 16384, "naturally aligned"),
    (0, 12288, "power of two"),
    (0, 4 << 20, "more than the largest untorn write"),
])
def test_atomic_write_refused_before_submission(xfs_file: str, offset: int, length: int, words: str) -> None:
    with lcloud.Queue(xfs_file, write=True) as q:
        with pytest.raises(OSError) as e:
            q.write(b"\x01" * length, offset, lcloud.Hint(atomic=True))
        assert e.value.errno == errno.EINVAL and words in (e.value.strerror or ""), e.value
        assert e.value.filename == xfs_file
        assert q.last_error == e.value.strerror
        # the batch call refuses it the same way, with nothing queued
        with pytest.raises(OSError) as e2:
            q.prep_write(b"\x01" * length, offset, lcloud.Hint(atomic=True), user_data=1)
        assert e2.value.strerror == e.value.strerror
        assert q.submit() == 0
    assert os.path.getsize(xfs_file) == 0  # nothing reached the file
    p = cli_write(xfs_file, offset, length, "--atomic")
    assert p.returncode == 7 and "refused before submission" in p.stderr, p.stderr
    assert_same_refusal(e.value, p.stderr)


def test_ext4_refuses_atomic_writes_plain_ones_work() -> None:
    with hostlib.mounted_fs("ext4") as (dev, mnt):
        path = os.path.join(mnt, "data")
        open(path, "wb").close()
        with lcloud.Queue(path, write=True) as q:
            with pytest.raises(OSError) as e:
                q.write(b"\x07" * 4096, 0, lcloud.Hint(atomic=True))
            assert e.value.errno == errno.EOPNOTSUPP
            assert "atomic write refused" in (e.value.strerror or "") and "not supported" in (e.value.strerror or "")
            assert os.path.getsize(path) == 0
            assert q.write(b"\x07" * 4096, 0) == 4096
            assert q.read(4096, 0) == b"\x07" * 4096
        assert pread(path, 4096, 0) == b"\x07" * 4096
        p = cli_write(path, 0, 4096, "--atomic")
        assert p.returncode == 7
        assert_same_refusal(e.value, p.stderr)


# Under a file size limit (ulimit -f) of 20 KiB the kernel cuts writes at 16 KiB short, atomic ones too.
SHORT_CHILD = r"""
import json, resource, signal, sys
import lcloud
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (20480, 20480))
out = {}
with lcloud.Queue(sys.argv[1], depth=2, write=True) as q:
    out["plain"] = q.write(b"p" * 8192, 16384)
    try:
        q.write(b"a" * 16384, 16384, lcloud.Hint(atomic=True))
    except OSError as e:
        out["atomic"] = [e.errno, e.strerror]
    q.prep_write(b"a" * 16384, 16384, lcloud.Hint(atomic=True), user_data="batch")
    q.submit()
    (c,) = q.reap(min=1)
    e = c.error()
    out["batch"] = [c.result, c.ok, e.errno if e else None, e.strerror if e else None]
print(json.dumps(out))
"""


def limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (20480, 20480))


def test_atomic_write_cut_short_is_an_error(xfs_file: str) -> None:
    p = subprocess.run([sys.executable, "-c", SHORT_CHILD, xfs_file], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["plain"] == 4096  # a plain write returns what was written, as os.write does
    want = ("only 4096 of 16384 bytes were written at offset 16384: the write was not one untorn unit; check the "
            "file size limit (ulimit -f) and the free space")
    assert out["atomic"] == [errno.EIO, want]
    assert out["batch"] == [4096, False, errno.EIO, want]
    assert os.path.getsize(xfs_file) == 20480  # the kernel did cut them at the limit
    # lcloudctl write under the same limit says the same
    cli = subprocess.run([hostlib.LCLOUDCTL, "write", "--offset", "16384", "--length", "16384", "--pattern", "1",
                          "--atomic", xfs_file], capture_output=True, text=True, preexec_fn=limit_file_size)
    assert cli.returncode != 0 and error_line(cli.stderr).endswith(want), cli.stderr


def test_read_at_and_past_the_end(xfs_file: str) -> None:
    with lcloud.Queue(xfs_file, depth=2, write=True) as q:
        q.write(b"\x66" * 16384, 0)
        assert q.read(8192, 12288) == b"\x66" * 4096  # the end of the file is within the range
        assert q.read(4096, 16384) == b""  # at the end
        assert q.read(4096, 1 << 20) == b""  # past it
        q.prep_read(4096, 65536, user_data="past")
        q.submit()
        (c,) = q.reap(min=1)
        assert (c.user_data, c.result, c.data) == ("past", 0, b"")
    assert pread(xfs_file, 4096, 16384) == b""  # the kernel agrees
    p = lcloudctl("read", "--offset", "16384", "--length", "4096", "--out", xfs_file + ".out", xfs_file)
    assert p.returncode != 0 and "short read: 0 of 4096 bytes" in p.stderr, p.stderr


WRITE_HINTS = [
    ((), lcloud.Hint()),
    (("--hint", "data"), lcloud.Hint(write_class="data")),
    (("--hint", "journal", "--fua"), lcloud.Hint(write_class="journal", fua=True)),
    (("--hint", "metadata", "--lifetime", "long", "--group", "3"),
     lcloud.Hint(write_class="metadata", lifetime="long", group=3)),
    (("--hint", "background", "--lifetime", "extreme"), lcloud.Hint(write_class="background", lifetime="extreme")),
]


@pytest.mark.parametrize("options,hint", WRITE_HINTS, ids=[" ".join(o) or "none" for o, _ in WRITE_HINTS])
def test_write_hints_described_as_lcloudctl_write(xfs_file: str, options: Tuple[str, ...],
                                                  hint: lcloud.Hint) -> None:
    p = cli_write(xfs_file, 0, 4096, *options)
    assert p.returncode == 0, p.stderr
    described = p.stdout.strip().split("; hints: ", 1)[1]
    with lcloud.Queue(xfs_file, write=True) as q:
        assert q.describe_hint(hint) == described
        assert q.write(b"\x5a" * 4096, 0, hint) == 4096  # and the hint is accepted as lcloudctl's was
        # a file has no write streams: a class or group is dropped, and both say so
        pl = q.placement(hint)
        asked = hint.write_class != "none" or hint.group != 0
        assert (pl.basis, pl.write_stream, pl.placement_id) == ("no_placement" if asked else "not_asked", None, None)
        assert pl.dropped == asked and ("dropped (max_write_streams 0)" in described) == asked, (pl, described)


@pytest.mark.parametrize("kind", ["sync", "readahead"])
def test_read_hints_described_as_lcloudctl_read(xfs_file: str, kind: str) -> None:
    with open(xfs_file, "wb") as f:
        f.write(b"\x01" * 4096)
    p = lcloudctl("read", "--offset", "0", "--length", "4096", "--hint", kind, "--out", xfs_file + ".out", xfs_file)
    assert p.returncode == 0, p.stderr
    described = [l for l in p.stderr.splitlines() if "; hints: " in l][0].split("; hints: ", 1)[1]
    with lcloud.Queue(xfs_file) as q:
        hint = lcloud.Hint(read_kind=kind)
        assert q.describe_hint(hint, write=False) == described
        assert q.read(4096, 0, hint) == b"\x01" * 4096


def test_read_only_queue_refuses_writes(xfs_file: str) -> None:
    with lcloud.Queue(xfs_file) as q:
        with pytest.raises(OSError) as e:
            q.write(b"\0" * 4096, 0)
        assert e.value.errno == errno.EBADF and q.last_error
    q.close()  # twice is fine
    with pytest.raises(ValueError):
        q.read(4096, 0)


def test_write_guard_refuses_a_mounted_device(xfs: Tuple[str, str]) -> None:
    dev, mnt = xfs
    for force in (False, True):
        with pytest.raises(OSError) as e:
            lcloud.Queue(dev, write=True, force=force)
        assert e.value.errno == errno.EBUSY and "mounted at " + mnt in (e.value.strerror or ""), e.value
        p = cli_write(dev, 0, 4096, *(["--force"] if force else []))
        assert p.returncode == 7
        assert_same_refusal(e.value, p.stderr)
    # reads are never guarded: the XFS superblock is at offset 0
    with lcloud.Queue(dev) as q:
        assert q.read(4096, 0)[:4] == b"XFSB"


def test_write_guard_signature_and_force() -> None:
    with hostlib.scratch_dir() as d, hostlib.loop_device(os.path.join(d, "disk"), 64 << 20) as dev:
        hostlib.run(["mkfs.ext4", "-q", "-F", dev], check=True)
        with pytest.raises(OSError) as e:
            lcloud.Queue(dev, write=True)
        assert e.value.errno == errno.EBUSY and "ext4 signature" in (e.value.strerror or ""), e.value
        p = cli_write(dev, 0, 4096)
        assert p.returncode == 7
        assert_same_refusal(e.value, p.stderr)
        with lcloud.Queue(dev, write=True, force=True) as q:
            assert q.write(b"\x33" * 4096, 1 << 20) == 4096
            assert q.read(4096, 1 << 20) == b"\x33" * 4096
            with pytest.raises(OSError) as e:  # past the end of the device
                q.write(b"\0" * 4096, 64 << 20)
            assert e.value.errno == errno.ENOSPC
        assert pread(dev, 4096, 1 << 20) == b"\x33" * 4096
