#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The PostgreSQL extension against a real server started here: liblcloud
installed with `meson install` into a scratch prefix, the extension built
with PGXS through `pkg-config lcloud` and `make install`ed into a private
copy of the server's directories, a cluster made by initdb as the postgres
user with pg_wal on ext4, tablespaces on XFS, ext4 (loop devices) and tmpfs.

What the SQL functions say is compared with `lcloudctl check` and
`lcloudctl probe` run by this test as the same user for the same paths and
sizes; the file system and device with the mounts made here; the I/O path
with the flags the kernel shows for the files the server has open
(/proc/PID/fdinfo: O_DIRECT or not). The startup and reload messages are
read from the server's log."""
import contextlib
import errno
import json
import os
import select
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
sys.path.insert(0, HERE)
import pgserver as pg  # noqa: E402
from hostlib import LCLOUDCTL, main, mounted_fs, need_root, run, scratch_dir  # noqa: E402

SOURCE_ROOT = os.environ["SOURCE_ROOT"]
O_DIRECT = 0o40000
# Set up in __main__: the server, the mounts, the tablespaces.
LAB = {}


def lcloudctl_check(path, size, io_path, user=pg.PG_USER):
    """`lcloudctl check` as USER (the server's user by default): (exit code, JSON or None, stderr)."""
    p = run([LCLOUDCTL, "check", "--no-confirm", "--format", "json", "-p", io_path, "-s", str(size), path], user=user)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else None), p.stderr


def lcloudctl_probe(path):
    p = run([LCLOUDCTL, "probe", "--no-signatures", "--format", "json", path], user=pg.PG_USER, check=True)
    return json.loads(p.stdout)["probes"][0]


def expected_row(path, size, io_path):
    """What lcloud_check()/lcloud_datadir() must say for PATH, from lcloudctl as the server's user."""
    rc, doc, err = lcloudctl_check(path, size, io_path)
    if doc is None:  # the path could not be probed: lcloudctl says why on stderr
        assert rc != 0, err
        return {"io_path": io_path, "answer": "unknown", "max_untorn_bytes": None, "reason_has": err.splitlines()[0].split(": ", 2)[2],
                "evidence": "{}", "filesystem": None, "mount_point": None, "device": None}
    probe = lcloudctl_probe(path)
    return pg.row_from_lcloudctl(doc, probe)


def assert_row_matches(row, path, size, io_path):
    want = expected_row(path, size, io_path)
    for k, v in want.items():
        if k == "reason_has":
            assert v in row["reason"], (path, row["reason"], v)
        else:
            assert row[k] == v, (path, size, io_path, k, row[k], v)
    return want


CHECK_COLUMNS = ["path", "size", "io_path", "answer", "max_untorn_bytes", "reason", "evidence", "filesystem",
                 "mount_point", "device"]


def check_rows(sql):
    return [dict(zip(CHECK_COLUMNS, r)) for r in LAB["server"].sql(sql)]


def datadir_rows():
    return [dict(zip(["kind", "tablespace"] + CHECK_COLUMNS, r)) for r in LAB["server"].sql(
        "SELECT * FROM lcloud_datadir()")]


def wait_for_messages(start, count, what, seconds=60):
    return pg.wait_for_messages(LAB["server"], start, count, what, seconds)


def tablespace_oids():
    return {name: int(oid) for oid, name in LAB["server"].sql("SELECT oid, spcname FROM pg_tablespace")}


def where(name, oids=None):
    """How the startup check names a tablespace: by its name in pg_tablespace."""
    return "tablespace %s (%s)" % (name, LAB["locations"][name])


def data_page_locations():
    return ["pg_default", "pg_global", "ts_xfs", "ts_ext4", "ts_tmpfs", "ts_gone", "ts_locked"]


