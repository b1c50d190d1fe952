#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The PostgreSQL extension on a frozen file system: a tablespace on XFS over
a loop device, frozen with `fsfreeze -f` while a server started here (as in
test_extension.py: a private build, the postgres user, its own socket
directory) probes it. A frozen file system puts the probe's O_TMPFILE open
into uninterruptible sleep until thaw; the extension must still let
statement_timeout and a query cancel end lcloud_datadir() and
lcloud_check(), answer `unknown` after lcloud.probe_timeout, let
`pg_ctl stop -m fast` finish while the file system stays frozen (a query
waiting, or the startup worker waiting), start with a WARNING from the
startup check, and answer again after thaw.

Every freeze is undone in a `finally`, and a watchdog process started with
it thaws the file system after WATCHDOG_SECONDS should this test be killed
outright: a file system left frozen would hang whatever touches it next.
Every wait here is bounded, so that the extension without the bound fails
instead of hanging."""
import contextlib
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
sys.path.insert(0, HERE)
import pgserver as pg  # noqa: E402
from hostlib import main, mounted_fs, need_root, need_tool, run, scratch_dir  # noqa: E402

SOURCE_ROOT = os.environ["SOURCE_ROOT"]
WATCHDOG_SECONDS = 150
# How long pg_ctl may take to stop the server while the tablespace is frozen.
STOP_SECONDS = 20
LAB = {}


@contextlib.contextmanager
def frozen():
    """The tablespace's file system frozen for the duration; thawed whatever happens."""
    mnt = LAB["mount"]
    run(["fsfreeze", "-f", mnt], check=True)
    watchdog = subprocess.Popen(["sh", "-c", "sleep %d; fsfreeze -u '%s'" % (WATCHDOG_SECONDS, mnt)],
                                start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        run(["fsfreeze", "-u", mnt])
        os.killpg(watchdog.pid, signal.SIGKILL)  # its own process group: sh and its sleep
        watchdog.wait()


def psql_args(*statements):
    args = LAB["server"].psql_args() + ["-F", "\x1f", "-R", "\x1e"]
    for s in statements:
        args += ["-c", s]
    return args


def psql(*statements, timeout):
    """Runs the statements in one session; (CompletedProcess, seconds), or (None, seconds) when still
    running after TIMEOUT seconds (psql is killed then; a server process stuck in the kernel is not)."""
    start = time.monotonic()
    try:
        p = subprocess.run(psql_args(*statements), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start
    return p, time.monotonic() - start


def rows(p):
    """Rows of all the statements' results (no value here holds a newline, which ends each result)."""
    return [r.split("\x1f") for r in p.stdout.replace("\n", "\x1e").split("\x1e") if r]


def wait_until_running(text, seconds=15):
    """The PID of the backend running a query containing TEXT, once pg_stat_activity shows it."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        found = LAB["server"].sql("SELECT pid FROM pg_stat_activity WHERE state = 'active' AND pid <> "
                                  "pg_backend_pid() AND query LIKE '%%%s%%'" % text)
        if found:
            time.sleep(1)  # into the probe's wait
            return int(found[0][0])
        time.sleep(0.1)
    raise AssertionError("no backend is running %s" % text)


def uninterruptible_server_processes():
    """PIDs of processes of the private server's binary in uninterruptible sleep (state D)."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            exe = os.readlink("/proc/%s/exe" % pid)
            with open("/proc/%s/stat" % pid) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if exe == LAB["postgres"] and state == "D":
            out.append(int(pid))
    return out


def pg_ctl_stop():
    """pg_ctl stop -m fast, bounded: (exit code or None when it did not return, seconds)."""
    s = LAB["server"]
    start = time.monotonic()
    try:
        p = pg.as_postgres([os.path.join(s.bindir, "pg_ctl"), "-D", s.datadir, "-w", "-t", str(STOP_SECONDS),
                            "-m", "fast", "stop"], env=s.env, check=False, timeout=STOP_SECONDS + 10)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start
    return p.returncode, time.monotonic() - start


def test_statement_timeout_ends_datadir():
    """SET statement_timeout = '2s'; lcloud_datadir() ends with the timeout error in a few seconds; the
    probe left behind is the process that sleeps in the kernel, and it ends once the file system thaws."""
    with frozen():
        p, seconds = psql("SET statement_timeout = '2s'", "SELECT * FROM lcloud_datadir()", timeout=20)
        assert p is not None, "lcloud_datadir() still running after %.0f s with statement_timeout 2s" % seconds
        assert p.returncode != 0 and "canceling statement due to statement timeout" in p.stderr, (p.stdout, p.stderr)
        assert seconds < 8, "the statement timeout took %.1f s" % seconds
        assert LAB["server"].sql("SELECT 1") == [["1"]]
        stuck = uninterruptible_server_processes()
        assert stuck, "no probe process waits for the frozen file system"
        for pid in stuck:  # nothing of the backend's: no client socket, no log pipe, no relation file
            fds = {}
            for fd in os.listdir("/proc/%d/fd" % pid):
                with contextlib.suppress(OSError):
                    fds[int(fd)] = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            assert [fds.get(fd) for fd in (0, 1, 2)] == ["/dev/null"] * 3, (pid, fds)
            assert not any(t.startswith("socket:") or t.startswith(LAB["datadir"]) for t in fds.values()), (pid, fds)
    end = time.monotonic() + 15
    while any(pg._alive(pid) for pid in stuck):
        assert time.monotonic() < end, "probe processes %s still alive 15 s after thaw" % stuck
        time.sleep(0.2)


def test_cancel_ends_check():
    """pg_cancel_backend() ends lcloud_check() of a path on the frozen file system."""
    with frozen():
        q = subprocess.Popen(psql_args("SELECT * FROM lcloud_check('%s')" % LAB["tablespace"]),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            pid = wait_until_running("lcloud_check(")
            assert LAB["server"].sql("SELECT pg_cancel_backend(%d)" % pid) == [["t"]]
            out, err = q.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            raise AssertionError("lcloud_check() still running 10 s after pg_cancel_backend()")
        finally:
            if q.poll() is None:
                q.kill()
                q.wait()
        assert q.returncode != 0 and "canceling statement due to user request" in err, (out, err)


def test_probe_timeout_gives_unknown_row():
    """With lcloud.probe_timeout = '1s', lcloud_datadir() does not fail: the frozen tablespace is an
    unknown row saying why, every other location is answered."""
    with frozen():
        p, seconds = psql("SET lcloud.probe_timeout = '1s'",
                          "SELECT kind, tablespace, path, answer, reason FROM lcloud_datadir()", timeout=30)
        assert p is not None, "lcloud_datadir() still running after %.0f s with lcloud.probe_timeout 1s" % seconds
        assert p.returncode == 0, p.stderr
    got = {r[1] or r[0]: r for r in rows(p)}
    assert sorted(got) == ["data_directory", "pg_default", "pg_global", "ts_frozen", "wal"], got
    assert got["ts_frozen"][3:] == ["unknown", "could not probe %s: the file system did not answer within 1 s"
                                    % LAB["tablespace"]], got["ts_frozen"]
    for name, r in got.items():
        if name != "ts_frozen":
            assert "did not answer" not in r[4], r
    assert seconds < 10, "lcloud_datadir() took %.1f s" % seconds


def test_waiting_probes_are_bounded():
    """A server process leaves at most 16 probes waiting for file systems: the 17th answers unknown at once
    instead of forking another child that would wait too."""
    path = LAB["tablespace"]
    with frozen():
        p, seconds = psql("SET lcloud.probe_timeout = '100ms'",
                          *["SELECT answer, reason FROM lcloud_check('%s')" % path] * 17, timeout=30)
        assert p is not None, "17 probes with lcloud.probe_timeout 100ms still running after %.0f s" % seconds
        assert p.returncode == 0, p.stderr
        assert len(uninterruptible_server_processes()) >= 16
    got = rows(p)
    waited = ["unknown", "could not probe %s: the file system did not answer within 100 ms" % path]
    refused = ["unknown", "could not probe %s: 16 earlier probes of this server process still wait for their "
               "file systems" % path]
    assert got == [waited] * 16 + [refused], got


def test_fast_stop_while_a_query_waits():
    """pg_ctl stop -m fast finishes while a backend waits in lcloud_datadir() for the frozen file system."""
    with frozen():
        q = subprocess.Popen(psql_args("SET lcloud.probe_timeout = '10min'", "SELECT * FROM lcloud_datadir()"),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_until_running("lcloud_datadir(")
            rc, seconds = pg_ctl_stop()
            assert rc == 0, "pg_ctl stop -m fast: %s after %.0f s" % ("no return" if rc is None else rc, seconds)
            out, err = q.communicate(timeout=10)
            assert q.returncode != 0, (out, err)
        finally:
            if q.poll() is None:
                q.kill()
                q.wait()
    LAB["server"].stop()  # also when the stop above failed and the server went on after thaw
    LAB["server"].start()


def test_start_and_stop_while_frozen():
    """Started while the tablespace is frozen: the startup check warns after lcloud.probe_timeout and
    answers the others; a reload that makes it wait longer does not hold pg_ctl stop -m fast."""
    s = LAB["server"]
    s.stop()
    s.configure(**{"lcloud.probe_timeout": "'2s'"})
    try:
        with frozen():
            start = len(s.log_lines())
            s.start()
            msgs = pg.wait_for_messages(s, start, 3, "startup with a frozen tablespace", seconds=30)
            warned = [m for m in msgs if m[0] == "WARNING" and m[1].startswith("lcloud: could not check ")]
            assert len(warned) == 1, msgs
            # named from pg_tablespace, which is not on the frozen file system; one line, no details
            assert warned[0][1] == ("lcloud: could not check 8192-byte page writes to tablespace ts_frozen "
                                    "(%s) within 2 s: the file system did not answer; full_page_writes is %s"
                                    % (LAB["tablespace"], s.sql("SHOW full_page_writes")[0][0])), msgs
            assert warned[0][2] is None and warned[0][3] is None, warned

            s.sql("ALTER SYSTEM SET lcloud.probe_timeout = '10min'")
            s.sql("SELECT pg_reload_conf()")
            time.sleep(2)  # the worker is waiting for the file system again
            rc, seconds = pg_ctl_stop()
            assert rc == 0, "pg_ctl stop -m fast: %s after %.0f s" % ("no return" if rc is None else rc, seconds)
    finally:
        s.stop()  # also when the stop above failed and the server went on after thaw
        s.configure(**{"lcloud.probe_timeout": "'10s'"})
        s.start()
        s.sql("ALTER SYSTEM RESET lcloud.probe_timeout")
        s.sql("SELECT pg_reload_conf()")


def test_answers_again_after_thaw():
    got = {r[1] or r[0]: r for r in rows(psql("SELECT kind, tablespace, path, answer, reason FROM lcloud_datadir()",
                                              timeout=60)[0])}
    assert got["ts_frozen"][3] == "no" and "did not answer" not in got["ts_frozen"][4], got["ts_frozen"]


def test_server_log_has_no_crash():
    for pid, severity, text in LAB["server"].log_lines():
        assert severity != "PANIC", text
        assert "terminated by signal" not in text, text


def setup(stack):
    need_root()
    need_tool("fsfreeze", "util-linux")
    config = pg.pg_config()
    d = stack.enter_context(scratch_dir())
    pcpath, libdir = pg.install_liblcloud(SOURCE_ROOT, d)
    destdir = pg.build_extension(os.path.join(SOURCE_ROOT, "bindings", "postgresql"), d, pcpath, config)
    bindir = pg.private_server_tree(destdir, config)
    LAB["postgres"] = os.path.join(bindir, "postgres")
    LAB["datadir"] = d + "/data"

    _, xmnt = stack.enter_context(mounted_fs("xfs"))
    LAB["mount"] = xmnt
    LAB["tablespace"] = xmnt + "/ts"
    for path in (LAB["tablespace"], d + "/data", d + "/sock"):
        os.mkdir(path, 0o700)
        pg.chown_postgres(path)
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    server = pg.Server(bindir, d + "/data", d + "/sock", env, os.path.join(pg.pg_config_value(config, "bindir"), "psql"))
    LAB["server"] = server
    stack.enter_context(pg.running(server))
    server.sql("CREATE EXTENSION lcloud")
    server.sql("CREATE TABLESPACE ts_frozen LOCATION '%s'" % LAB["tablespace"])
    # nothing of the tablespace left to write or fsync: the shutdown checkpoint never touches it
    server.sql("CHECKPOINT")


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, pg.stop_on_sigterm)  # a timeout still thaws, stops the server and unmounts
    with contextlib.ExitStack() as stack:
        setup(stack)
        main([test_statement_timeout_ends_datadir, test_cancel_ends_check, test_probe_timeout_gives_unknown_row,
              test_waiting_probes_are_bounded, test_fast_stop_while_a_query_waits, test_start_and_stop_while_frozen, test_answers_again_after_thaw,
              test_server_log_has_no_crash])
