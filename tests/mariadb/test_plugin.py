#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The MariaDB plugin (bindings/mariadb) in a real server started here: the
plugin built against the build tree's liblcloud, a data directory on XFS and
one on ext4 (loop devices), each started with innodb_doublewrite OFF and ON,
and with innodb_flush_method=fsync (the page cache); one on tmpfs.

The error log's lcloud lines and SHOW GLOBAL STATUS LIKE 'lcloud%' are
compared with `lcloudctl check` run by this test as the mysql user for the
same files, page size and I/O path; the I/O path with the flags the kernel
shows for the server's descriptors of ibdata1 and ib_logfile0 (O_DIRECT or
not). The guardrail (lcloud_enforce with FORCE_PLUS_PERMANENT) must refuse
to start with doublewrite OFF and start with it ON. A frozen file system
makes a refresh answer "unknown" within lcloud_probe_timeout while the
server keeps answering queries."""
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
sys.path.insert(0, HERE)
import mdserver as md  # noqa: E402
from hostlib import LCLOUDCTL, main, mounted_fs, need_root, run, scratch_dir  # noqa: E402

SOURCE_ROOT = os.environ["SOURCE_ROOT"]
BUILD_ROOT = os.environ["BUILD_ROOT"]
PAGE = 16384
LAB = {}


def lcloudctl_as_server_user(args):
    """lcloudctl ARGS as the server's user; replaced where the server runs in a chroot."""
    return run([LCLOUDCTL] + list(args), user=md.MD_USER)


def expected(path, io_path, size=PAGE):
    """`lcloudctl check` as the server's user: (answer, max_untorn_bytes, why) on IO_PATH."""
    p = lcloudctl_as_server_user(["check", "--no-confirm", "--format", "json", "-s", str(size), path])
    assert p.stdout.strip(), "lcloudctl check %s: %s" % (path, p.stderr)
    doc = json.loads(p.stdout)
    for row in doc["paths"]:
        if row["io_path"] == io_path:
            return row["answer"], row["max_untorn_bytes"], row["why"]
    raise AssertionError("no %s in %s" % (io_path, doc))


def data_locations(server):
    """What the plugin must check for this server: (role, path); the redo log last."""
    d = server.datadir.rstrip("/")
    return [("system tablespace", d + "/ibdata1"), ("file-per-table directory", d), ("redo log directory", d)]


def line_for(lines, role, path):
    found = [(sev, text) for sev, text in lines if "the %s (%s)" % (role, path) in text]
    assert len(found) == 1, (role, path, lines)
    return found[0]


def variable(server, name):
    rows = server.sql("SHOW GLOBAL VARIABLES LIKE '%s'" % name)
    return rows[0][1] if rows else None


def flush_setting(server):
    """How the plugin names the setting that decides the data files' path: 11.0+ has
    innodb_data_file_buffering, 10.11 innodb_flush_method."""
    buffering = variable(server, "innodb_data_file_buffering")
    if buffering is not None:
        return "innodb_data_file_buffering=" + buffering
    return "innodb_flush_method=" + variable(server, "innodb_flush_method")


def assert_answers_match(server, fs, device, mount_point, doublewrite, io_path):
    lines = server.lcloud_lines()
    status = server.status()
    smallest = None
    first_not_untorn = None
    # the redo log is written with O_DIRECT unless innodb_log_file_buffering (10.8+) is ON
    redo_direct = bool(server.open_flags(server.datadir.rstrip("/") + "/ib_logfile0") & md.O_DIRECT)
    assert redo_direct == (variable(server, "innodb_log_file_buffering") == "OFF")
    flush = flush_setting(server)
    for role, path in data_locations(server):
        redo = role == "redo log directory"
        path_here = ("plain_direct" if redo_direct else "buffered") if redo else io_path
        answer, max_untorn, why = expected(path, path_here)
        severity, text = line_for(lines, role, path)
        assert "%d-byte" % PAGE in text, text
        assert "%s on %s mounted at %s" % (fs, device, mount_point) in text, text
        assert "Written %s (%s) to " % (path_here, "redo log" if redo else flush) in text, text
        assert why in text, (why, text)
        if redo:
            assert severity == "Note" and "does not cover the redo log" in text, (severity, text)
            continue
        smallest = max_untorn if smallest is None else min(smallest, max_untorn)
        if answer != "untorn" and first_not_untorn is None:
            first_not_untorn = (role, path, why)
        if answer != "untorn" and doublewrite == "OFF":
            assert severity == "Warning", (severity, text)
            assert text.startswith("innodb_doublewrite is OFF, but %d-byte page writes to the %s (%s) are not "
                                   "proved untorn (answer: %s); turn innodb_doublewrite ON. "
                                   % (PAGE, role, path, answer)), text
        elif answer == "no":
            assert severity == "Note" and "innodb_doublewrite is ON and needed" in text, (severity, text)
        elif answer == "untorn":
            assert severity == "Note" and ("but not needed" in text if doublewrite == "ON" else True), text
    assert not [l for l in lines if l[0] not in ("Note", "Warning")], lines
    assert status["lcloud_page_size"] == str(PAGE), status
    assert status["lcloud_io_path"] == io_path, status
    assert status["lcloud_max_untorn_page_write"] == str(smallest), (status, smallest)
    if first_not_untorn:
        role, path, why = first_not_untorn
        assert status["lcloud_doublewrite_needed"] == "yes", status
        assert status["lcloud_reason"].startswith("%s (%s): " % (role, path)), status
        assert why.startswith(status["lcloud_reason"].split("): ", 1)[1][:200]), (status, why)
    else:
        assert status["lcloud_doublewrite_needed"] == "no", status


