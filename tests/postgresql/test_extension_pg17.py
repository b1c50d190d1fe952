#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The extension against a real PostgreSQL 17, for the debug_io_direct
branch that Debian 12's PostgreSQL 15 cannot reach: in a Debian 13 root
(pg17-root.sh, cached) seen through an overlay in this test's own mount
namespace, liblcloud is built and installed with meson from the source tree
(bind-mounted read-only; the build stays in the overlay), the extension with
PGXS, and a server runs there as that root's postgres user, its data
directory and pg_wal on ext4 and a tablespace on XFS, both over loop
devices made here and bind-mounted in.

With debug_io_direct off, 'data', 'data,wal' and '"wal", WAL_INIT' (a
quoted, upper-case spelling the server accepts), each after a restart with
full_page_writes off, the I/O path lcloud_datadir() and lcloud_check() give
for relation pages and pg_wal is compared with how the server really opened
those files (O_DIRECT or not, from /proc/PID/fdinfo) and with its
SHOW debug_io_direct; the answers with `lcloudctl check` of the same chroot
build run as the server's user on that path; the startup messages with what
those answers demand (a WARNING with full_page_writes off unless untorn,
naming the path PostgreSQL writes on). A streaming standby with
debug_io_direct=data,wal must show pg_wal buffered: its walreceiver writes
without O_DIRECT, as the kernel shows."""
import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
sys.path.insert(0, HERE)
import pgserver as pg  # noqa: E402
from hostlib import main, mounted_fs, need_root, run, scratch_dir  # noqa: E402

SOURCE_ROOT = os.environ["SOURCE_ROOT"]
PG_BIN = "/usr/lib/postgresql/17/bin"
LCLOUDCTL = "/usr/local/bin/lcloudctl"  # the chroot's, built here
O_DIRECT = 0o40000
CLONE_NEWNS = 0x00020000
# Inside the chroot: the data directory and pg_wal on ext4, a tablespace on XFS.
DATADIR = "/ts/ext4/data"
TABLESPACES = {"ts_xfs": "/ts/xfs/ts", "ts_ext4": "/ts/ext4/ts"}
# debug_io_direct as written in postgresql.conf -> (relation pages, pg_wal) written with O_DIRECT
MODES = [("''", False, False), ("'data'", True, False), ("'data,wal'", True, True),
         ("'\"wal\", WAL_INIT'", False, True)]
LAB = {}


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


def in_root(args, user=None, check=True, timeout=600):
    """ARGS in the chroot, as root or USER (that root's user); returns the CompletedProcess."""
    cmd = ["chroot"] + (["--userspec=%s:%s" % (user, user)] if user else []) + [LAB["root"]] + list(args)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8", "HOME": "/root"}
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s%s" % (" ".join(args), p.returncode, p.stdout[-3000:],
                                                       p.stderr[-3000:]))
    return p


def chroot_user_ids(user):
    with open(LAB["root"] + "/etc/passwd") as f:
        for line in f:
            f = line.split(":")
            if f[0] == user:
                return int(f[2]), int(f[3])
    raise AssertionError("no %s user in the PostgreSQL 17 root" % user)


def build_inside():
    """liblcloud with meson into /usr/local, then the extension with PGXS (-Werror), all in the chroot."""
    # Debian's multiarch directory: where the chroot's pkg-config and ld.so look under /usr/local
    multiarch = in_root(["gcc", "-print-multiarch"]).stdout.strip()
    in_root(["meson", "setup", "--prefix=/usr/local", "--libdir=lib/" + multiarch, "-Dtests=false",
             "/build/lcloud", "/src"])
    in_root(["meson", "install", "-C", "/build/lcloud", "--quiet"])
    in_root(["ldconfig"])
    # with ../common, which the extension shares with the MariaDB plugin
    in_root(["cp", "-r", "/src/bindings/postgresql", "/build/extension"])
    in_root(["cp", "-r", "/src/bindings/common", "/build/common"])
    in_root(["rm", "-f"] + ["/build/extension/" + n for n in os.listdir(LAB["root"] + "/build/extension")
                            if n.endswith((".o", ".so", ".bc"))])
    for args in (["make", "-C", "/build/extension", "PG_CONFIG=%s/pg_config" % PG_BIN, "PG_CFLAGS=-Werror"],
                 ["make", "-C", "/build/extension", "PG_CONFIG=%s/pg_config" % PG_BIN, "install"]):
        p = in_root(args)
        assert "warning:" not in p.stderr, p.stderr


