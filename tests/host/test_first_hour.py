#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a new user meets first, as the README's examples lead them there:
torture run refused on a target without atomic writes names the path that
runs (--path plain_direct), and that path runs with a warning that nothing
is promised at that page size; write on a file that does not exist says how
to create it; a fingerprint saved with a relative path is diffed from another
folder, and export labels a relative path by its absolute form; check
answers on every path by default and for the database's own with --for."""
import json
import os
import subprocess

from hostlib import LCLOUDCTL, lcloudctl, main, mounted_fs, need_root, scratch_dir


def test_torture_run_names_the_plain_path():
    need_root()
    # ext4 without bigalloc: no RWF_ATOMIC for 16 KiB pages
    with mounted_fs("ext4", 256 << 20) as (dev, mnt):
        target = os.path.join(mnt, "pages")
        p = lcloudctl("torture", "run", target, "--pages", "8", "--record", os.path.join(mnt, "r1"))
        assert p.returncode == 7, (p.returncode, p.stderr)
        assert "pass --path plain_direct" in p.stderr, p.stderr
        p = lcloudctl("torture", "run", target, "--pages", "8", "--path", "plain_direct", "--record",
                      os.path.join(mnt, "r2"))
        assert p.returncode == 0, p.stderr
        assert "warning: 16 KiB pages on the plain_direct path" in p.stderr, p.stderr
        assert "not promised untorn" in p.stderr, p.stderr


def test_write_says_how_to_create_the_file():
    with scratch_dir() as d:
        path = os.path.join(d, "new")
        p = lcloudctl("write", "--offset", "0", "--length", "4096", "--pattern", "1", path)
        assert p.returncode == 3, (p.returncode, p.stderr)
        assert "create the file first (truncate -s 1M %s" % path in p.stderr, p.stderr
        assert not os.path.exists(path)


def test_check_answers_for_the_database():
    """XFS over a loop device: RWF_ATOMIC writes 16 KiB pages whole (the kernel's software path), InnoDB's
    O_DIRECT page writes are not kept whole by a loop device. The default answer shows every path and sends the
    DBA to --for; --for mariadb answers for InnoDB's own path and says no."""
    need_root()
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        p = lcloudctl("check", "--size", "16K", mnt)
        lines = p.stdout.splitlines()
        assert p.returncode == 0 and lines[0].startswith(mnt + ": untorn on rwf_atomic"), (p.returncode, p.stdout)
        # a directory's rows: no passthrough, which never writes a file
        rows = {l.split()[0]: l.split()[1] for l in lines[1:4]}
        assert rows == {"rwf_atomic": "untorn", "plain_direct": "no", "buffered": "no"}, lines
        assert "--for mysql or --for postgresql" in lines[4], lines
        doc = json.loads(lcloudctl("check", "--size", "16K", "--format", "json", mnt).stdout)
        assert [e["io_path"] for e in doc["paths"]] == ["rwf_atomic", "passthrough", "plain_direct", "buffered"]
        assert doc["answer"] == "untorn" and doc["io_path"] == "rwf_atomic", doc
        for db, path in (("mariadb", "plain_direct"), ("mysql", "plain_direct"), ("postgresql", "buffered")):
            p = lcloudctl("check", "--for", db, mnt)
            assert p.returncode == 6, (db, p.returncode, p.stdout)
            assert "not untorn on %s" % path in p.stdout, p.stdout
            # the same answer as the one path asked by name, at the database's page size
            same = lcloudctl("check", "--path", path, "--size", "8K" if db == "postgresql" else "16K", mnt)
            assert same.returncode == p.returncode, (same.stdout, p.stdout)
        assert lcloudctl("check", "--for", "mysql", "--path", "buffered", mnt).returncode == 2


def run_in(folder, *args):
    return subprocess.run([os.path.realpath(LCLOUDCTL)] + list(args), capture_output=True, text=True, cwd=folder)


def test_fingerprint_and_export_from_another_folder():
    with scratch_dir() as d:
        data = os.path.join(d, "data")
        other = os.path.join(d, "elsewhere")
        os.mkdir(data)
        os.mkdir(other)
        with open(os.path.join(data, "f"), "wb") as f:
            f.write(b"\0" * 65536)
        # saved with a path relative to data/, compared from elsewhere/
        p = run_in(data, "probe", "--save", os.path.join(d, "f.fp"), "f")
        assert p.returncode == 0, p.stderr
        with open(os.path.join(d, "f.fp")) as f:
            assert json.load(f)["probe"]["path"] == os.path.join(data, "f")
        p = run_in(other, "diff", os.path.join(d, "f.fp"))
        assert p.returncode in (0, 12), (p.returncode, p.stderr)
        # the exported label names the file, not "f"
        p = run_in(data, "export", "--prometheus", "f")
        assert p.returncode == 0, p.stderr
        assert 'target="%s"' % os.path.join(data, "f") in p.stdout, p.stdout[:500]
        assert 'target="f"' not in p.stdout


if __name__ == "__main__":
    main([test_torture_run_names_the_plain_path, test_write_says_how_to_create_the_file,
          test_check_answers_for_the_database,
          test_fingerprint_and_export_from_another_folder])