def assert_page_message(msg, name, oids, full_page_writes):
    """One startup/reload line: its severity, the tablespace's name, the answer and the rule, nothing more."""
    severity, text, detail, hint = msg
    path = LAB["locations"][name]
    want = expected_row(path, 8192, "buffered")
    answer = want["answer"]
    assert answer != "untorn", want  # buffered page writes never are
    assert detail is None and hint is None, msg  # the details are DEBUG1's
    if full_page_writes:
        assert severity == "LOG", msg
        assert text.startswith("lcloud: full_page_writes is on and needed: 8192-byte page writes to %s are not "
                               "proved untorn (answer: %s): " % (where(name), answer)), msg
        rule = text.split("(answer: %s): " % answer, 1)[1]
    else:
        assert severity == "WARNING", msg
        assert text.startswith("lcloud: full_page_writes is off, but 8192-byte page writes to %s are not proved "
                               "untorn (answer: %s): " % (where(name), answer)), msg
        assert text.endswith("; turn full_page_writes on"), msg
        rule = text.split("(answer: %s): " % answer, 1)[1][:-len("; turn full_page_writes on")]
    if want["filesystem"]:
        assert rule == want["reason"], (msg, want)
    else:
        assert want["reason_has"] in rule, (msg, want)


def assert_page_details(msg, name, full_page_writes):
    """The DEBUG1 details of one tablespace: the file system, device, rule and what would help."""
    severity, text, detail, hint = msg
    path = LAB["locations"][name]
    want = expected_row(path, 8192, "buffered")
    assert severity == "DEBUG" and text == "lcloud: details for %s" % where(name), msg
    if full_page_writes:
        assert hint.startswith("What would make these page writes untorn: "), msg
    else:
        assert hint.startswith("Turn full_page_writes on: "), msg
        assert "What would make these page writes untorn: " in hint, msg
    if want["filesystem"]:
        storage = "File system %s mounted at %s, device %s" % (want["filesystem"], want["mount_point"], want["device"])
        assert detail == "%s; PostgreSQL writes these pages on the buffered path: %s." % (storage, want["reason"]), msg
        if want["device"].startswith("/dev/"):
            assert want["device"] in hint, (hint, want["device"])
    else:
        assert detail.startswith("File system and device unknown; PostgreSQL writes these pages on the buffered "
                                 "path: could not probe %s: " % path), msg
        assert want["reason_has"] in detail, (msg, want)


def assert_messages_for_all(msgs, full_page_writes):
    oids = tablespace_oids()
    names = data_page_locations()
    assert len(msgs) == len(names), msgs
    by_where = {}
    for m in msgs:
        for n in names:
            if where(n, oids) + " are" in m[1]:
                by_where[n] = m
    assert sorted(by_where) == sorted(names), (sorted(by_where), msgs)
    for n in names:
        assert_page_message(by_where[n], n, oids, full_page_writes)


def fd_flags(pid, under):
    return pg.fd_flags(pid, under)


