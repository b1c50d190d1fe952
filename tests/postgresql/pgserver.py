# SPDX-License-Identifier: LGPL-2.1-or-later
"""A private PostgreSQL for the extension's tests: the extension built with
PGXS against liblcloud installed in a scratch prefix, `make install`ed into
a private copy of the server's directories (so nothing is written into the
system's PostgreSQL), and a server run by the postgres user from that copy
on its own Unix socket directory, with no TCP. Every server started here is
stopped when its context ends, also on failure."""
import contextlib
import glob
import os
import pwd
import re
import shutil
import signal
import subprocess
import time

PG_USER = "postgres"
# The server's messages, one per line: "[pid] SEVERITY:  text" (see log_line_prefix below).
LOG_LINE = re.compile(r"^\[(\d+)\] ([A-Z]+):  (.*)$")


def pg_config():
    """pg_config of the newest PostgreSQL installed with its server (postgresql-NN) and PGXS
    (postgresql-server-dev-NN); the client packages have a pg_config too."""
    found = [c for c in glob.glob("/usr/lib/postgresql/*/bin/pg_config")
             if os.path.exists(os.path.join(os.path.dirname(c), "postgres"))
             and os.path.exists(pg_config_value(c, "pgxs"))]
    assert found, ("no PostgreSQL server with PGXS: install postgresql-15 and postgresql-server-dev-15 "
                   "(scripts/install-deps --tests does)")
    return sorted(found, key=lambda c: int(c.split("/")[4]))[-1]


def pg_config_value(config, what):
    return subprocess.run([config, "--" + what], check=True, capture_output=True, text=True).stdout.strip()


def install_liblcloud(source_root, scratch):
    """meson install of the library into SCRATCH/prefix; returns (PKG_CONFIG_PATH, libdir)."""
    prefix = os.path.join(scratch, "prefix")
    build = os.path.join(scratch, "lcloud-build")
    for args in (["meson", "setup", "--prefix", prefix, "-Dtests=false", build, source_root],
                 ["meson", "install", "-C", build, "--quiet"]):
        p = subprocess.run(args, capture_output=True, text=True)
        assert p.returncode == 0, "%s failed: %s%s" % (" ".join(args), p.stdout[-2000:], p.stderr[-2000:])
    pcdirs = [root for root, _, files in os.walk(prefix) if "lcloud.pc" in files]
    assert len(pcdirs) == 1, pcdirs
    return pcdirs[0], os.path.dirname(pcdirs[0])


def build_extension(source_dir, scratch, pkg_config_path, config):
    """Copies the extension's sources (with ../common, which it shares with the MariaDB plugin),
    builds them with PGXS and installs them under SCRATCH/root (make install DESTDIR=...);
    returns that DESTDIR. The install runs without PKG_CONFIG_PATH, as `sudo make install`
    does (sudo resets the environment), the way the README says."""
    src = os.path.join(scratch, "bindings", "postgresql")
    ignore = shutil.ignore_patterns("*.o", "*.so", "*.bc", "lcloud-flags.mk")
    shutil.copytree(source_dir, src, ignore=ignore)
    shutil.copytree(os.path.join(source_dir, "..", "common"), os.path.join(scratch, "bindings", "common"),
                    ignore=ignore)
    env = dict(os.environ, PKG_CONFIG_PATH=pkg_config_path)
    sudo_env = {k: v for k, v in os.environ.items() if k != "PKG_CONFIG_PATH"}
    destdir = os.path.join(scratch, "root")
    for args, run_env in ((["make", "PG_CONFIG=" + config, "PG_CFLAGS=-Werror"], env),
                          (["make", "PG_CONFIG=" + config, "install", "DESTDIR=" + destdir], sudo_env)):
        p = subprocess.run(args, cwd=src, env=run_env, capture_output=True, text=True)
        assert p.returncode == 0, "%s failed: %s%s" % (" ".join(args), p.stdout[-3000:], p.stderr[-3000:])
        assert "warning:" not in p.stderr, p.stderr
    return destdir


