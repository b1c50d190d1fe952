# SPDX-License-Identifier: LGPL-2.1-or-later
"""A private MariaDB for the plugin's tests: the plugin built from a copy of
bindings/mariadb against the build tree's liblcloud (its uninstalled
pkg-config file), a data directory made by mariadb-install-db, and mariadbd
run as the mysql user with a configuration file of the test's own
(--defaults-file: no system my.cnf is read), on a private port on 127.0.0.1
and a private socket. Every server started here is stopped when its context
ends, also on failure."""
import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import time

MD_USER = "mysql"
O_DIRECT = 0o40000


def need_mariadb():
    for prog, package in (("mariadbd", "mariadb-server"), ("mariadb-install-db", "mariadb-server"),
                          ("mariadb", "mariadb-client")):
        assert shutil.which(prog), "%s missing: install %s (scripts/install-deps --tests does)" % (prog, package)
    assert os.path.exists("/usr/include/mariadb/server/mysql/plugin.h"), \
        "no MariaDB plugin headers: install libmariadbd-dev (scripts/install-deps --tests does)"


def build_plugin(source_root, build_root, scratch, make_vars=()):
    """Builds a copy of bindings/mariadb with its Makefile against BUILD_ROOT's liblcloud (whose
    uninstalled pkg-config file names the build's library, not the public header's folder);
    MAKE_VARS (NAME=VALUE) name another server's headers (MARIADB_INCLUDE, MYSQLSERVICES).
    Returns the plugin directory holding lcloud.so."""
    src = os.path.join(scratch, "bindings", "mariadb")
    for folder in ("mariadb", "common"):  # common: shared with the PostgreSQL extension
        shutil.copytree(os.path.join(source_root, "bindings", folder), os.path.join(scratch, "bindings", folder),
                        ignore=shutil.ignore_patterns("*.o", "*.so", "lcloud-flags.mk"))
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(build_root, "meson-uninstalled"))
    p = subprocess.run(["make", "CFLAGS=-O2 -g -Werror", "CPPFLAGS=-I" + os.path.join(source_root, "include")]
                       + list(make_vars), cwd=src, env=env, capture_output=True, text=True)
    assert p.returncode == 0, "make failed: %s%s" % (p.stdout[-3000:], p.stderr[-3000:])
    assert "warning:" not in p.stderr, p.stderr
    plugins = os.path.join(scratch, "plugins")
    os.mkdir(plugins, 0o755)
    shutil.copy2(os.path.join(src, "lcloud.so"), plugins)
    return plugins


def mysql_ids(root=None):
    """The mysql user's (uid, gid): the host's, or with ROOT that chroot's own."""
    if not root:
        pw = pwd.getpwnam(MD_USER)
        return pw.pw_uid, pw.pw_gid
    with open(root + "/etc/passwd") as f:
        for line in f:
            fields = line.split(":")
            if fields[0] == MD_USER:
                return int(fields[2]), int(fields[3])
    raise AssertionError("no %s user in %s" % (MD_USER, root))


def chown_mysql(path, root=None):
    os.chown((root or "") + path, *mysql_ids(root))