@contextlib.contextmanager
def session():
    """A psql session that stays connected; yields a function running one statement."""
    s = LAB["server"]
    p = subprocess.Popen([s.psql_prog, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", s.sockdir,
                          "-p", str(s.port), "-U", pg.PG_USER, "-d", "postgres"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    pending = [""]  # what psql wrote after the last whole line

    def statement(sql):
        p.stdin.write(sql + "\nSELECT 'lcloud-test-done';\n")
        p.stdin.flush()
        lines = []
        # read the pipe itself: select() cannot see lines already in a buffered reader
        fd = p.stdout.fileno()
        while True:
            while "\n" in pending[0]:
                line, pending[0] = pending[0].split("\n", 1)
                if line.strip() == "lcloud-test-done":
                    return lines
                lines.append(line.strip())
            ready, _, _ = select.select([fd], [], [], 60)
            assert ready, "psql did not answer: %s" % lines
            chunk = os.read(fd, 65536)
            assert chunk, "psql ended: %s" % lines
            pending[0] += chunk.decode("utf-8", "replace")
    try:
        yield statement
    finally:
        p.stdin.close()
        p.wait(timeout=60)


def test_startup_warns_with_full_page_writes_off():
    """Restarted with full_page_writes=off: one WARNING per tablespace, naming file system, device and rule."""
    msgs = wait_for_messages(LAB["restart_offset"], len(data_page_locations()), "startup")
    assert_messages_for_all(msgs, full_page_writes=False)
    names = {m[1] for m in msgs}
    assert any("/ts_xfs" in n for n in names) and any("/ts_ext4" in n for n in names)


def test_datadir_rows_match_lcloudctl():
    rows = datadir_rows()
    loc = LAB["locations"]
    block, wal_block = (int(LAB["server"].sql("SHOW %s" % s)[0][0]) for s in ("block_size", "wal_block_size"))
    want = [("data_directory", None, LAB["datadir"], block)] + \
        [("tablespace", n, loc[n], block) for n in sorted(data_page_locations(), key=lambda n: tablespace_oids()[n])] + \
        [("wal", None, LAB["datadir"] + "/pg_wal", wal_block)]
    assert [(r["kind"], r["tablespace"], r["path"], int(r["size"])) for r in rows] == want, rows
    for r in rows:
        # PostgreSQL 15 writes everything through the page cache unless WAL may bypass it
        assert r["io_path"] == "buffered", r
        assert_row_matches(r, r["path"], int(r["size"]), "buffered")
    mine = {r["tablespace"]: r for r in rows}
    for name, (fstype, dev, mnt) in LAB["mounts"].items():
        r = mine[name]
        assert (r["filesystem"], r["device"], r["mount_point"], r["answer"]) == (fstype, dev, mnt, "no"), r
    wal = rows[-1]
    assert (wal["filesystem"], wal["device"]) == ("ext4", LAB["mounts"]["ts_ext4"][1]), wal  # initdb -X on ext4


def test_pages_really_go_through_the_page_cache():
    """The kernel's record of how the server opened the files agrees with io_path 'buffered'."""
    with session() as sql:
        pid = int(sql("SELECT pg_backend_pid();")[0])
        sql("CREATE TABLE pages_on_xfs TABLESPACE ts_xfs AS SELECT g AS n FROM generate_series(1, 10000) g;")
        sql("SELECT count(*) FROM pages_on_xfs;")
        data = fd_flags(pid, LAB["locations"]["ts_xfs"])
        wal = fd_flags(pid, LAB["waldir"])
        assert data and wal, (data, wal)
        for f, flags in list(data.items()) + list(wal.items()):
            assert not flags & O_DIRECT, (f, oct(flags))


def test_check_function_matches_lcloudctl():
    loc = LAB["locations"]
    cases = [(loc["ts_xfs"], None, None, "buffered"), (loc["ts_xfs"], 4096, "rwf_atomic", "rwf_atomic"),
             (loc["ts_xfs"], 16384, "best", "best"), (loc["ts_ext4"], 8192, "plain_direct", "plain_direct"),
             (loc["ts_ext4"], 16384, "best", "best"), (loc["ts_tmpfs"], 8192, "best", "best")]
    for path, size, io_arg, io_path in cases:
        args = ["'%s'" % path] + (["%d" % size] if size else []) + (["'%s'" % io_arg] if io_arg else [])
        rows = check_rows("SELECT * FROM lcloud_check(%s)" % ", ".join(args))
        assert len(rows) == 1, rows
        assert rows[0]["path"] == path and int(rows[0]["size"]) == (size or 8192), rows
        assert_row_matches(rows[0], path, size or 8192, io_path)


def test_unprivileged_server_answers_unknown_with_reason():
    """The server's user may not create the temporary file statx needs in the XFS mount's root
    (root's, mode 755): unknown, and root could tell."""
    top = LAB["mounts"]["ts_xfs"][2]
    row = check_rows("SELECT * FROM lcloud_check('%s', 8192, 'rwf_atomic')" % top)[0]
    want = assert_row_matches(row, top, 8192, "rwf_atomic")
    assert want["answer"] == "unknown" and "temporary file" in row["reason"], row
    rc, doc, err = lcloudctl_check(top, 8192, "rwf_atomic", user=None)
    assert doc and doc["answer"] != "unknown", (rc, doc, err)


def test_nonexistent_path_is_an_unknown_row():
    path = LAB["scratch"] + "/no/such/path"
    rows = check_rows("SELECT * FROM lcloud_check('%s')" % path)
    assert len(rows) == 1 and rows[0]["answer"] == "unknown", rows
    assert os.strerror(errno.ENOENT) in rows[0]["reason"], rows
    assert_row_matches(rows[0], path, 8192, "buffered")
    assert LAB["server"].sql("SELECT 1") == [["1"]]


def test_bad_arguments_are_clean_errors():
    for call, text in (("lcloud_check('/', 3000)", "size 3000 is not a power of two"),
                       ("lcloud_check('/', 8192, 'sideways')", 'unknown io_path "sideways"'),
                       ("lcloud_check(NULL)", "path must not be NULL")):
        p = LAB["server"].sql("SELECT * FROM " + call, check=False)
        assert p.returncode != 0 and "ERROR:  lcloud_check: " + text in p.stderr, (call, p.stderr)
    assert LAB["server"].sql("SELECT 1") == [["1"]]


def test_functions_are_granted_not_public():
    """lcloud_check() probes any path the server can reach: pg_read_server_files only; lcloud_datadir(): pg_monitor."""
    s = LAB["server"]
    s.sql("CREATE ROLE nobody_special LOGIN; CREATE ROLE watcher LOGIN IN ROLE pg_monitor; "
          "CREATE ROLE reader LOGIN IN ROLE pg_read_server_files")
    for role, call, allowed in (("nobody_special", "lcloud_datadir()", False),
                                ("nobody_special", "lcloud_check('/')", False),
                                ("watcher", "lcloud_datadir()", True), ("watcher", "lcloud_check('/')", False),
                                ("reader", "lcloud_check('/')", True)):
        p = s.sql("SET ROLE %s; SELECT count(*) FROM %s" % (role, call), check=False)
        if allowed:
            assert p.returncode == 0, (role, call, p.stderr)
        else:
            assert p.returncode != 0 and "permission denied for function" in p.stderr, (role, call, p.stderr)


def test_datadir_never_fails_on_a_missing_or_hidden_tablespace():
    """A tablespace whose directory vanished, one behind a folder the server may not search, one on tmpfs."""
    loc = LAB["locations"]
    gone, locked_parent = loc["ts_gone"], os.path.dirname(loc["ts_locked"])
    os.rename(gone, gone + ".moved")
    os.chmod(locked_parent, 0o700)
    try:
        rows = {r["tablespace"]: r for r in datadir_rows() if r["tablespace"]}
        assert rows["ts_gone"]["answer"] == "unknown", rows["ts_gone"]
        assert os.strerror(errno.ENOENT) in rows["ts_gone"]["reason"], rows["ts_gone"]
        assert rows["ts_locked"]["answer"] == "unknown", rows["ts_locked"]
        assert os.strerror(errno.EACCES) in rows["ts_locked"]["reason"], rows["ts_locked"]
        assert "may not search" in rows["ts_locked"]["reason"], rows["ts_locked"]
        for name in ("ts_gone", "ts_locked", "ts_tmpfs"):
            assert_row_matches(rows[name], loc[name], 8192, "buffered")
        assert rows["ts_tmpfs"]["filesystem"] == "tmpfs" and rows["ts_tmpfs"]["answer"] == "no", rows["ts_tmpfs"]
        # the reload check sees them too, and warns (full_page_writes is off)
        start = len(LAB["server"].log_lines())
        LAB["server"].sql("SELECT pg_reload_conf()")
        msgs = wait_for_messages(start, len(data_page_locations()), "reload with hidden tablespaces")
        assert_messages_for_all(msgs, full_page_writes=False)
    finally:
        os.chmod(locked_parent, 0o755)
        os.rename(gone + ".moved", gone)


def reload_and_wait(what):
    """pg_reload_conf(), then wait until the postmaster took it and the worker had time to act."""
    s = LAB["server"]
    start = len(s.log_lines())
    s.sql("SELECT pg_reload_conf()")
    end = time.monotonic() + 30
    while not any("received SIGHUP" in l[2] for l in s.log_lines()[start:]):
        assert time.monotonic() < end, "%s: the server did not reload" % what
        time.sleep(0.1)
    return start


def test_hostile_tablespace_links():
    """A tablespace's link in pg_tblspc pointing at a FIFO, a deleted directory, a name with a newline and
    an escape, a directory on overlayfs: a row with a reason each, no error, no wait, no crash."""
    oid = tablespace_oids()["ts_gone"]
    link = os.path.join(LAB["datadir"], "pg_tblspc", str(oid))
    before = os.readlink(link)
    d = os.path.join(LAB["scratch"], "hostile")
    os.mkdir(d, 0o755)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    pg.chown_postgres(fifo)
    deleted = os.path.join(d, "deleted")
    os.mkdir(deleted)
    newline = os.path.join(LAB["mounts"]["ts_xfs"][2], "ts\nnew\x1bline")
    os.mkdir(newline, 0o700)
    pg.chown_postgres(newline)
    ovl = {k: os.path.join(d, k) for k in ("lower", "upper", "work", "merged")}
    for v in ovl.values():
        os.mkdir(v)
    run(["mount", "-t", "overlay", "lcloud-test-overlay", "-o", "lowerdir=%(lower)s,upperdir=%(upper)s,workdir=%(work)s"
         % ovl, ovl["merged"]], check=True)
    try:
        os.mkdir(ovl["merged"] + "/ts", 0o700)
        pg.chown_postgres(ovl["merged"] + "/ts")
        for target, answer, text in ((fifo, "unknown", os.strerror(errno.EBADFD) + ": a FIFO or socket has no storage"),
                                     (deleted, "unknown", os.strerror(errno.ENOENT)),
                                     (newline, None, None), (ovl["merged"] + "/ts", "no", None)):
            if target == deleted:
                os.rmdir(deleted)
            os.symlink(target, link + ".new")
            os.rename(link + ".new", link)
            rows = [r for r in datadir_rows() if r["tablespace"] == "ts_gone"]
            assert len(rows) == 1 and rows[0]["path"] == target and rows[0]["reason"], (target, rows)
            assert rows[0]["answer"] != "untorn", rows
            if answer:
                assert rows[0]["answer"] == answer, rows
            if text:
                assert text in rows[0]["reason"], rows
            assert_row_matches(rows[0], target, 8192, "buffered")
            start = len(LAB["server"].log_lines())
            LAB["server"].sql("SELECT pg_reload_conf()")
            wait_for_messages(start, len(data_page_locations()), "reload with the tablespace at %r" % target)
    finally:
        os.symlink(before, link + ".new")
        os.rename(link + ".new", link)
        run(["umount", ovl["merged"]])
        os.rmdir(newline)


def test_tablespace_link_longer_than_maxpgpath():
    """A link in pg_tblspc longer than PostgreSQL's path buffer (MAXPGPATH, 1024): the row is about the
    directory the link leads to, never about the prefix that fits the buffer."""
    oid = tablespace_oids()["ts_gone"]
    link = os.path.join(LAB["datadir"], "pg_tblspc", str(oid))
    before = os.readlink(link)
    prefix = LAB["mounts"]["ts_xfs"][2] + "/long"
    while len(prefix) < 1023 - 201:
        prefix += "/" + "p" * 200
    prefix += "/" + "q" * (1023 - len(prefix) - 1)
    assert len(prefix) == 1023
    os.makedirs(prefix)
    beyond = prefix + "r"  # the same 1023 bytes, then more: on tmpfs
    os.mkdir(beyond)
    run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=755", "lcloud-test-long", beyond], check=True)
    try:
        os.mkdir(beyond + "/ts", 0o700)
        pg.chown_postgres(beyond + "/ts")
        os.symlink(beyond + "/ts", link + ".new")
        os.rename(link + ".new", link)
        rows = [r for r in datadir_rows() if r["tablespace"] == "ts_gone"]
        assert len(rows) == 1 and rows[0]["filesystem"] == "tmpfs" and rows[0]["path"] == link, rows
    finally:
        os.symlink(before, link + ".new")
        os.rename(link + ".new", link)
        run(["umount", beyond])
        run(["rm", "-rf", LAB["mounts"]["ts_xfs"][2] + "/long"])


def test_reload_speaks_when_full_page_writes_changes():
    s = LAB["server"]
    # the previous test hid and restored two tablespaces: let the worker see them whole again
    start = reload_and_wait("restored")
    wait_for_messages(start, len(data_page_locations()), "restored")

    s.sql("ALTER SYSTEM SET full_page_writes = on")
    start = reload_and_wait("full_page_writes on")
    assert_messages_for_all(wait_for_messages(start, len(data_page_locations()), "full_page_writes on"),
                            full_page_writes=True)

    start = reload_and_wait("nothing changed")
    time.sleep(3)
    assert s.messages(start) == [], "a reload that changed nothing repeated: %s" % s.messages(start)

    s.sql("ALTER SYSTEM SET full_page_writes = off")
    start = reload_and_wait("full_page_writes off")
    assert_messages_for_all(wait_for_messages(start, len(data_page_locations()), "full_page_writes off"),
                            full_page_writes=False)


def test_details_only_at_debug1():
    """At log_min_messages=debug1 each tablespace's line is followed by its details (storage, what would
    help); at the default level the log has the one line per tablespace and no details."""
    s = LAB["server"]
    names = data_page_locations()
    s.sql("ALTER SYSTEM SET log_min_messages = debug1")
    s.sql("ALTER SYSTEM SET full_page_writes = on")
    start = reload_and_wait("debug1")
    assert_messages_for_all(wait_for_messages(start, len(names), "debug1"), full_page_writes=True)
    details = pg.wait_for_messages(s, start, len(names), "debug1 details", debug=True)  # after each line
    for n in names:
        mine = [m for m in details if m[1] == "lcloud: details for %s" % where(n)]
        assert len(mine) == 1, (n, details)
        assert_page_details(mine[0], n, full_page_writes=True)

    s.sql("ALTER SYSTEM RESET log_min_messages")
    s.sql("ALTER SYSTEM SET full_page_writes = off")
    start = reload_and_wait("default level")
    assert_messages_for_all(wait_for_messages(start, len(names), "default level"), full_page_writes=False)
    time.sleep(1)
    assert s.messages(start, debug=True) == [], s.messages(start, debug=True)
    assert len(s.messages(start)) == len(names), s.messages(start)


def test_wal_with_o_direct_is_plain_direct():
    """PostgreSQL 15 opens WAL with O_DIRECT for open_datasync when wal_level is minimal: lcloud_datadir
    says plain_direct, and the kernel shows O_DIRECT on the WAL file the backend has open."""
    s = LAB["server"]
    s.configure(wal_level="minimal", max_wal_senders=0, wal_sync_method="open_datasync")
    s.restart()
    wal = [r for r in datadir_rows() if r["kind"] == "wal"][0]
    assert wal["io_path"] == "plain_direct", wal
    assert_row_matches(wal, wal["path"], int(wal["size"]), "plain_direct")
    assert [r["io_path"] for r in datadir_rows() if r["kind"] != "wal"] == ["buffered"] * 8
    with session() as sql:
        pid = int(sql("SELECT pg_backend_pid();")[0])
        sql("CREATE TABLE wal_direct AS SELECT g AS n FROM generate_series(1, 1000) g;")
        flags = fd_flags(pid, LAB["waldir"])
        assert flags and all(f & O_DIRECT for f in flags.values()), {k: oct(v) for k, v in flags.items()}


def test_server_log_has_no_crash_and_no_other_error():
    lines = LAB["server"].log_lines()
    for pid, severity, text in lines:
        if severity == "DEBUG":
            continue  # at debug1 the postmaster names every worker it starts and stops
        assert severity not in ("PANIC", "FATAL"), (severity, text)
        assert "terminated by signal" not in text, text
        assert "lcloud page write check" not in text, text  # the worker never exits with an error
        if severity == "ERROR":
            assert text.startswith("lcloud_check: ") or text.startswith("permission denied for function"), text


def setup(stack):
    need_root()
    config = pg.pg_config()
    d = stack.enter_context(scratch_dir())
    LAB["scratch"] = d
    pcpath, libdir = pg.install_liblcloud(SOURCE_ROOT, d)
    destdir = pg.build_extension(os.path.join(SOURCE_ROOT, "bindings", "postgresql"), d, pcpath, config)
    bindir = pg.private_server_tree(destdir, config)

    xdev, xmnt = stack.enter_context(mounted_fs("xfs"))
    edev, emnt = stack.enter_context(mounted_fs("ext4"))
    tmnt = os.path.join(d, "tmpfs")
    os.mkdir(tmnt)
    run(["mount", "-t", "tmpfs", "-o", "size=64m,mode=755", "lcloud-test-tmpfs", tmnt], check=True)
    stack.callback(run, ["umount", tmnt])
    LAB["mounts"] = {"ts_xfs": ("xfs", xdev, xmnt), "ts_ext4": ("ext4", edev, emnt),
                     "ts_tmpfs": ("tmpfs", "lcloud-test-tmpfs", tmnt)}
    os.mkdir(os.path.join(xmnt, "locked"), 0o755)
    locations = {"ts_xfs": xmnt + "/ts_xfs", "ts_ext4": emnt + "/ts_ext4", "ts_tmpfs": tmnt + "/ts_tmpfs",
                 "ts_gone": xmnt + "/ts_gone", "ts_locked": xmnt + "/locked/ts_locked"}
    LAB["waldir"] = emnt + "/wal"
    for path in list(locations.values()) + [LAB["waldir"], d + "/data", d + "/sock"]:
        os.mkdir(path, 0o700)
        pg.chown_postgres(path)
    LAB["datadir"] = d + "/data"
    locations.update({"pg_default": d + "/data/base", "pg_global": d + "/data/global"})
    LAB["locations"] = locations

    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    server = pg.Server(bindir, d + "/data", d + "/sock", env, os.path.join(pg.pg_config_value(config, "bindir"), "psql"))
    LAB["server"] = server
    stack.enter_context(pg.running(server, waldir=LAB["waldir"]))
    server.sql("CREATE EXTENSION lcloud")
    for name in ("ts_xfs", "ts_ext4", "ts_tmpfs", "ts_gone", "ts_locked"):
        server.sql("CREATE TABLESPACE %s LOCATION '%s'" % (name, locations[name]))
    server.sql("ALTER SYSTEM SET full_page_writes = off")
    LAB["restart_offset"] = len(server.log_lines())
    server.restart()


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, pg.stop_on_sigterm)  # a timeout still stops the server and unmounts
    with contextlib.ExitStack() as stack:
        setup(stack)
        main([test_startup_warns_with_full_page_writes_off, test_datadir_rows_match_lcloudctl,
              test_pages_really_go_through_the_page_cache, test_check_function_matches_lcloudctl,
              test_unprivileged_server_answers_unknown_with_reason, test_nonexistent_path_is_an_unknown_row,
              test_bad_arguments_are_clean_errors, test_functions_are_granted_not_public,
              test_datadir_never_fails_on_a_missing_or_hidden_tablespace, test_hostile_tablespace_links,
              test_tablespace_link_longer_than_maxpgpath,
              test_reload_speaks_when_full_page_writes_changes, test_details_only_at_debug1,
              test_wal_with_o_direct_is_plain_direct,
              test_server_log_has_no_crash_and_no_other_error])
