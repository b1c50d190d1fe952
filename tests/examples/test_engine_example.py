#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The storage engine examples of lcloud_plan_page_writes(3) and
lcloud_queue_open(3), taken from the man pages themselves, compiled against
the built library and run on real files: on XFS over loop (Linux 6.16+
software atomic writes) the first must turn the doublewrite buffer off and
write its page with RWF_ATOMIC; on ext4 it must keep it on. The expected
decision is what the tests' own statx says. The second writes a page of a
data file it keeps open itself through a queue opened with
LCLOUD_QUEUE_OWN_FILE; the same program without that flag is refused, the
file being open elsewhere (in the engine's own descriptor), and writes
nothing."""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
from hostlib import main, mounted_fs, own_statx  # noqa: E402

SRC = os.environ["SOURCE_ROOT"]
BUILD_LIB = os.environ["LIBDIR"]


def example_source(page="lcloud_plan_page_writes.3"):
    with open(os.path.join(SRC, "man", page)) as f:
        roff = f.read()
    examples = roff.split(".SH EXAMPLES")[1]
    code = re.search(r"^\.EX\n(.*?)^\.EE", examples, re.S | re.M).group(1)
    # roff escapes in the listing: \e is a backslash, \- a minus
    return code.replace("\\e", "\\").replace("\\-", "-")


def build(tmp, source=None, name="engine"):
    src = os.path.join(tmp, name + ".c")
    with open(src, "w") as f:
        f.write(source or example_source())
    exe = os.path.join(tmp, name)
    subprocess.run(["cc", "-Wall", "-Werror", "-o", exe, src, "-I", os.path.join(SRC, "include"),
                    "-L", BUILD_LIB, "-llcloud"], check=True)
    return exe


def run(exe, path):
    p = subprocess.run([exe, path], capture_output=True, text=True, env=dict(os.environ, LD_LIBRARY_PATH=BUILD_LIB))
    assert p.returncode == 0, (p.stdout, p.stderr)
    return p.stdout.strip()


def test_example_decides_like_statx():
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp)
        with mounted_fs("xfs") as (dev, mnt):
            path = os.path.join(mnt, "ibdata1")
            out = run(exe, path)
            untorn = own_statx(path).get("stx_atomic_write_unit_max", 0) >= 16384
            assert out.startswith("doublewrite off, path rwf_atomic") == untorn, out
            if untorn:
                with open(path, "rb") as f:
                    assert f.read(16384) == b"\x5a" * 16384
        with mounted_fs("ext4") as (dev, mnt):
            out = run(exe, os.path.join(mnt, "ibdata1"))
            assert out.startswith("doublewrite on"), out


def test_own_file_example_writes_and_needs_the_flag():
    source = example_source("lcloud_queue_open.3")
    assert "LCLOUD_QUEUE_WRITE | LCLOUD_QUEUE_OWN_FILE" in source
    with tempfile.TemporaryDirectory() as tmp:
        exe = build(tmp, source, "own")
        without = build(tmp, source.replace("LCLOUD_QUEUE_WRITE | LCLOUD_QUEUE_OWN_FILE", "LCLOUD_QUEUE_WRITE"),
                        "not-own")
        with mounted_fs("xfs") as (dev, mnt):
            path = os.path.join(mnt, "ibdata1")
            out = run(exe, path)
            untorn = own_statx(path).get("stx_atomic_write_unit_max", 0) >= 16384
            assert out == "wrote page 1 of %s%s" % (path, " untorn" if untorn else ""), out
            with open(path, "rb") as f:
                assert f.read() == bytes(16384) + b"\x5a" * 16384 + bytes(32768)
            os.unlink(path)
            p = subprocess.run([without, path], capture_output=True, text=True,
                               env=dict(os.environ, LD_LIBRARY_PATH=BUILD_LIB))
            assert p.returncode == 1 and "is open elsewhere: this process itself" in p.stderr, (p.stdout, p.stderr)
            with open(path, "rb") as f:
                assert f.read() == bytes(4 * 16384), "a refused queue wrote"


if __name__ == "__main__":
    main([test_example_decides_like_statx, test_own_file_example_writes_and_needs_the_flag])
