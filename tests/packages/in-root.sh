#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Runs inside a clean Debian root where only liblcloud's packages (and the
# tools a user would have: a compiler, pkg-config, python3, PostgreSQL,
# man-db, bash-completion) were installed with apt, which brought
# mariadb-server for mariadb-plugin-lcloud: does the installed copy work as
# a user gets it, with no source tree? run.sh copies it in and runs it with
# chroot, /proc, /sys and /dev mounted. Argument: the PostgreSQL major
# version of the root's server. Prints each check; exits non-zero at the
# first that fails.
set -eu
pg_major=$1
step() { echo "in-root: $*"; }
fail() { echo "in-root: FAILED: $*" >&2; exit 1; }
work=$(mktemp -d /var/tmp/lcloud-installed.XXXXXX)
# a file of its own on the root's file system (RWF_ATOMIC confirmation writes
# a temporary file next to it)
file=$work/data
dd if=/dev/zero of="$file" bs=64k count=4 status=none

step "lcloudctl --version"
lcloudctl --version | grep -q "0\.[0-9]" || fail "lcloudctl --version"
step "lcloud-target --version (the reference device, in lcloudctl's package)"
lcloud-target --version | grep -q "^lcloud-target 0\.[0-9]" || fail "lcloud-target --version"
command -v lcloudctl | grep -qx /usr/bin/lcloudctl || fail "lcloudctl is not /usr/bin/lcloudctl"
# a DBA's shell: PATH without sbin, no root
runuser -u nobody -- env PATH=/usr/local/bin:/usr/bin:/bin lcloudctl --version >/dev/null \
	|| fail "lcloudctl is not on a user's PATH"

step "lcloudctl probe $file"
lcloudctl probe --format json "$file" >"$work/probe.json" || fail "lcloudctl probe"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["probes"][0]["layers"], d' \
	"$work/probe.json" || fail "lcloudctl probe's JSON has no layers"
# the installed schema describes the output
test -s /usr/share/lcloud/lcloudctl.schema.json || fail "no JSON schema in /usr/share/lcloud"

step "lcloudctl check $file --size 16K"
rc=0
lcloudctl check "$file" --size 16K || rc=$?
# 0 untorn on some path, 6 on none, 8 unknown: each an answer; anything else is not
case $rc in 0|6|8) ;; *) fail "lcloudctl check exited $rc" ;; esac

step "a C program: cc \$(pkg-config --cflags --libs lcloud), and liblcloud the same"
cat >"$work/prog.c" <<'PROG'
#include <lcloud/lcloud.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct lcloud_ctx *ctx;
	struct lcloud_probe *probe;
	enum lcloud_io_path path;
	char why[256];
	int answer;

	if (lcloud_ctx_new(&ctx) < 0 || lcloud_probe_path(ctx, argv[1], 0, &probe) < 0)
		return 2;
	answer = lcloud_probe_check(probe, LCLOUD_PATH_BEST, 16384, &path, why, sizeof(why));
	if (answer < 0)
		return 3;
	printf("liblcloud %s: %u layers, 16K %s (%s)\n", lcloud_version(),
	       lcloud_probe_get_layer_count(probe), lcloud_answer_to_string(answer), why);
	lcloud_probe_free(probe);
	lcloud_ctx_free(ctx);
	return argc == 2 && lcloud_version()[0] != '\0' ? 0 : 4;
}
PROG
# shellcheck disable=SC2046 # pkg-config's words are separate arguments
cc -Wall -Werror -o "$work/prog" "$work/prog.c" $(pkg-config --cflags --libs lcloud) \
	|| fail "compiling against the installed liblcloud"
"$work/prog" "$file" || fail "the C program"
# the library's own name too (liblcloud.pc: Requires lcloud)
[ "$(pkg-config --cflags --libs liblcloud)" = "$(pkg-config --cflags --libs lcloud)" ] \
	|| fail "pkg-config liblcloud does not give what pkg-config lcloud gives"