def command(args, root=None):
    """ARGS as they run: on the host, or with ROOT in that chroot (PATH of its own)."""
    return ["chroot", root, "/usr/bin/env", "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"] + list(args) \
        if root else list(args)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def install_db(datadir, root=None):
    """An empty data directory made by mariadb-install-db (as the mysql user; root without password);
    DATADIR is a path in ROOT when given."""
    os.makedirs((root or "") + datadir, 0o750, exist_ok=True)
    chown_mysql(datadir, root)
    p = subprocess.run(command(["mariadb-install-db", "--no-defaults", "--user=" + MD_USER, "--datadir=" + datadir,
                        "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve",
                        "--innodb-log-file-size=8M", "--innodb-buffer-pool-size=16M"], root),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, "mariadb-install-db failed: %s%s" % (p.stdout[-2000:], p.stderr[-2000:])


class Server:
    """mariadbd over DATADIR with the plugin loaded; start() takes extra options for one run. With
    ROOT, the server runs in that chroot and every path given or kept here is one in it (host()
    gives the host's)."""

    def __init__(self, scratch, name, datadir, plugin_dir, libdir, root=None):
        self.root = root
        self.dir = os.path.join(scratch, name)
        os.makedirs(self.host(self.dir), 0o755, exist_ok=True)
        chown_mysql(self.dir, root)
        self.datadir = datadir
        self.socket = os.path.join(self.dir, "mysqld.sock")
        self.port = free_port()
        self.log = os.path.join(self.dir, "error.log")
        self.cnf = os.path.join(self.dir, "my.cnf")
        self.env = dict(os.environ, LD_LIBRARY_PATH=libdir) if libdir else None
        self.proc = None
        self.log_offset = 0
        # PLUGIN_DIR None: a server without the plugin (a database some other test needs running)
        plugin = "plugin-dir = %s\nplugin-load-add = lcloud.so\n" % plugin_dir if plugin_dir else ""
        with open(self.host(self.cnf), "w") as f:
            f.write("[mariadbd]\nuser = %s\ndatadir = %s\nsocket = %s\nport = %d\nbind-address = 127.0.0.1\n"
                    "pid-file = %s/mysqld.pid\nlog-error = %s\n%s"
                    "innodb_buffer_pool_size = 16M\ninnodb_log_file_size = 8M\n"
                    % (MD_USER, datadir, self.socket, self.port, self.dir, self.log, plugin))

    def host(self, path):
        return (self.root or "") + path

    def start(self, *options, expect_failure=False, seconds=60):
        """Starts the server; with EXPECT_FAILURE waits for it to exit and returns its exit code."""
        assert self.proc is None
        log = self.host(self.log)
        self.log_offset = os.path.getsize(log) if os.path.exists(log) else 0
        self.proc = subprocess.Popen(command(["mariadbd", "--defaults-file=" + self.cnf] + list(options),
                                             self.root), env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            rc = self.proc.poll()
            if rc is not None:
                self.proc = None
                assert expect_failure, "mariadbd exited %d at start:\n%s" % (rc, "\n".join(self.lines()[-30:]))
                return rc
            if not expect_failure and self.ping():
                return 0
            time.sleep(0.2)
        self.stop()
        raise AssertionError("mariadbd %s within %d s" % ("did not exit" if expect_failure else "did not start",
                                                           seconds))

    def ping(self):
        return subprocess.run(command(["mariadb-admin", "--no-defaults", "--socket=" + self.socket, "-uroot",
                                       "ping"], self.root), capture_output=True).returncode == 0

    def stop(self):
        if self.proc is None:
            return
        subprocess.run(command(["mariadb-admin", "--no-defaults", "--socket=" + self.socket, "-uroot", "shutdown"],
                               self.root), capture_output=True, timeout=60)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def sql(self, query):
        """Rows of QUERY, as lists of strings, through the socket."""
        p = subprocess.run(command(["mariadb", "--no-defaults", "--socket=" + self.socket, "-uroot", "--batch",
                                    "--skip-column-names", "--raw", "-e", query], self.root),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, "%s: %s" % (query, p.stderr)
        return [line.split("\t") for line in p.stdout.splitlines()]

    def tcp_sql(self, query):
        p = subprocess.run(command(["mariadb", "--no-defaults", "--protocol=tcp", "-h127.0.0.1", "-P%d" % self.port,
                                    "-uroot", "--batch", "--skip-column-names", "-e", query], self.root),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, "%s: %s" % (query, p.stderr)
        return p.stdout

    def status(self):
        return {k.lower(): v for k, v in self.sql("SHOW GLOBAL STATUS LIKE 'lcloud%'")}

    def lines(self):
        """The error log's lines since the last start."""
        with open(self.host(self.log), errors="replace") as f:
            f.seek(self.log_offset)
            return f.read().splitlines()

    def mark(self):
        """From now on lines() and lcloud_lines() start here."""
        self.log_offset = os.path.getsize(self.host(self.log))

    def lcloud_lines(self):
        """(severity, text) of the plugin's messages since the last start or mark, a message the
        plugin continued over several lines (the server cuts each at 512 bytes) joined again."""
        out = []
        for line in self.lines():
            if "] mariadbd: lcloud: " not in line:
                continue
            assert len(line.split("] mariadbd: ", 1)[1]) < 512, line
            severity = line.split("[", 1)[1].split("]", 1)[0]
            text = line.split("] mariadbd: lcloud: ", 1)[1]
            if text.startswith("(continued) "):
                assert out and out[-1][0] == severity, (out, line)
                out[-1] = (severity, out[-1][1] + " " + text[len("(continued) "):])
            else:
                out.append((severity, text))
        return out

    def server_pid(self):
        """mariadbd's pid: through chroot and env it is a child's, by then exec'd in place."""
        return self.proc.pid

    def open_flags(self, path):
        """The open flags the kernel shows for the server's descriptor of PATH."""
        pid = self.server_pid()
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if os.readlink("/proc/%d/fd/%s" % (pid, fd)) == self.host(path):
                    with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                        return int(f.read().split("flags:")[1].split()[0], 8)
            except OSError:
                continue
        raise AssertionError("the server has no descriptor of %s" % path)


@contextlib.contextmanager
def running(server, *options):
    server.start(*options)
    try:
        yield server
    finally:
        server.stop()


def stop_on_sigterm(signo, frame):
    raise SystemExit(1)  # meson's timeout: unwind, so servers stop and file systems are unmounted
