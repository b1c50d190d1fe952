#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What lcloud-target writes besides its namespaces, when the room for it
runs out, read back with the test's own reader of the dm-log-writes format
and with lcloudctl replay:
  - a write log on a full file system (a small tmpfs) fails the writes it
    cannot log with Capacity Exceeded, and every write the host saw
    complete is in the log, in order, with its data; with room again it
    logs and writes again; --write-log-limit does the same at its size;
  - Write Zeroes of the whole namespace adds one constant-size entry (a
    DISCARD sector, no zeros), deallocated blocks read as zeros (DLFEAT),
    and replay of the log onto the starting image gives the namespace the
    target left, byte for byte;
  - --power-report is checked at start (a directory, a missing or read-only
    folder, a namespace's own file are refused before listening; a symlink
    at the name is replaced, never followed) and a report the cut cannot
    write (a full file system) is an exit status of 3 with the name as it
    was."""
import contextlib
import os
import signal
import struct
import subprocess
import tempfile

from hostlib import main, scratch_dir, need_root, run
from nvme_tcp_host import TARGET, target, pattern, log_text, admin, io_queue, identify

LCLOUDCTL = os.environ.get("LCLOUDCTL", "lcloudctl")


@contextlib.contextmanager
def tmpfs(size, ro=False):
    """A tmpfs of SIZE bytes mounted on a scratch folder; unmounted whatever happens."""
    need_root()
    d = tempfile.mkdtemp(prefix="lcloud-tmpfs-")
    run(["mount", "-t", "tmpfs", "-o", "size=%d,mode=0755%s" % (size, ",ro" if ro else ""), "tmpfs", d], check=True)
    try:
        yield d
    finally:
        if run(["umount", d]).returncode != 0:
            run(["umount", "-l", d])
        os.rmdir(d)


def read_log(path):
    """(sector size, entries as (sector, nr_sectors, flags, data)), from the format's definition; the file
    must end where its last entry does and its super block count every entry."""
    with open(path, "rb") as f:
        log = f.read()
    magic, version, n, ss = struct.unpack_from("<QQQI", log, 0)
    assert (magic, version) == (0x6A736677736872, 1)
    entries, pos = [], ss
    for _ in range(n):
        sector, nr, flags, data_len = struct.unpack_from("<QQQQ", log, pos)
        pos += ss
        data = log[pos:pos + nr * ss] if not flags & (1 | 4) else b""
        pos += len(data)
        entries.append((sector, nr, flags, data))
    assert pos == len(log), ("bytes after the last entry the super block counts", pos, len(log))
    return ss, entries


def write_until_refused(q, first_slba, limit=400):
    """4 KiB writes at FIRST_SLBA on until one fails: (the acknowledged (slba, data), the failing status)."""
    done = []
    for i in range(limit):
        data = os.urandom(4096)
        st = q.command(0x01, nsid=1, cdw=(first_slba + i, 0, 0), write=data)[0]
        if st:
            return done, st
        done.append((first_slba + i, data))
    raise AssertionError("no write was refused in %d" % limit)


def test_a_full_log_file_system_fails_what_it_cannot_log():
    """The write log's tmpfs fills up: the write it cannot log fails with Capacity Exceeded (DNR) and is not
    written; every write the host saw complete is in the log with its data, in order, and the log ends where
    its last entry does (a part-written entry was cut off again); one log line says so; with room again,
    writes and flushes are logged and done."""
    with tmpfs(1 << 20) as fs:
        filler = os.path.join(fs, "filler")
        with open(filler, "wb") as f:
            f.write(b"\0" * ((1 << 20) - (160 << 10)))
        wlog = os.path.join(fs, "ns1.log")
        with target("--write-log", wlog, size=4 << 20) as (port, path, p, log):
            a, cntlid = admin(port)
            q = io_queue(port, cntlid)
            done, st = write_until_refused(q, 16)
            assert st & 0x7FF == 0x081 and st & 0x4000, hex(st)  # Capacity Exceeded, do not retry
            refused_slba = 16 + len(done)
            assert q.command(0x02, nsid=1, cdw=(0, 0, 0), read=4096)[0] == 0  # reads go on
            # every acknowledged write is in the log, with its data, in order; the refused one is nowhere
            ss, entries = read_log(wlog)
            assert [(e[0], e[1], e[2], e[3]) for e in entries] == [(s, 1, 0, data) for s, data in done], \
                (len(entries), len(done))
            # read through the target: opening the file now would be a new user of it (write protected)
            st, _, _, back = q.command(0x02, nsid=1, cdw=(refused_slba, 0, 0), read=4096)
            assert st == 0 and back == pattern()[:4096], "a write the log lacks reached the namespace"
            text = log_text(log)
            assert "No space left on device" in text and "Capacity Exceeded" in text, text
            assert text.count("write log %s" % wlog) == 1, text  # said once, not per refused write
            # room again: writes are logged and done again
            os.unlink(filler)
            data = os.urandom(4096)
            assert q.command(0x01, nsid=1, cdw=(refused_slba, 0, 0), write=data)[0] == 0
            assert q.command(0x00, nsid=1)[0] == 0
            ss, entries = read_log(wlog)
            assert entries[-2:] == [(refused_slba, 1, 0, data), (0, 0, 1, b"")], entries[-2:]
            assert p.poll() is None


def test_write_log_limit():
    """--write-log-limit 64K: the log never passes it; the write that would is refused (Capacity Exceeded),
    a smaller entry (a Flush's sector) still fits, the next not; the log line names the option."""
    with scratch_dir() as d:
        wlog = os.path.join(d, "ns1.log")
        with target("--write-log", wlog, "--write-log-limit", "64K") as (port, path, p, log):
            a, cntlid = admin(port)
            q = io_queue(port, cntlid)
            done, st = write_until_refused(q, 8)
            assert st & 0x7FF == 0x081 and len(done) == 7, (hex(st), len(done))  # 4K + 7 x 8K = 60K
            assert q.command(0x00, nsid=1)[0] == 0                                # a Flush's 4K: 64K
            assert q.command(0x00, nsid=1)[0] & 0x7FF == 0x081                    # and no more
            assert q.command(0x08, nsid=1, cdw=(100, 0, 0))[0] & 0x7FF == 0x081   # Write Zeroes: logged too
            assert os.path.getsize(wlog) == 64 << 10
            ss, entries = read_log(wlog)
            assert len(entries) == 8 and entries[-1][2] == 1, entries
            assert "--write-log-limit" in log_text(log)
        r = subprocess.run([TARGET, "--ns", path, "--write-log", wlog + "2", "--write-log-limit", "1000",
                            "--listen", "127.0.0.1:0"], capture_output=True, text=True, timeout=10)
        assert r.returncode == 2 and not os.path.exists(wlog + "2"), (r.returncode, r.stderr)  # not even one entry


def test_write_zeroes_of_the_whole_namespace():
    """One DISCARD sector for 64 MiB of zeros; deallocated blocks read as zeros, as DLFEAT says; replaying the
    log onto the namespace as it was gives the namespace as the target left it."""
    size = 64 << 20
    with scratch_dir() as d:
        wlog, base = os.path.join(d, "ns1.log"), os.path.join(d, "base")
        with target("--write-log", wlog, "--volatile-write-cache", "on", size=size) as (port, path, p, log):
            with open(base, "wb") as out:  # what target() put there (its file is not opened while it runs)
                out.write(pattern(size))
            a, cntlid = admin(port)
            st, ns = identify(a, 0, nsid=1)
            assert st == 0 and ns[33] & 0x7 == 0x1, ns[33]  # DLFEAT: deallocated blocks read as zeros
            q = io_queue(port, cntlid)
            data = os.urandom(32768)
            assert q.command(0x01, nsid=1, cdw=(100, 0, 7), write=data, inline=False)[0] == 0
            before = os.path.getsize(wlog)
            blocks = size // 4096
            assert q.command(0x08, nsid=1, cdw=(0, 0, blocks - 1))[0] == 0
            assert os.path.getsize(wlog) - before == 4096, os.path.getsize(wlog) - before
            st, _, _, back = q.command(0x02, nsid=1, cdw=(100, 0, 7), read=32768)
            assert st == 0 and back == bytes(32768)
            # after it: a write, and a deallocation of part of it, which reads as zeros
            assert q.command(0x01, nsid=1, cdw=(200, 0, 7), write=data, inline=False)[0] == 0
            rng = struct.pack("<IIQ", 0, 2, 202)
            assert q.command(0x09, nsid=1, cdw=(0, 1 << 2), write=rng)[0] == 0
            st, _, _, back = q.command(0x02, nsid=1, cdw=(200, 0, 7), read=32768)
            assert st == 0 and back == data[:8192] + bytes(8192) + data[16384:]
            assert q.command(0x00, nsid=1)[0] == 0
            ss, entries = read_log(wlog)
            assert [(e[0], e[1], e[2], len(e[3])) for e in entries] == \
                [(100, 8, 0, 32768), (0, blocks, 4, 0), (200, 8, 0, 32768), (202, 2, 4, 0), (0, 0, 1, 0)], entries
            with open(path, "rb") as f:
                final = f.read()
        out = os.path.join(d, "replayed")
        r = subprocess.run([LCLOUDCTL, "replay", "--lba", "4096", wlog, "--base", base, "--out", out, "--cut",
                            str(len(entries))], capture_output=True, text=True)
        assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
        with open(out, "rb") as f:
            assert f.read() == final, "replay does not give the namespace the target left"


def test_power_report_is_checked_at_start():
    with scratch_dir() as d, tmpfs(1 << 20, ro=True) as ro:
        ns = os.path.join(d, "ns")
        with open(ns, "wb") as f:
            f.truncate(1 << 20)
        os.mkdir(os.path.join(d, "dir"))
        cases = [(os.path.join(d, "dir"), "is a directory"), (os.path.join(d, "missing", "report"), "No such file"),
                 (os.path.join(ro, "report"), "Read-only file system"), (ns, "is namespace 1's file")]
        for report, words in cases:
            r = subprocess.run([TARGET, "--ns", ns, "--power-report", report, "--listen", "127.0.0.1:0"],
                               capture_output=True, text=True, timeout=10)
            assert r.returncode == 1 and words in r.stderr and "listening" not in r.stdout, (report, r.returncode,
                                                                                         r.stderr)
        # a symlink at the name is replaced by the report, and what it pointed at is untouched
        victim, link = os.path.join(d, "victim"), os.path.join(d, "report")
        with open(victim, "w") as f:
            f.write("not a report")
        os.symlink(victim, link)
        with target("--power-report", link, folder=d) as (port, path, p, log):
            p.send_signal(signal.SIGUSR1)
            assert p.wait(10) == 0, log_text(log)
        assert not os.path.islink(link) and open(link).read().startswith("# lcloud-target power cut")
        assert open(victim).read() == "not a report"


def test_a_report_the_cut_cannot_write():
    """The report's folder full at the cut: exit status 3, a log line, the name as it was."""
    with tmpfs(64 << 10) as fs:
        report = os.path.join(fs, "report")
        with open(report, "w") as f:
            f.write("keep")
        with scratch_dir() as d:
            with target("--volatile-write-cache", "on", "--power-report", report, folder=d) as (port, path, p, log):
                a, cntlid = admin(port)
                q = io_queue(port, cntlid)
                for i in range(8):
                    assert q.command(0x01, nsid=1, cdw=(i, 0, 0), write=os.urandom(4096))[0] == 0
                fd = os.open(os.path.join(fs, "filler"), os.O_WRONLY | os.O_CREAT, 0o644)
                try:
                    while os.write(fd, b"\0" * 4096):
                        pass
                except OSError:
                    pass  # full: what was wanted
                os.close(fd)
                p.send_signal(signal.SIGUSR1)
                assert p.wait(10) == 3, log_text(log)
                text = log_text(log)
                assert "power report %s: No space left on device" % report in text, text
                assert "exit status 3" in text, text
        assert open(report).read() == "keep"
        assert sorted(os.listdir(fs)) == ["filler", "report"]


if __name__ == "__main__":
    main([test_a_full_log_file_system_fails_what_it_cannot_log, test_write_log_limit,
          test_write_zeroes_of_the_whole_namespace, test_power_report_is_checked_at_start,
          test_a_report_the_cut_cannot_write])
