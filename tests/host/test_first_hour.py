#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a new user meets first, as the README's examples lead them there:
torture run refused on a target without atomic writes names the path that
runs (--path plain_direct), and that path runs with a warning that nothing
is promised at that page size; write on a file that does not exist says how
to create it."""
import os

from hostlib import lcloudctl, main, mounted_fs, need_root, scratch_dir


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


if __name__ == "__main__":
    main([test_torture_run_names_the_plain_path, test_write_says_how_to_create_the_file])