def check_stack(name, io_path="plain_direct", options=()):
    fs, device, mnt, server = LAB[name]
    for doublewrite in ("OFF", "ON"):
        with md.running(server, "--innodb-doublewrite=%s" % doublewrite, *options):
            assert variable(server, "innodb_doublewrite") == doublewrite
            flags = server.open_flags(server.datadir.rstrip("/") + "/ibdata1")
            assert bool(flags & md.O_DIRECT) == (io_path == "plain_direct"), (io_path, oct(flags))
            assert_answers_match(server, fs, device, mnt, doublewrite, io_path)
            assert server.status()["lcloud_checks"] == "1"


def test_xfs_doublewrite_off_and_on():
    """XFS over loop: no device promise, and InnoDB does not issue RWF_ATOMIC (the only path where
    XFS's software atomic writes would keep a page whole): doublewrite is needed."""
    check_stack("xfs")


def test_ext4_doublewrite_off_and_on():
    check_stack("ext4")


def test_buffered_flush_method_is_checked_as_buffered():
    """innodb_flush_method=fsync: pages go through the page cache, where nothing is untorn."""
    check_stack("ext4", io_path="buffered", options=("--innodb-flush-method=fsync",))


def test_tmpfs_is_unknown_with_what_to_do():
    """A data directory on tmpfs: liblcloud says "no" (no device below), true of the writes, but a
    power loss erases the files whole: the plugin answers "unknown", says why and what to do, keeps
    liblcloud's reason as evidence, and warns with doublewrite OFF."""
    fs, device, mnt, server = LAB["tmpfs"]
    with md.running(server, "--innodb-doublewrite=OFF"):
        lines = server.lcloud_lines()
        status = server.status()
        for role, path in data_locations(server)[:2]:
            answer, _, why = expected(path, "plain_direct")
            assert answer == "no", (path, answer, why)
            severity, text = line_for(lines, role, path)
            assert severity == "Warning", (severity, text)
            assert text.startswith("innodb_doublewrite is OFF, but %d-byte page writes to the %s (%s) are not "
                                   "proved untorn (answer: unknown); turn innodb_doublewrite ON. " % (PAGE, role, path)), text
            assert ("Written plain_direct (%s) to tmpfs on lcloud-md-tmpfs mounted at %s: %s is on tmpfs, a file "
                    "system that keeps its files in memory with no device below" % (flush_setting(server), mnt, path)
                    in text), text
            assert "put InnoDB's files on a file system over a block device" in text and why in text, text
        assert status["lcloud_doublewrite_needed"] == "unknown", status
        assert status["lcloud_max_untorn_page_write"] == "0", status
        assert status["lcloud_reason"].startswith("system tablespace (%s/ibdata1): %s/ibdata1 is on tmpfs, "
                                                  % ((server.datadir.rstrip("/"),) * 2)), status


def test_status_over_tcp_on_the_private_port():
    fs, device, mnt, server = LAB["ext4"]
    with md.running(server):
        out = server.tcp_sql("SHOW GLOBAL STATUS LIKE 'lcloud_doublewrite_needed'")
        assert out.split() == ["Lcloud_doublewrite_needed", "yes"], out