ldd "$work/prog" | grep -Eq "liblcloud\.so\.0 => /(usr/)?lib/[^ ]*/liblcloud\.so\.0 " \
	|| fail "the C program does not load the installed liblcloud.so.0"

step "python3 -c 'import lcloud'"
python3 - "$file" <<'PY' || fail "the Python binding"
import sys
import lcloud
p = lcloud.probe(sys.argv[1])
assert p.layers, p
c = lcloud.check(sys.argv[1], 16384)
assert c.answer in ("untorn", "no", "unknown"), c
print("lcloud", lcloud.version(), p.target, [l.kind for l in p.layers], c.answer)
PY

step "PostgreSQL $pg_major: CREATE EXTENSION lcloud in a throwaway cluster"
bin=/usr/lib/postgresql/$pg_major/bin
# the server's data, socket and log in a folder of the postgres user's
pg=$work/pg
pgdata=$pg/data
mkdir -p "$pgdata" "$pg/sock"
chown -R postgres:postgres "$pg"
chmod 755 "$work"
runuser -u postgres -- "$bin/initdb" -A trust -D "$pgdata" >"$work/initdb.log" 2>&1 \
	|| { cat "$work/initdb.log"; fail "initdb"; }
# a private socket folder and no TCP: nothing else on the machine can meet it
runuser -u postgres -- "$bin/pg_ctl" -D "$pgdata" -l "$pg/server.log" -w \
	-o "-c listen_addresses= -k $pg/sock -p 5497 -c shared_preload_libraries=lcloud" start >/dev/null \
	|| { cat "$pg/server.log"; fail "the server did not start with lcloud preloaded"; }
rc=0
runuser -u postgres -- "$bin/psql" -X -v ON_ERROR_STOP=1 -h "$pg/sock" -p 5497 -d postgres -At \
	-c "CREATE EXTENSION lcloud" -c "SELECT count(*) > 0 FROM lcloud_datadir()" >"$work/psql.out" 2>&1 || rc=$?
runuser -u postgres -- "$bin/pg_ctl" -D "$pgdata" -m fast -w stop >/dev/null || true
cat "$work/psql.out"
[ "$rc" -eq 0 ] && grep -qx t "$work/psql.out" || { cat "$pg/server.log"; fail "the extension"; }

