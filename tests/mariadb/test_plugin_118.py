#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The plugin against a real MariaDB 11.8 (Debian 13's, the crash lab's
server): a plugin must be built against the headers of the server that
loads it, so in a Debian 13 root (md118-root.sh, cached) seen through an
overlay in this test's own mount namespace, liblcloud is built and
installed with meson from the source tree (bind-mounted read-only; the
build stays in the overlay) and the plugin with its Makefile, and servers
run there as that root's mysql user with data directories on XFS and ext4
over loop devices made here and bind-mounted in.

The same checks as test_plugin.py, for 11.8's settings: innodb_doublewrite
is an enumeration (ON, OFF, fast) there, and innodb_flush_method is mapped
to innodb_data_file_buffering, which the plugin reads instead; the lines
and status variables are compared with `lcloudctl check` of the chroot's
build run as the chroot's mysql user, the I/O path with the O_DIRECT flag
the kernel shows on the server's descriptors, and lcloud_enforce must
refuse a start with doublewrite OFF and allow one with it ON."""
import contextlib
import ctypes
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
sys.path.insert(0, HERE)
import mdserver as md  # noqa: E402
import test_plugin as tp  # noqa: E402
from hostlib import main, mounted_fs, need_root, run, scratch_dir  # noqa: E402

SOURCE_ROOT = os.environ["SOURCE_ROOT"]
LCLOUDCTL = "/usr/local/bin/lcloudctl"  # the chroot's, built here
CLONE_NEWNS = 0x00020000
LAB = tp.LAB


def private_mount_namespace():
    """Every mount made from here on is this process's (and its children's) alone, and goes with it."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    run(["mount", "--make-rprivate", "/"], check=True)


def mount(stack, args, target, recursive=False):
    os.makedirs(target, exist_ok=True)
    run(["mount"] + args + [target], check=True)

    def undo():
        if run(["umount"] + (["-R"] if recursive else []) + [target]).returncode != 0:
            run(["umount", "-l", target])
    stack.callback(undo)


def in_root(args, user=None):
    cmd = ["chroot"] + (["--userspec=%s:%s" % (user, user)] if user else []) + [LAB["root"]] + list(args)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8", "HOME": "/root"}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)


def in_root_ok(args, user=None):
    p = in_root(args, user)
    assert p.returncode == 0, "%s failed (%d): %s%s" % (" ".join(args), p.returncode, p.stdout[-3000:],
                                                       p.stderr[-3000:])
    return p


def build_inside():
    """liblcloud with meson into /usr/local, then the plugin with its Makefile (-Werror), in the chroot."""
    multiarch = in_root_ok(["gcc", "-print-multiarch"]).stdout.strip()
    in_root_ok(["meson", "setup", "--prefix=/usr/local", "--libdir=lib/" + multiarch, "-Dtests=false",
                "/build/lcloud", "/src"])
    in_root_ok(["meson", "install", "-C", "/build/lcloud", "--quiet"])
    in_root_ok(["ldconfig"])
    in_root_ok(["cp", "-r", "/src/bindings/mariadb", "/build/plugin"])
    in_root_ok(["cp", "-r", "/src/bindings/common", "/build/common"])  # shared with the PostgreSQL extension
    in_root_ok(["make", "-C", "/build/plugin", "clean"])
    p = in_root_ok(["make", "-C", "/build/plugin", "CFLAGS=-O2 -g -Werror"])
    assert "warning:" not in p.stderr, p.stderr
    os.makedirs(LAB["root"] + "/plugins", 0o755)
    in_root_ok(["cp", "/build/plugin/lcloud.so", "/plugins/lcloud.so"])


def chroot_lcloudctl(args):
    return in_root([LCLOUDCTL] + list(args), user=md.MD_USER)


def test_server_is_11_8():
    version = in_root_ok(["mariadbd", "--version"]).stdout
    assert " 11.8." in version, version


def test_xfs_doublewrite_off_and_on():
    tp.check_stack("xfs")


def test_ext4_doublewrite_off_and_on():
    tp.check_stack("ext4")


def test_buffered_data_files_are_checked_as_buffered():
    """innodb_data_file_buffering=ON (what 11.8 makes of innodb_flush_method=fsync): the page cache."""
    tp.check_stack("ext4", io_path="buffered", options=("--innodb-data-file-buffering=ON",))


def setup(stack):
    need_root()
    p = run([os.path.join(HERE, "md118-root.sh")])
    assert p.returncode == 0, "md118-root.sh failed: %s" % p.stderr[-3000:]
    cached = p.stdout.strip().splitlines()[-1]
    private_mount_namespace()
    d = stack.enter_context(scratch_dir())
    root = LAB["root"] = d + "/root"
    for sub in ("upper", "work"):
        os.mkdir(os.path.join(d, sub))
    mount(stack, ["-t", "overlay", "lcloud-md118", "-o",
                  "lowerdir=%s/root,upperdir=%s/upper,workdir=%s/work" % (cached, d, d)], root)
    mount(stack, ["-t", "proc", "proc"], root + "/proc")
    mount(stack, ["--rbind", "/sys"], root + "/sys", recursive=True)
    mount(stack, ["--rbind", "/dev"], root + "/dev", recursive=True)
    if os.path.isdir("/run/udev"):
        mount(stack, ["--bind", "-o", "ro", "/run/udev"], root + "/run/udev")
    mount(stack, ["--bind", "-o", "ro", SOURCE_ROOT], root + "/src")
    build_inside()
    tp.lcloudctl_as_server_user = chroot_lcloudctl
    for name in ("xfs", "ext4"):
        device, mnt = stack.enter_context(mounted_fs(name))
        inside = "/md/" + name
        mount(stack, ["--bind", mnt], root + inside)
        md.install_db(inside + "/data", root)
        server = md.Server("/md/servers", name, inside + "/data", "/plugins", None, root=root)
        LAB[name] = (name, device, inside, server)
        stack.callback(server.stop)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, md.stop_on_sigterm)
    with contextlib.ExitStack() as stack:
        setup(stack)
        main([test_server_is_11_8, test_xfs_doublewrite_off_and_on, test_ext4_doublewrite_off_and_on,
              test_buffered_data_files_are_checked_as_buffered,
              tp.test_enforce_refuses_doublewrite_off_then_starts_with_it_on])