def test_enforce_refuses_doublewrite_off_then_starts_with_it_on():
    fs, device, mnt, server = LAB["xfs"]
    rc = server.start("--lcloud=FORCE_PLUS_PERMANENT", "--lcloud-enforce=ON", "--innodb-doublewrite=OFF",
                      expect_failure=True)
    assert rc != 0, rc
    lines = server.lcloud_lines()
    refusals = [t for s, t in lines if s == "ERROR"]
    assert len(refusals) == 1, lines
    assert refusals[0].startswith("refusing to start: innodb_doublewrite is OFF, but page writes are not proved "
                                  "untorn (doublewrite needed: yes); set innodb_doublewrite=ON, or "
                                  "lcloud_enforce=OFF to start anyway. system tablespace (%s/ibdata1): not "
                                  "untorn on plain_direct: " % server.datadir.rstrip("/")), refusals
    assert any("Aborting" in l for l in server.lines()), server.lines()[-10:]
    with md.running(server, "--lcloud=FORCE_PLUS_PERMANENT", "--lcloud-enforce=ON", "--innodb-doublewrite=ON"):
        assert variable(server, "lcloud_enforce") == "ON"
        assert server.status()["lcloud_doublewrite_needed"] == "yes"
        assert not [t for s, t in server.lcloud_lines() if s == "ERROR"], server.lcloud_lines()
        # FORCE_PLUS_PERMANENT: the guardrail cannot be unloaded while the server runs
        p = subprocess.run(md.command(["mariadb", "--no-defaults", "--socket=" + server.socket, "-uroot", "-e",
                                       "UNINSTALL SONAME 'lcloud'"], server.root), capture_output=True, text=True)
        assert p.returncode != 0, p.stdout


def test_enforce_without_force_plus_permanent_only_unloads_the_plugin():
    """What the README warns of: without FORCE_PLUS_PERMANENT a refusing plugin is dropped and the
    server starts without it."""
    fs, device, mnt, server = LAB["xfs"]
    with md.running(server, "--lcloud-enforce=ON", "--innodb-doublewrite=OFF"):
        assert [s for s, t in server.lcloud_lines()].count("ERROR") == 1, server.lcloud_lines()
        assert server.sql("SHOW GLOBAL STATUS LIKE 'lcloud%'") == []


def test_enforce_off_by_default_starts_with_a_warning():
    fs, device, mnt, server = LAB["xfs"]
    with md.running(server, "--lcloud=FORCE_PLUS_PERMANENT", "--innodb-doublewrite=OFF"):
        assert variable(server, "lcloud_enforce") == "OFF"
        assert [s for s, t in server.lcloud_lines()].count("Warning") == 2, server.lcloud_lines()


def test_frozen_file_system_gives_unknown_and_never_blocks():
    """A refresh while the data directory's XFS is frozen: SET returns at once, the probes end after
    lcloud_probe_timeout with "unknown", queries go on; after thaw a refresh answers again."""
    fs, device, mnt, server = LAB["xfs"]
    with md.running(server, "--lcloud-probe-timeout=1", "--innodb-doublewrite=ON"):
        thawed = threading.Event()
        watchdog = threading.Timer(120, lambda: thawed.is_set() or run(["fsfreeze", "-u", mnt]))
        run(["fsfreeze", "-f", mnt], check=True)
        watchdog.start()
        try:
            t0 = time.monotonic()
            server.mark()
            server.sql("SET GLOBAL lcloud_refresh = ON")
            assert time.monotonic() - t0 < 2, "SET waited for the probes"
            end = time.monotonic() + 30
            while server.status()["lcloud_checks"] != "2":
                assert time.monotonic() < end, server.status()
                time.sleep(0.2)
            # the directory's probe opens a temporary file there, which a frozen file system holds
            lines = server.lcloud_lines()
            severity, text = line_for(lines, "file-per-table directory", server.datadir.rstrip("/"))
            assert severity == "Note" and "could not be told" in text, (severity, text)
            assert "the file system did not answer within 1000 ms" in text, text
            status = server.status()
            assert status["lcloud_doublewrite_needed"] in ("yes", "unknown"), status
            assert status["lcloud_max_untorn_page_write"] == "0", status
        finally:
            run(["fsfreeze", "-u", mnt])
            thawed.set()
            watchdog.cancel()
        server.sql("SET GLOBAL lcloud_refresh = ON")
        end = time.monotonic() + 30
        while server.status()["lcloud_checks"] != "3":
            assert time.monotonic() < end, server.status()
            time.sleep(0.2)
        assert server.status()["lcloud_doublewrite_needed"] == "yes", server.status()


