#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a new user meets first, as the README's examples lead them there:
torture run refused on a target without atomic writes names the path that
runs (--path plain_direct), and that path runs with a warning that nothing
is promised at that page size; write on a file that does not exist says how
to create it; a fingerprint saved with a relative path is diffed from another
folder, and export labels a relative path by its absolute form."""
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
          test_fingerprint_and_export_from_another_folder])