step "MariaDB: the plugin loaded by lcloud.cnf at the server's start, and by INSTALL SONAME"
# the server's own files, as the package made them (mariadb-install-db in its postinst); a socket of
# our own, no TCP, the error log in a file: nothing else on the machine meets this server
md=$work/md
mkdir -p "$md" /run/mysqld
chown mysql:mysql "$md" /run/mysqld
test -f /usr/lib/mysql/plugin/lcloud.so || fail "no /usr/lib/mysql/plugin/lcloud.so"
grep -qx "plugin_load_add = lcloud" /etc/mysql/mariadb.conf.d/lcloud.cnf || fail "lcloud.cnf does not load the plugin"
md_sql() { mariadb --no-defaults -S "$md/sock" -u root -N -B -e "$1"; }
md_start() {
	# a name with an extension: mariadbd adds .err to one without
	: >"$md/error.log"
	chown mysql:mysql "$md/error.log"
	mariadbd --user=mysql --skip-networking --socket="$md/sock" --pid-file="$md/pid" --log-error="$md/error.log" &
	md_pid=$!
	i=0
	until md_sql "SELECT 1" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ "$i" -gt 120 ] || ! kill -0 "$md_pid" 2>/dev/null; then
			cat "$md/error.log"
			fail "mariadbd did not start"
		fi
		sleep 0.5
	done
}
md_stop() {
	md_sql "SHUTDOWN" >/dev/null 2>&1 || kill "$md_pid" 2>/dev/null || true
	i=0
	while kill -0 "$md_pid" 2>/dev/null && [ "$i" -lt 120 ]; do i=$((i + 1)); sleep 0.5; done
	kill -9 "$md_pid" 2>/dev/null || true
	wait "$md_pid" 2>/dev/null || true
}
md_has_status() {
	md_sql "SHOW GLOBAL STATUS LIKE 'lcloud%'" >"$md/status" || return 1
	cat "$md/status"
	# the server writes a status variable's name with a capital: Lcloud_checks
	grep -Eiq "^lcloud_doublewrite_needed	(yes|no|unknown)$" "$md/status" &&
		grep -Eiq "^lcloud_checks	[1-9]" "$md/status" && grep -iq "^lcloud_reason	." "$md/status"
}
trap 'md_stop' EXIT
md_start
md_has_status || { cat "$md/error.log"; fail "no lcloud status variables after a start with lcloud.cnf"; }
grep -q "lcloud: " "$md/error.log" || { cat "$md/error.log"; fail "no lcloud lines in the error log"; }
[ "$(md_sql "SELECT @@lcloud_enforce")" = 0 ] || fail "lcloud.cnf leaves lcloud_enforce on"
md_stop
# a server that was running when the package came: INSTALL SONAME, no restart
mv /etc/mysql/mariadb.conf.d/lcloud.cnf "$md/lcloud.cnf"
md_start
! md_has_status >/dev/null || fail "lcloud loaded without lcloud.cnf"
md_sql "INSTALL SONAME 'lcloud'" || { cat "$md/error.log"; fail "INSTALL SONAME 'lcloud'"; }
md_has_status || fail "no lcloud status variables after INSTALL SONAME"
md_sql "UNINSTALL SONAME 'lcloud'" || fail "UNINSTALL SONAME 'lcloud'"
md_stop
mv "$md/lcloud.cnf" /etc/mysql/mariadb.conf.d/lcloud.cnf
md_start
md_has_status >/dev/null || fail "no lcloud status variables after the restart with lcloud.cnf"
! grep -qi "already installed" "$md/error.log" || { cat "$md/error.log"; fail "an error at the restart"; }
md_stop
trap - EXIT

step "man -w lcloudctl, lcloud.7 and an API page"
[ "$(man -w lcloudctl)" = /usr/share/man/man1/lcloudctl.1.gz ] || fail "man lcloudctl is not lcloudctl(1)"
man -w 7 lcloud >/dev/null || fail "man 7 lcloud is not found"
man -w lcloud_probe_check >/dev/null || fail "man lcloud_probe_check is not found"
step "man lcloud-postgresql and man lcloud-mariadb, with the database packages"
[ "$(dpkg -S "$(man -w lcloud-postgresql)" | cut -d: -f1)" = "postgresql-$pg_major-lcloud" ] \
	|| fail "man lcloud-postgresql is not postgresql-$pg_major-lcloud's"
man lcloud-postgresql 2>/dev/null | grep -q "lcloud_datadir()" || fail "man lcloud-postgresql does not show lcloud_datadir()"
man lcloud-postgresql 2>/dev/null | grep -q "lcloud.probe_timeout" || fail "man lcloud-postgresql has no lcloud.probe_timeout"
[ "$(dpkg -S "$(man -w lcloud-mariadb)" | cut -d: -f1)" = mariadb-plugin-lcloud ] \
	|| fail "man lcloud-mariadb is not mariadb-plugin-lcloud's"

step "bash completion: lcloudctl pro<TAB>"
bash -c '. /usr/share/bash-completion/bash_completion
	_completion_loader lcloudctl
	complete -p lcloudctl >/dev/null || exit 1
	fn=$(complete -p lcloudctl | sed -n "s/.*-F \([^ ]*\).*/\1/p")
	COMP_WORDS=(lcloudctl pro); COMP_CWORD=1; COMP_LINE="lcloudctl pro"; COMP_POINT=${#COMP_LINE}
	"$fn" lcloudctl pro lcloudctl
	printf "%s\n" "${COMPREPLY[@]}" | grep -qx probe' || fail "bash completion of lcloudctl"

step "udev rule"
grep -q /usr/bin/lcloudctl /usr/lib/udev/rules.d/60-lcloud.rules || fail "the udev rule does not run /usr/bin/lcloudctl"

rm -rf "$work"
echo "in-root: all passed"