def lcloudctl_check(path, size, io_path):
    """`lcloudctl check` of the chroot's build as the server's user: the JSON document."""
    p = in_root([LCLOUDCTL, "check", "--no-confirm", "--format", "json", "-p", io_path, "-s", str(size), path],
                user=pg.PG_USER, check=False)
    assert p.stdout.strip(), "lcloudctl check %s: %s" % (path, p.stderr)
    return json.loads(p.stdout)


def lcloudctl_probe(path):
    p = in_root([LCLOUDCTL, "probe", "--no-signatures", "--format", "json", path], user=pg.PG_USER)
    return json.loads(p.stdout)["probes"][0]


def expected_row(path, size, io_path):
    """What a lcloud_datadir()/lcloud_check() row for PATH on IO_PATH must say, from lcloudctl."""
    doc = lcloudctl_check(path, size, io_path)
    probe = lcloudctl_probe(path)
    return pg.row_from_lcloudctl(doc, probe)


COLUMNS = ["kind", "tablespace", "path", "size", "io_path", "answer", "max_untorn_bytes", "reason", "evidence",
           "filesystem", "mount_point", "device"]


def datadir_rows():
    return [dict(zip(COLUMNS, r)) for r in LAB["server"].sql("SELECT * FROM lcloud_datadir()")]


def fd_flags(pid, under):
    """Open flags of the files under UNDER (a path in the chroot) that process PID has open."""
    return pg.fd_flags(pid, under, LAB["root"])