def _mirror(real, private):
    """PRIVATE gets a symbolic link to every entry of REAL it does not have itself."""
    os.makedirs(private, exist_ok=True)
    for name in os.listdir(real):
        mine = os.path.join(private, name)
        if os.path.isdir(mine) and not os.path.islink(mine):
            _mirror(os.path.join(real, name), mine)
        elif not os.path.lexists(mine):
            os.symlink(os.path.join(real, name), mine)


def private_server_tree(destdir, config):
    """Completes DESTDIR into a server of its own: PostgreSQL finds its share
    and lib directories relative to its executable (resolving links), so the
    programs are copied and everything else is linked. Returns its bindir."""
    bindir = pg_config_value(config, "bindir")
    mybin = destdir + bindir
    os.makedirs(mybin, exist_ok=True)
    for prog in ("postgres", "initdb", "pg_ctl"):
        shutil.copy2(os.path.join(bindir, prog), os.path.join(mybin, prog))
    for what in ("sharedir", "pkglibdir"):
        real = pg_config_value(config, what)
        _mirror(real, destdir + real)
    return mybin


def as_postgres(args, env=None, check=True, timeout=120, root=None):
    """Runs ARGS as the postgres user: the host's, or with ROOT the one of that chroot (its own uid)."""
    if root:
        cmd = ["chroot", "--userspec=%s:%s" % (PG_USER, PG_USER), root] + list(args)
    else:
        pw = pwd.getpwnam(PG_USER)
        cmd = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid, "--clear-groups", "--"] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (%d): %s%s" % (" ".join(args), p.returncode, p.stdout, p.stderr))
    return p


def chown_postgres(path):
    pw = pwd.getpwnam(PG_USER)
    os.chown(path, pw.pw_uid, pw.pw_gid)


def _alive(pid):
    """Is PID a running process (a zombie waiting for its parent is not)?"""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class Server:
    """One cluster in DATADIR, run from the private BINDIR by the postgres user. With ROOT, the
    server and psql run in that chroot, and every path given is one seen from inside it."""

    def __init__(self, bindir, datadir, sockdir, env, psql, root=None):
        self.bindir, self.datadir, self.sockdir, self.env, self.psql_prog = bindir, datadir, sockdir, env, psql
        self.root = root
        self.port = 50000 + os.getpid() % 10000
        self.logfile = os.path.join(sockdir, "server.log")

    def host(self, path):
        """PATH (as the server sees it) as this process sees it."""
        return self.root + path if self.root else path

    def as_postgres(self, args, check=True):
        return as_postgres(args, env=self.env, check=check, root=self.root)

    def psql_args(self):
        """psql, connected to this server as the postgres role, quiet and unaligned."""
        return (["chroot", self.root] if self.root else []) + [
            self.psql_prog, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.sockdir,
            "-p", str(self.port), "-U", PG_USER, "-d", "postgres"]

    def initdb(self, waldir=None):
        args = [os.path.join(self.bindir, "initdb"), "-D", self.datadir, "--auth=trust", "--no-sync", "-E", "UTF8",
                "--locale=C"]
        if waldir:
            args += ["-X", waldir]
        self.as_postgres(args)
        self.configure(port=self.port, listen_addresses="''", unix_socket_directories="'%s'" % self.sockdir,
                       log_line_prefix="'[%p] '", shared_preload_libraries="'lcloud'")

    def configure(self, **settings):
        with open(self.host(os.path.join(self.datadir, "postgresql.conf")), "a") as f:
            for k, v in settings.items():
                f.write("%s = %s\n" % (k, v))

    def start(self):
        self.as_postgres([os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, "-l", self.logfile, "-w", "-t", "60",
                          "start"])

    def stop(self):
        """Stops the server, killing it if pg_ctl cannot; fails if its postmaster is still alive."""
        pidfile = self.host(os.path.join(self.datadir, "postmaster.pid"))
        if not os.path.exists(pidfile):
            return
        with open(pidfile) as f:
            pid = int(f.readline())
        p = self.as_postgres([os.path.join(self.bindir, "pg_ctl"), "-D", self.datadir, "-w", "-t", "60", "-m", "fast",
                              "stop"], check=False)
        if p.returncode != 0 and _alive(pid):
            os.kill(pid, signal.SIGKILL)  # the postmaster's children exit when it is gone
        end = time.monotonic() + 30
        while _alive(pid):
            assert time.monotonic() < end, "postmaster %d still running after stop" % pid
            time.sleep(0.1)

    def restart(self):
        self.stop()
        self.start()

    def sql(self, query, check=True):
        """Runs QUERY; returns its rows as lists of strings (None for NULL)."""
        p = subprocess.run(self.psql_args() + ["-F", "\x1f", "-R", "\x1e", "-P", "null=\x1dNULL", "-c", query],
                           capture_output=True, text=True)
        if check and p.returncode != 0:
            raise AssertionError("%s: %s" % (query, p.stderr))
        if not check:
            return p
        rows = [r for r in p.stdout.rstrip("\n").split("\x1e") if r != ""]
        return [[None if c == "\x1dNULL" else c for c in r.split("\x1f")] for r in rows]

    def log_lines(self):
        """The server log as (pid, severity, text) tuples, continuation lines left out."""
        with open(self.host(self.logfile)) as f:
            return [m.groups() for m in map(LOG_LINE.match, f.read().splitlines()) if m]

    def messages(self, start=0, debug=False):
        """lcloud's messages from line START of the log on: (severity, text, detail, hint); with DEBUG,
        only its DEBUG1 ones (the details), else all others."""
        lines = self.log_lines()
        out = []
        for i in range(start, len(lines)):
            pid, severity, text = lines[i]
            if not text.startswith("lcloud: ") or (severity == "DEBUG") != debug:
                continue
            extra = {}
            for j in range(i + 1, min(i + 3, len(lines))):  # its own DETAIL and HINT follow it directly
                if lines[j][0] != pid or lines[j][1] not in ("DETAIL", "HINT"):
                    break
                extra[lines[j][1]] = lines[j][2]
            out.append((severity, text, extra.get("DETAIL"), extra.get("HINT")))
        return out


