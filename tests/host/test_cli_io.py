#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lcloudctl read and write at their edges: sizes refused before any memory
is allocated (under a small ulimit -v), the largest I/O stated the same way
everywhere, no wrapped offset in a message, binary data never written to a
terminal, short reads reported as such, --out created 0600 and never over
an existing file or through a symlink, and a path never printed twice."""
import os
import pty
import select
import subprocess

from hostlib import LCLOUDCTL, lcloudctl, loop_device, main, need_root, scratch_dir

IO_MAX = 2147479552  # 2 GiB less 4 KiB: Linux's MAX_RW_COUNT


def limited(args, kib=204800):
    """lcloudctl under ulimit -v KIB: a large allocation fails there."""
    return subprocess.run(["sh", "-c", 'ulimit -v %d && exec "$@"' % kib, "sh", LCLOUDCTL] + list(args),
                          capture_output=True, text=True)


def test_sizes_checked_before_allocation():
    need_root()
    if os.environ.get("LCLOUD_TEST_SANITIZERS"):
        # AddressSanitizer reserves terabytes of shadow memory: it cannot start under ulimit -v
        print("skipped test_sizes_checked_before_allocation: no small ulimit -v under the sanitizers")
        return
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 16 << 20) as dev:
        path = os.path.join(d, "f")
        with open(path, "wb") as f:
            f.truncate(1 << 20)
        p = limited(["write", "--offset", "0", "--length", "12G", "--pattern", "1", path])
        assert p.returncode == 2 and "more than one read or write carries" in p.stderr, (p.returncode, p.stderr)
        assert "allocate" not in p.stderr and str(IO_MAX) in p.stderr, p.stderr
        # exactly 2 GiB is over the true limit, which is the one named
        p = limited(["write", "--offset", "0", "--length", "2G", "--pattern", "1", path])
        assert p.returncode == 2 and str(IO_MAX) in p.stderr, p.stderr
        # 1 GiB to a 16 MiB device: refused for its size, not for memory
        p = limited(["write", "--offset", "0", "--length", "1G", "--pattern", "1", dev])
        assert p.returncode == 7 and "run past the end of the device (16777216 bytes" in p.stderr, p.stderr
        assert "allocate" not in p.stderr, p.stderr
        # the memory limit is real: an allocation that size does fail under it
        p = limited(["read", "--offset", "0", "--length", "1G", "--out", os.path.join(d, "big"), path])
        assert p.returncode != 0 and "cannot allocate" in p.stderr, p.stderr
        # an offset near 2^64: no wrapped sum in the message
        p = lcloudctl("write", "--offset", str((1 << 64) - 4096), "--length", "8192", "--pattern", "1", dev)
        assert p.returncode == 7 and "offset %d is past the end" % ((1 << 64) - 4096) in p.stderr, p.stderr
        p = lcloudctl("write", "--offset", str((16 << 20) - 4096), "--length", "8192", "--pattern", "1", dev)
        assert p.returncode == 7 and "8192 bytes at offset 16773120 run past the end" in p.stderr, p.stderr
        assert "4096 are left" in p.stderr, p.stderr


def test_read_never_writes_binary_to_a_terminal():
    with scratch_dir() as d:
        path = os.path.join(d, "f")
        with open(path, "wb") as f:
            f.write(b"\x1b]0;owned\x07" * 1000)
            f.truncate(8192)
        master, slave = pty.openpty()
        try:
            p = subprocess.run([LCLOUDCTL, "read", "--offset", "0", "--length", "4096", path], stdout=slave,
                               stderr=subprocess.PIPE, text=True)
            os.close(slave)
            slave = -1
            got = b""
            while select.select([master], [], [], 0.2)[0]:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                got += chunk
        finally:
            if slave >= 0:
                os.close(slave)
            os.close(master)
        assert p.returncode == 2 and "terminal" in p.stderr and "--out FILE" in p.stderr, (p.returncode, p.stderr)
        assert b"owned" not in got and got == b"", got[:100]
        # the same read to a pipe gives the data
        p = subprocess.run([LCLOUDCTL, "read", "--offset", "0", "--length", "4096", path], capture_output=True)
        assert p.returncode == 0 and p.stdout[:10] == b"\x1b]0;owned\x07", p.stderr


def test_short_reads_are_errors():
    with scratch_dir() as d:
        path = os.path.join(d, "f")
        with open(path, "wb") as f:
            f.write(b"\x42" * 8192)
        # straddling the end: what there is comes out, and the exit status says it was short
        p = subprocess.run([LCLOUDCTL, "read", "--offset", "4096", "--length", "8192", path], capture_output=True)
        assert p.returncode == 1 and b"short read: 4096 of 8192 bytes" in p.stderr, p.stderr
        assert p.stdout == b"\x42" * 4096
        # past the end
        p = subprocess.run([LCLOUDCTL, "read", "--offset", "16384", "--length", "4096", path], capture_output=True)
        assert p.returncode == 1 and b"short read: 0 of 4096 bytes" in p.stderr, p.stderr
        assert p.stdout == b""
        # a whole read is not short
        p = subprocess.run([LCLOUDCTL, "read", "--offset", "4096", "--length", "4096", path], capture_output=True)
        assert p.returncode == 0 and b"short" not in p.stderr, p.stderr


def test_output_file_created_safely():
    with scratch_dir() as d:
        path = os.path.join(d, "f")
        with open(path, "wb") as f:
            f.write(b"\x5a" * 4096)
        out = os.path.join(d, "out")
        old = os.umask(0)  # the mode is the file's own, not the umask's leftover
        try:
            p = lcloudctl("read", "--offset", "0", "--length", "4096", "--out", out, path)
        finally:
            os.umask(old)
        assert p.returncode == 0, p.stderr
        assert os.stat(out).st_mode & 0o777 == 0o600, oct(os.stat(out).st_mode)
        with open(out, "rb") as f:
            assert f.read() == b"\x5a" * 4096
        # an existing file is not overwritten; --force replaces it (0600 again)
        with open(out, "wb") as f:
            f.write(b"keep")
        os.chmod(out, 0o644)
        p = lcloudctl("read", "--offset", "0", "--length", "4096", "--out", out, path)
        assert p.returncode == 7 and "never overwritten" in p.stderr, p.stderr
        with open(out, "rb") as f:
            assert f.read() == b"keep"
        p = lcloudctl("read", "--offset", "0", "--length", "4096", "--out", out, "--force", path)
        assert p.returncode == 0, p.stderr
        assert os.stat(out).st_mode & 0o777 == 0o600
        with open(out, "rb") as f:
            assert f.read() == b"\x5a" * 4096
        # a symlink is never followed, --force or not: its target is untouched
        victim = os.path.join(d, "victim")
        with open(victim, "wb") as f:
            f.write(b"victim")
        link = os.path.join(d, "link")
        os.symlink(victim, link)
        for extra in ((), ("--force",)):
            p = lcloudctl("read", "--offset", "0", "--length", "4096", "--out", link, *extra, path)
            assert p.returncode == 7, (p.returncode, p.stderr)
        with open(victim, "rb") as f:
            assert f.read() == b"victim"
        assert os.path.islink(link)
        # a dangling symlink is not created through either
        os.unlink(victim)
        p = lcloudctl("read", "--offset", "0", "--length", "4096", "--out", link, path)
        assert p.returncode == 7 and not os.path.exists(victim), p.stderr
        # a failed read leaves no empty output behind
        missing = os.path.join(d, "out2")
        p = lcloudctl("read", "--offset", "1", "--length", "4096", "--out", missing, path)
        assert p.returncode == 7 and not os.path.exists(missing), p.stderr
        # "-o json" after the command is the old --out FILE, not the format: refused, no file named json
        p = lcloudctl("read", "--offset", "0", "--length", "4096", "-o", "json", path)
        assert p.returncode == 2 and "--out json" in p.stderr, p.stderr
        assert not os.path.exists("json")


def test_messages_name_the_path_once():
    p = lcloudctl("write", "--offset", "0", "--length", "4096", "--pattern", "0", "/dev/null")
    assert p.returncode == 5 and p.stderr.count("/dev/null") == 1, p.stderr


if __name__ == "__main__":
    main([test_sizes_checked_before_allocation, test_read_never_writes_binary_to_a_terminal,
          test_short_reads_are_errors, test_output_file_created_safely, test_messages_name_the_path_once])
