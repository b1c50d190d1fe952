#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What users point lcloudctl at, and what goes wrong: directories left
unchanged, symlinks, wrong kinds of files, missing paths, usage errors,
and unprivileged runs that report what they can and name what needs root."""
import json
import os
import stat
import subprocess

from hostlib import LCLOUDCTL, lcloudctl, layer, main, mounted_fs, notes, probe_json, scratch_dir

NOBODY = "nobody"


def snapshot(d):
    st = os.stat(d)
    return sorted(os.listdir(d)), st.st_mtime_ns, st.st_ctime_ns, st.st_nlink


def test_directory_probe_leaves_it_unchanged():
    with mounted_fs("xfs") as (dev, mnt):
        d = os.path.join(mnt, "datadir")
        os.mkdir(d)
        open(os.path.join(d, "existing"), "w").close()
        before = snapshot(d)
        free_before = os.statvfs(mnt).f_bfree
        probe = probe_json(d)
        assert probe["target"] == "directory"
        assert notes(probe, "tmpfile-refused") == [] and notes(probe, "needs-write-access") == []
        assert snapshot(d) == before
        assert os.statvfs(mnt).f_bfree == free_before


def test_symlink_followed_and_refused_with_no_follow():
    with scratch_dir() as d:
        target = os.path.join(d, "file")
        open(target, "w").close()
        link = os.path.join(d, "link")
        os.symlink(target, link)
        probe = probe_json(link)
        assert probe["path"] == link and probe["resolved_path"] == target
        assert probe["target"] == "regular"
        p = lcloudctl("probe", "--no-follow", link)
        assert p.returncode == 5, (p.returncode, p.stderr)
        assert "symbolic link" in p.stderr


def test_errors_say_what_and_what_to_do():
    with scratch_dir() as d:
        missing = os.path.join(d, "no-such-file")
        p = lcloudctl("probe", missing)
        assert p.returncode == 3 and "No such file" in p.stderr and "hint:" in p.stderr, p.stderr

        p = lcloudctl("probe", "/dev/null")
        assert p.returncode == 5 and "not an NVMe generic namespace" in p.stderr, p.stderr

        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        p = lcloudctl("probe", fifo)
        assert p.returncode == 5 and "FIFOs and sockets" in p.stderr, p.stderr

        # one bad path does not hide the good ones; JSON carries the error
        p = lcloudctl("probe", "--format", "json", missing, d)
        assert p.returncode == 3
        doc = json.loads(p.stdout)["probes"]
        assert doc[0]["error"]["errno"] == 2 and doc[0]["path"] == missing
        assert doc[1]["target"] == "directory"

    for args in (["probe"], ["probe", "-o", "yaml", "/"], ["frobnicate"], [], ["list", "-o", "json"],
                 ["list", "--format", "yaml"]):
        p = lcloudctl(*args)
        assert p.returncode == 2, (args, p.returncode)
        assert p.stderr.strip(), args
    assert lcloudctl("--version").stdout.startswith("lcloudctl ")
    for args in (["--help"], ["probe", "--help"], ["list", "--help"]):
        p = lcloudctl(*args)
        assert p.returncode == 0 and "Usage:" in p.stdout


def test_unprivileged_reports_what_it_can():
    with mounted_fs("xfs") as (dev, mnt):
        data = os.path.join(mnt, "data")
        with open(data, "w") as f:
            f.write("x")
        os.chmod(data, 0o600)  # unreadable for nobody: O_PATH probing still works
        probe = probe_json(data, user=NOBODY)
        fs = layer(probe, "filesystem")
        root_probe = probe_json(data)
        assert fs["facts"]["stx_atomic_write_unit_max"] == layer(root_probe, "filesystem")["facts"]["stx_atomic_write_unit_max"]
        # signatures need to open the device: named, not silently missing
        needs = notes(probe, "needs-root")
        assert needs and "run as root" in needs[0]["message"], probe["notes"]
        assert "signature_type" not in layer(probe, "loop")["facts"]

        # a directory nobody may write to: probed as itself, with the reason
        d = os.path.join(mnt, "rootonly")
        os.mkdir(d)
        os.chmod(d, 0o755)
        probe = probe_json(d, user=NOBODY)
        refused = notes(probe, "needs-write-access")
        assert refused and refused[0]["severity"] == "needs-root", probe["notes"]

        # a folder nobody may search: exit 4 and a hint
        secret = os.path.join(mnt, "secret")
        os.mkdir(secret)
        os.chmod(secret, 0o700)
        open(os.path.join(secret, "f"), "w").close()
        p = lcloudctl("probe", os.path.join(secret, "f"), user=NOBODY)
        assert p.returncode == 4 and "Permission denied" in p.stderr and "run as root" in p.stderr, p.stderr

        # the block device itself: sysfs needs no privileges
        probe = probe_json(dev, user=NOBODY)
        assert probe["layers"][0]["facts"]["logical_block_size"] == 512


def test_check_of_a_file_and_what_needs_root():
    """check of a file on a loop device: no passthrough row (NVMe passthrough never writes a file), every
    reason whole; JSON keeps the four paths. As nobody, write and read of the device say they need root."""
    with mounted_fs("xfs") as (dev, mnt):
        data = os.path.join(mnt, "data")
        with open(data, "wb") as f:
            f.truncate(1 << 20)
        os.chmod(data, 0o644)
        p = lcloudctl("check", data, "--size", "16K")
        assert p.returncode in (0, 6), (p.returncode, p.stderr)
        rows = [line.split()[0] for line in p.stdout.splitlines()[1:] if line.startswith("  ")]
        assert rows == ["rwf_atomic", "plain_direct", "buffered"], p.stdout
        assert "NVMe" not in p.stdout and "namespace" not in p.stdout, p.stdout
        doc = json.loads(lcloudctl("check", data, "--size", "16K", "--format", "json").stdout)
        assert [e["io_path"] for e in doc["paths"]] == ["rwf_atomic", "passthrough", "plain_direct", "buffered"]
        # the device itself keeps its passthrough row
        p = lcloudctl("check", dev, "--size", "4K")
        assert "  passthrough " in p.stdout, p.stdout
        # what only root (or the device's group) may do says so
        for args, verb in ((["write", dev, "-O", "0", "-l", "4K", "-p", "1"], "writing"),
                           (["read", dev, "-O", "0", "-l", "4K", "--out", "/dev/null"], "reading")):
            p = lcloudctl(*args, user=NOBODY)
            assert p.returncode == 4 and "Permission denied" in p.stderr, (args, p.returncode, p.stderr)
            assert "hint: %s %s needs root" % (verb, dev) in p.stderr and "sudo" in p.stderr, p.stderr
        # as root the same refusal is no permission error and names no root
        p = lcloudctl("write", dev, "-O", "0", "-l", "4K", "-p", "1")
        assert p.returncode == 7 and "needs root" not in p.stderr, (p.returncode, p.stderr)


def test_unlinked_file_through_proc_fd():
    """/proc/self/fd/N of an open, unlinked file opens in the kernel: probe and check it, say
    which file it is, and confirm nothing beside it (it has no directory any more)."""
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        path = os.path.join(mnt, "ibdata1")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            os.unlink(path)
            assert os.stat("/proc/self/fd/%d" % fd).st_nlink == 0, "the kernel opens the unlinked file"
            for args in (["check", "--size", "4K"], ["probe", "--confirm", "--format", "json"]):
                p = subprocess.run([LCLOUDCTL] + args + ["/proc/self/fd/%d" % fd], pass_fds=(fd,),
                                   capture_output=True, text=True)
                assert p.returncode == 0, (args, p.returncode, p.stdout, p.stderr)
            probe = json.loads(p.stdout)["probes"][0]
            assert "(deleted)" in probe["resolved_path"], probe["resolved_path"]
            fs = layer(probe, "filesystem")
            assert "live_rwf_atomic_max_bytes" in fs["unavailable"], fs
        finally:
            os.close(fd)


if __name__ == "__main__":
    main([test_directory_probe_leaves_it_unchanged, test_symlink_followed_and_refused_with_no_follow,
          test_errors_say_what_and_what_to_do, test_unprivileged_reports_what_it_can,
          test_check_of_a_file_and_what_needs_root, test_unlinked_file_through_proc_fd])