@contextlib.contextmanager
def running(server, **initdb_args):
    """initdb, start; stop on the way out whatever happened."""
    server.initdb(**initdb_args)
    try:
        server.start()
        yield server
    finally:
        server.stop()


def row_from_lcloudctl(doc, probe):
    """What a lcloud_check()/lcloud_datadir() row must say, from `lcloudctl check --format json` (DOC) and
    `lcloudctl probe --format json` (PROBE, its first probe) of the same path."""
    fs = [l for l in probe["layers"] if l["layer"] == "filesystem"][0]["facts"]
    verdict = probe["verdict"][doc["io_path"]]
    evidence = []
    for r in verdict["reasons"]:
        if r["evidence"] and r["evidence"] not in evidence:
            evidence.append(r["evidence"])
    return {"io_path": doc["io_path"], "answer": doc["answer"], "max_untorn_bytes": str(verdict["max_untorn_bytes"]),
            "reason": doc["why"], "evidence": "{" + ",".join(evidence) + "}", "filesystem": fs["fstype"],
            "mount_point": fs["mount_point"], "device": fs["mount_source"]}


def wait_for_messages(server, start, count, what, seconds=60, debug=False):
    """The server's lcloud messages since START (with DEBUG: the DEBUG1 details), once there are COUNT
    (or SECONDS passed: then fail)."""
    end = time.monotonic() + seconds
    while True:
        msgs = server.messages(start, debug=debug)
        if len(msgs) >= count or time.monotonic() > end:
            assert len(msgs) == count, "%s: expected %d lcloud messages, got %s" % (what, count, msgs)
            return msgs
        time.sleep(0.2)


def stop_on_sigterm(signum, frame):
    """A test's SIGTERM handler: a timeout still stops the server and unmounts (the ExitStack unwinds)."""
    raise SystemExit("terminated: stopping the server and unmounting first")


def fd_flags(pid, under, root=""):
    """The open flags of every file under UNDER that process PID has open (from /proc/PID/fdinfo); with
    ROOT (a chroot the server runs in), UNDER and the names returned are paths inside it."""
    prefix = root + under + "/"
    out = {}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            target = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                flags = [l for l in f.read().splitlines() if l.startswith("flags:")][0]
        except OSError:
            continue
        if target.startswith(prefix):
            out[target[len(root):]] = int(flags.split()[1], 8)
    return out