def refresh_and_wait(server, checks):
    server.sql("SET GLOBAL lcloud_refresh = ON")
    end = time.monotonic() + 30
    while server.status()["lcloud_checks"] != str(checks):
        assert time.monotonic() < end, server.status()
        time.sleep(0.2)


def test_unsearchable_and_missing_paths_give_unknown_with_the_reason():
    """Refreshes while the server's user (mysql) may not search the mount point above the data
    directory, then while the data directory is gone (renamed): "unknown" each time, with the
    reason, never "no" or "yes"; the server goes on and answers again once the path is back."""
    fs, device, mnt, server = LAB["ext4"]
    datadir = server.datadir.rstrip("/")
    mode = os.stat(mnt).st_mode & 0o7777
    cases = [("Permission denied: the server's operating system user may not search a folder on the way",
              lambda: os.chmod(mnt, 0o700), lambda: os.chmod(mnt, mode)),
             ("No such file or directory: the path does not exist",
              lambda: os.rename(datadir, datadir + ".moved"), lambda: os.rename(datadir + ".moved", datadir))]
    with md.running(server, "--innodb-doublewrite=ON"):
        for n, (why, change, undo) in enumerate(cases):
            server.mark()
            change()
            try:
                refresh_and_wait(server, n + 2)
                lines = server.lcloud_lines()
                status = server.status()
            finally:
                undo()
            for role, path in data_locations(server)[:2]:
                severity, text = line_for(lines, role, path)
                assert severity == "Note", (severity, text)
                assert text.startswith("whether %d-byte page writes to the %s (%s) are untorn could not be told; "
                                       "innodb_doublewrite is ON. " % (PAGE, role, path)), text
                assert "file system and device unknown: could not probe %s: %s" % (path, why) in text, text
            assert status["lcloud_doublewrite_needed"] == "unknown", status
            assert status["lcloud_max_untorn_page_write"] == "0", status
            assert status["lcloud_reason"] == "system tablespace (%s/ibdata1): could not probe %s/ibdata1: %s" \
                % (datadir, datadir, why), status
        refresh_and_wait(server, len(cases) + 2)
        assert server.status()["lcloud_doublewrite_needed"] == "yes", server.status()


def test_server_log_has_no_crash():
    for name in ("xfs", "ext4", "tmpfs"):
        server = LAB[name][3]
        with open(server.host(server.log), errors="replace") as f:
            text = f.read()
        assert "got signal" not in text and "Assertion" not in text, text[-3000:]


def setup(stack):
    need_root()
    md.need_mariadb()
    d = stack.enter_context(scratch_dir())
    plugin_dir = md.build_plugin(SOURCE_ROOT, BUILD_ROOT, d)
    libdir = os.path.join(BUILD_ROOT, "lib")
    for name in ("xfs", "ext4"):
        device, mnt = stack.enter_context(mounted_fs(name))
        datadir = os.path.join(mnt, "data")
        md.install_db(datadir)
        LAB[name] = (name, device, mnt, md.Server(d, name, datadir, plugin_dir, libdir))
    tmnt = os.path.join(d, "tmpfs")
    os.mkdir(tmnt)
    run(["mount", "-t", "tmpfs", "-o", "size=256m,mode=755", "lcloud-md-tmpfs", tmnt], check=True)
    stack.callback(run, ["umount", tmnt])
    md.install_db(os.path.join(tmnt, "data"))
    LAB["tmpfs"] = ("tmpfs", "lcloud-md-tmpfs", tmnt, md.Server(d, "tmpfs", os.path.join(tmnt, "data"),
                                                                 plugin_dir, libdir))
    for name in ("xfs", "ext4", "tmpfs"):
        stack.callback(LAB[name][3].stop)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, md.stop_on_sigterm)
    with contextlib.ExitStack() as stack:
        setup(stack)
        main([test_xfs_doublewrite_off_and_on, test_ext4_doublewrite_off_and_on,
              test_buffered_flush_method_is_checked_as_buffered, test_tmpfs_is_unknown_with_what_to_do,
              test_unsearchable_and_missing_paths_give_unknown_with_the_reason,
              test_status_over_tcp_on_the_private_port, test_enforce_refuses_doublewrite_off_then_starts_with_it_on,
              test_enforce_without_force_plus_permanent_only_unloads_the_plugin,
              test_enforce_off_by_default_starts_with_a_warning, test_frozen_file_system_gives_unknown_and_never_blocks,
              test_server_log_has_no_crash])