def how_the_server_opens(table):
    """(relation files under ts_xfs direct?, pg_wal direct?) from the kernel's record of a backend's
    open files, after it wrote a page of TABLE (in ts_xfs) and committed WAL."""
    s = LAB["server"]
    p = subprocess.Popen(s.psql_args(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    try:
        p.stdin.write("SELECT pg_backend_pid();\n")
        p.stdin.flush()
        pid = int(p.stdout.readline())
        p.stdin.write("INSERT INTO %s SELECT g FROM generate_series(1, 2000) g;\n"
                      "SELECT count(*) FROM %s;\n" % (table, table))
        p.stdin.flush()
        assert int(p.stdout.readline()) > 0
        data, wal = fd_flags(pid, TABLESPACES["ts_xfs"]), fd_flags(pid, DATADIR + "/pg_wal")
        assert data and wal, (data, wal)
        directs = [bool(f & O_DIRECT) for f in data.values()], [bool(f & O_DIRECT) for f in wal.values()]
        for files, flags in ((data, directs[0]), (wal, directs[1])):
            assert len(set(flags)) == 1, "mixed O_DIRECT: %s" % {k: oct(v) for k, v in files.items()}
        return directs[0][0], directs[1][0]
    finally:
        p.stdin.close()
        p.wait(timeout=60)


def wait_for_messages(start, count, what, seconds=60):
    return pg.wait_for_messages(LAB["server"], start, count, what, seconds)


def page_locations():
    """Where relation pages live, as the startup check names them (by pg_tablespace's names): (label, path)."""
    out = [("tablespace pg_default (%s/base)" % DATADIR, DATADIR + "/base"),
           ("tablespace pg_global (%s/global)" % DATADIR, DATADIR + "/global")]
    for name, path in TABLESPACES.items():
        out.append(("tablespace %s (%s)" % (name, path), path))
    return out


def messages_by_location(msgs, start):
    """(message, details, label, path) for each place relation pages live: exactly one line each, and
    its DEBUG1 details (the server runs at log_min_messages=debug1)."""
    out = []
    # each line's details come after it (they take more probes): wait for all of them
    details = pg.wait_for_messages(LAB["server"], start, len(msgs), "details", debug=True)
    for where, path in page_locations():
        mine = [m for m in msgs if " to %s " % where in m[1]]
        assert len(mine) == 1, (where, msgs)
        about = [m for m in details if m[1] == "lcloud: details for %s" % where]
        assert len(about) == 1, (where, details)
        out.append((mine[0], about[0], where, path))
    return out


def assert_startup_message(msg, details, where, path, io_path, full_page_writes):
    """One startup/reload line and its DEBUG1 details against lcloudctl's verdict for PATH on IO_PATH."""
    severity, text, detail, hint = msg
    assert detail is None and hint is None, msg  # one line; the details are DEBUG1's
    detail, hint = details[2], details[3]
    want = expected_row(path, 8192, io_path)
    storage = "File system %s mounted at %s, device %s" % (want["filesystem"], want["mount_point"], want["device"])
    fpw = "on" if full_page_writes else "off"
    if want["answer"] == "untorn":
        assert severity == "LOG", msg
        assert text.startswith("lcloud: full_page_writes is %s; 8192-byte page writes to %s are untorn on the %s path"
                               % (fpw, where, io_path)), msg
        assert detail == "%s: %s." % (storage, want["reason"]), msg
        return
    if full_page_writes:
        assert severity == "LOG", msg
        assert text == ("lcloud: full_page_writes is on and needed: 8192-byte page writes to %s are not proved "
                        "untorn (answer: %s): %s" % (where, want["answer"], want["reason"])), msg
    else:
        assert severity == "WARNING", msg
        assert text == ("lcloud: full_page_writes is off, but 8192-byte page writes to %s are not proved untorn "
                        "(answer: %s): %s; turn full_page_writes on" % (where, want["answer"], want["reason"])), msg
    assert detail == "%s; PostgreSQL writes these pages on the %s path: %s." % (storage, io_path, want["reason"]), msg
    # what would help: O_DIRECT is named as a change only where the server does not use it yet
    direct = expected_row(path, 8192, "plain_direct")
    if direct["answer"] == "no":
        setting = "as now" if io_path == "plain_direct" else "debug_io_direct=data, a developer option"
        assert "with pages written with O_DIRECT (%s)" % setting in hint, (msg, setting)


def check_mode(setting, data_direct, wal_direct):
    """Restart with debug_io_direct = SETTING and full_page_writes off; everything must agree."""
    s = LAB["server"]
    s.configure(debug_io_direct=setting, full_page_writes="off", log_min_messages="debug1")
    start = len(s.log_lines())
    s.restart()
    # SHOW debug_io_direct, quoted as in postgresql.conf (psql prints no row for an empty one)
    shown = s.sql("SELECT quote_literal(current_setting('debug_io_direct'))")[0][0]
    assert shown == setting, (shown, setting)
    # the kernel's word on how PostgreSQL 17 opens relation files and WAL with this setting
    assert how_the_server_opens("pages") == (data_direct, wal_direct), setting
    data_path = "plain_direct" if data_direct else "buffered"
    wal_path = "plain_direct" if wal_direct else "buffered"

    rows = datadir_rows()
    builtin = (("pg_default", "base"), ("pg_global", "global"))
    want = [("data_directory", None, DATADIR, "buffered")] + \
        [("tablespace", n, DATADIR + "/" + d, data_path) for n, d in builtin] + \
        [("tablespace", n, p, data_path) for n, p in TABLESPACES.items()] + \
        [("wal", None, DATADIR + "/pg_wal", wal_path)]
    assert [(r["kind"], r["tablespace"], r["path"], r["io_path"]) for r in rows] == want, (setting, rows)
    for r in rows:
        expect = expected_row(r["path"], int(r["size"]), r["io_path"])
        for k, v in expect.items():
            assert r[k] == v, (setting, r["path"], k, r[k], v)
    by_name = {r["tablespace"]: r for r in rows}
    assert (by_name["ts_xfs"]["filesystem"], by_name["ts_xfs"]["device"]) == ("xfs", LAB["devices"]["xfs"])
    assert (by_name["ts_ext4"]["filesystem"], by_name["ts_ext4"]["device"]) == ("ext4", LAB["devices"]["ext4"])

    # lcloud_check() without an io_path: the path this server writes data pages with
    row = dict(zip(COLUMNS[2:], s.sql("SELECT * FROM lcloud_check('%s')" % TABLESPACES["ts_xfs"])[0]))
    assert row["io_path"] == data_path and row["size"] == "8192", row
    assert row["answer"] == expected_row(TABLESPACES["ts_xfs"], 8192, data_path)["answer"], row

    msgs = wait_for_messages(start, 4, "startup with debug_io_direct=%s" % setting)
    for msg, details, where, path in messages_by_location(msgs, start):
        assert_startup_message(msg, details, where, path, data_path, full_page_writes=False)
    LAB["modes_checked"].append(setting)


def make_test(setting, data_direct, wal_direct):
    def test():
        check_mode(setting, data_direct, wal_direct)
    test.__name__ = "test_debug_io_direct_%s" % ("_".join(w for w in "".join(
        c if c.isalnum() else " " for c in setting.lower()).split()) or "off")
    return test


def test_reload_with_full_page_writes_on_names_the_direct_path():
    """With debug_io_direct=data and full_page_writes turned on by a reload: LOG lines for plain_direct."""
    s = LAB["server"]
    s.configure(debug_io_direct="'data'", full_page_writes="off", log_min_messages="debug1")
    start = len(s.log_lines())
    s.restart()
    wait_for_messages(start, 4, "startup with debug_io_direct=data")
    start = len(s.log_lines())
    s.sql("ALTER SYSTEM SET full_page_writes = on")
    s.sql("SELECT pg_reload_conf()")
    msgs = wait_for_messages(start, 4, "reload with full_page_writes on")
    for msg, details, where, path in messages_by_location(msgs, start):
        assert_startup_message(msg, details, where, path, "plain_direct", full_page_writes=True)


def test_standby_wal_is_buffered_whatever_debug_io_direct_says():
    """A streaming standby with debug_io_direct=data,wal: its WAL arrives through the walreceiver,
    which PostgreSQL never lets use O_DIRECT (its writes are unaligned): pg_wal is buffered there
    while recovery lasts, relation pages still plain_direct."""
    primary = LAB["server"]
    standby_dir = "/ts/ext4/standby"
    uid, gid = chroot_user_ids(pg.PG_USER)
    mapping = []
    for path in [standby_dir] + ["%s_standby" % p for p in TABLESPACES.values()]:
        os.mkdir(LAB["root"] + path, 0o700)
        os.chown(LAB["root"] + path, uid, gid)
    for path in TABLESPACES.values():
        mapping.append("--tablespace-mapping=%s=%s_standby" % (path, path))
    primary.as_postgres([PG_BIN + "/pg_basebackup", "-h", primary.sockdir, "-p", str(primary.port), "-U", pg.PG_USER,
                         "-D", standby_dir, "-R", "--no-sync"] + mapping)
    standby = pg.Server(PG_BIN, standby_dir, primary.sockdir, primary.env, primary.psql_prog, root=LAB["root"])
    standby.port, standby.logfile = primary.port + 1, primary.sockdir + "/standby.log"
    standby.configure(port=standby.port, debug_io_direct="'data,wal'")
    standby.start()
    try:
        end = time.monotonic() + 60
        while True:
            rcv = standby.sql("SELECT pid, status FROM pg_stat_wal_receiver")
            if rcv and rcv[0][1] == "streaming":
                break
            assert time.monotonic() < end, "the standby does not stream: %s" % rcv
            time.sleep(0.2)
        walreceiver = int(rcv[0][0])
        assert standby.sql("SELECT pg_is_in_recovery(), current_setting('debug_io_direct')") == [["t", "data,wal"]]
        primary.sql("INSERT INTO pages SELECT g FROM generate_series(1, 2000) g")
        end = time.monotonic() + 30
        while not fd_flags(walreceiver, standby_dir + "/pg_wal"):
            assert time.monotonic() < end, "the walreceiver has no WAL file open"
            primary.sql("INSERT INTO pages VALUES (1)")
            time.sleep(0.2)
        flags = fd_flags(walreceiver, standby_dir + "/pg_wal")
        assert not any(f & O_DIRECT for f in flags.values()), {k: oct(v) for k, v in flags.items()}
        rows = [dict(zip(COLUMNS, r)) for r in standby.sql("SELECT * FROM lcloud_datadir()")]
        assert [(r["kind"], r["io_path"]) for r in rows] == \
            [("data_directory", "buffered")] + [("tablespace", "plain_direct")] * 4 + [("wal", "buffered")], rows
        wal = rows[-1]
        expect = expected_row(wal["path"], int(wal["size"]), "buffered")
        for k, v in expect.items():
            assert wal[k] == v, (k, wal[k], v)
    finally:
        standby.stop()
    for pid, severity, text in standby.log_lines():
        if text != "terminating walreceiver process due to administrator command":  # the fast stop's
            assert severity not in ("PANIC", "FATAL", "ERROR"), (severity, text)


def test_server_log_has_no_crash_and_no_error():
    assert len(LAB["modes_checked"]) == len(MODES), LAB["modes_checked"]
    for pid, severity, text in LAB["server"].log_lines():
        assert severity not in ("PANIC", "FATAL", "ERROR"), (severity, text)
        assert "terminated by signal" not in text, text


def kill_leftovers(root):
    """Processes still running in ROOT after the server was stopped: killed, and the test fails."""
    left = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink("/proc/%s/root" % pid) == root:
                left.append(int(pid))
        except OSError:
            continue
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, "processes left running in %s: %s" % (root, left)


def setup(stack):
    need_root()
    p = run([os.path.join(HERE, "pg17-root.sh")])
    assert p.returncode == 0, "pg17-root.sh failed: %s" % p.stderr[-3000:]
    cached = p.stdout.strip().splitlines()[-1]
    private_mount_namespace()
    d = stack.enter_context(scratch_dir())
    root = LAB["root"] = d + "/root"
    for sub in ("upper", "work"):
        os.mkdir(os.path.join(d, sub))
    # the cached root stays as it is: everything this test writes there lands in d/upper
    mount(stack, ["-t", "overlay", "lcloud-pg17", "-o",
                  "lowerdir=%s/root,upperdir=%s/upper,workdir=%s/work" % (cached, d, d)], root)
    mount(stack, ["-t", "proc", "proc"], root + "/proc")
    mount(stack, ["--rbind", "/sys"], root + "/sys", recursive=True)
    mount(stack, ["--rbind", "/dev"], root + "/dev", recursive=True)
    if os.path.isdir("/run/udev"):
        mount(stack, ["--bind", "-o", "ro", "/run/udev"], root + "/run/udev")
    mount(stack, ["--bind", "-o", "ro", SOURCE_ROOT], root + "/src")
    build_inside()

    xdev, xmnt = stack.enter_context(mounted_fs("xfs"))
    edev, emnt = stack.enter_context(mounted_fs("ext4"))
    LAB["devices"] = {"xfs": xdev, "ext4": edev}
    mount(stack, ["--bind", xmnt], root + "/ts/xfs")
    mount(stack, ["--bind", emnt], root + "/ts/ext4")
    uid, gid = chroot_user_ids(pg.PG_USER)
    for path in list(TABLESPACES.values()) + [DATADIR, "/sock"]:
        os.mkdir(root + path, 0o700)
        os.chown(root + path, uid, gid)

    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}  # chroot is in sbin
    server = pg.Server(PG_BIN, DATADIR, "/sock", env, PG_BIN + "/psql", root=root)
    LAB["server"] = server
    LAB["modes_checked"] = []
    stack.callback(kill_leftovers, root)  # after the server's stop, before the unmounting
    stack.enter_context(pg.running(server))
    server.sql("CREATE EXTENSION lcloud")
    for name, path in TABLESPACES.items():
        server.sql("CREATE TABLESPACE %s LOCATION '%s'" % (name, path))
    server.sql("CREATE TABLE pages (n int) TABLESPACE ts_xfs")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, pg.stop_on_sigterm)  # a timeout still stops the server and unmounts
    with contextlib.ExitStack() as stack:
        setup(stack)
        main([make_test(*m) for m in MODES] +
             [test_reload_with_full_page_writes_on_names_the_direct_path,
              test_standby_wal_is_buffered_whatever_debug_io_direct_says, test_server_log_has_no_crash_and_no_error])
