#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The write guard against the real kernel, as an attacker or a busy system
would meet it: a mount at a path longer than any fixed buffer is seen by
probe and by the guard."""
import json
import os

from hostlib import layer, lcloudctl, loop_device, main, need_root, probe_json, run, scratch_dir


def write(path, offset, length, *extra):
    return lcloudctl("write", "--offset", str(offset), "--length", str(length), *extra, path)


def test_mount_at_long_path():
    need_root()
    with scratch_dir() as d, loop_device(os.path.join(d, "img"), 64 << 20) as dev:
        run(["mkfs.ext4", "-q", "-F", dev], check=True)
        mnt = d
        while len(mnt) < 1200:
            mnt = os.path.join(mnt, "m" * 200)
        os.makedirs(mnt)
        assert len(mnt) >= 1200
        run(["mount", dev, mnt], check=True)
        try:
            path = os.path.join(mnt, "f")
            with open(path, "w") as f:
                f.write("x")
            p = probe_json(path)
            fs = layer(p, "filesystem")
            assert fs["facts"]["mount_point"] == mnt, fs["facts"]["mount_point"]
            assert fs["facts"]["mount_source"] == dev, fs["facts"]["mount_source"]
            assert not [n for n in p["notes"] if n["code"] in ("mount-not-found", "mountinfo-unparsed")], p["notes"]
            w = write(dev, 0, 4096, "--pattern", "0")
            assert w.returncode == 7 and "mounted" in w.stderr and mnt in w.stderr, w.stderr
        finally:
            run(["umount", mnt])


if __name__ == "__main__":
    main([test_mount_at_long_path])
