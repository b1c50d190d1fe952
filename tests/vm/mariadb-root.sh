#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build (once) an ext4 image holding a Debian 13 userland with mariadb-server
# and sysbench, for a current-lane guest to mount and chroot into, and a
# template InnoDB data directory (mariadb-install-db + sysbench prepare, done
# here on the host where it takes seconds, not under TCG) for the test to put
# on the device under test. Cached under the lcvm cache by the MariaDB version
# Debian 13 offers, so a second call costs nothing. Prints the cache directory:
# DIR/root.ext4, DIR/datadir/, DIR/lab.cnf, DIR/version. Needs root.
set -euo pipefail
CACHE=$(readlink -m "${LCLOUD_VM_CACHE:-/var/cache/lcloud-vm}")
MIRROR=${LCVM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CUR_APT=$CACHE/apt-trixie # the private package lists that `lcvm prepare --lane current` keeps
note() { echo "mariadb-root: $*" >&2; }
die() { note "$*"; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (mmdebstrap, mkfs.ext4 -d)"
if ! command -v mmdebstrap >/dev/null || [[ ! -f $CUR_APT/sources.list ]]; then
    # the current lane's host packages (mmdebstrap) and Debian 13 package lists
    "$(dirname "$(readlink -f "$0")")/lcvm" prepare --lane current >&2 || die "lcvm prepare --lane current failed"
fi
command -v mmdebstrap >/dev/null || die "mmdebstrap missing after lcvm prepare --lane current"
[[ -f $CUR_APT/sources.list ]] || die "no Debian 13 package lists in $CUR_APT after lcvm prepare --lane current"
apt_cur() {
    "$@" -o Dir::Etc::sourcelist="$CUR_APT/sources.list" -o Dir::Etc::sourceparts=/nonexistent \
        -o Dir::Etc::preferences=/nonexistent -o Dir::Etc::preferencesparts=/nonexistent \
        -o Dir::State::Lists="$CUR_APT/lists" -o Dir::Cache="$CUR_APT/cache"
}
# The server's settings, for the template here and for the guest: a buffer pool
# smaller than the tables so that pages are flushed all the time, O_DIRECT.
write_cnf() {
    cat >"$1" <<'CNF'
[mariadbd]
user = mysql
skip-networking
socket = /tmp/lab.sock
innodb_page_size = 16384
innodb_flush_method = O_DIRECT
innodb_buffer_pool_size = 8M
innodb_log_file_size = 16M
innodb_max_dirty_pages_pct = 5
innodb_flush_log_at_trx_commit = 1
innodb_checksum_algorithm = full_crc32
innodb_undo_tablespaces = 0
innodb_fast_shutdown = 1
CNF
}
# In a private mount namespace: mariadb-install-db, start, sysbench prepare, stop.
make_datadir() {
    local t=$1
    write_cnf "$t/lab.cnf"
    cp "$t/lab.cnf" "$t/root/etc/mysql/lab.cnf"
    unshare -m bash -euc '
        r=$1
        mount --make-rprivate /
        for d in proc sys dev; do mount --rbind /$d "$r/$d"; done
        mkdir -p "$r/lab/datadir"
        chroot "$r" chown mysql:mysql /lab/datadir
        chroot "$r" mariadb-install-db --defaults-file=/etc/mysql/lab.cnf --datadir=/lab/datadir \
            --auth-root-authentication-method=normal --skip-test-db --skip-name-resolve --force >"$r/../install.log" 2>&1
        chroot "$r" mariadbd --defaults-file=/etc/mysql/lab.cnf --datadir=/lab/datadir >"$r/../server.log" 2>&1 &
        for i in $(seq 60); do chroot "$r" mariadb-admin --socket=/tmp/lab.sock ping >/dev/null 2>&1 && break; sleep 0.5; done
        chroot "$r" mariadb --socket=/tmp/lab.sock -e "CREATE DATABASE sbtest"
        chroot "$r" sysbench oltp_write_only --db-driver=mysql --mysql-socket=/tmp/lab.sock --mysql-user=root \
            --tables=2 --table-size=20000 prepare >"$r/../prepare.log" 2>&1
        chroot "$r" mariadb-admin --socket=/tmp/lab.sock shutdown
        wait
    ' make-datadir "$t/root" || { tail -n 20 "$t"/*.log >&2; die "making the template data directory failed"; }
    mv "$t/root/lab/datadir" "$t/datadir"
    rmdir "$t/root/lab"
}
# innochecksum with its libraries and loader, to read crash images on the host:
# tools/run-innochecksum FILE...
copy_innochecksum() {
    local t=$1 lib
    mkdir -p "$t/tools/lib"
    cp "$t/root/usr/bin/innochecksum" "$t/tools/"
    for lib in $(chroot "$t/root" ldd /usr/bin/innochecksum | awk '$2 == "=>" { print $3 } $1 ~ /^\// { print $1 }'); do
        cp -L "$t/root$lib" "$t/tools/lib/"
    done
    cat >"$t/tools/run-innochecksum" <<'RUN'
#!/bin/sh
d=$(dirname "$(readlink -f "$0")")
exec "$d/lib/ld-linux-x86-64.so.2" --library-path "$d/lib" "$d/innochecksum" "$@"
RUN
    chmod +x "$t/tools/run-innochecksum"
    "$t/tools/run-innochecksum" --version >/dev/null || die "innochecksum does not run from $t/tools"
}
ver=$(apt_cur apt-cache policy mariadb-server 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
[[ -n $ver && $ver != "(none)" ]] || die "Debian 13 offers no mariadb-server in $CUR_APT"
dir=$CACHE/mariadb/trixie-${ver//:/%}
img=$dir/root.ext4
if [[ ! -e $dir/.ready ]]; then
    exec 9>"$CACHE/.mariadb-lock"
    flock 9
    if [[ ! -e $dir/.ready ]]; then
        note "building a Debian 13 root with mariadb-server $ver and sysbench (mmdebstrap, a few minutes, once)"
        mkdir -p "$CACHE/mariadb"
        t=$(mktemp -d "$CACHE/mariadb/.tmp.XXXXXX")
        trap 'rm -rf "$t"' EXIT
        # No services start in the build (policy-rc.d from mmdebstrap); the
        # guest starts mariadbd itself.
        if ! mmdebstrap --variant=apt --include="mariadb-server=$ver,mariadb-client,sysbench" \
                --dpkgopt='path-exclude=/usr/share/{doc,man,locale}/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
                --components=main trixie "$t/root" "deb $MIRROR trixie main" >"$t/mmdebstrap.log" 2>&1; then
            tail -n 20 "$t/mmdebstrap.log" >&2
            die "mmdebstrap failed"
        fi
        chroot "$t/root" mariadbd --version >"$t/version" || die "mariadbd does not run in the new root"
        chroot "$t/root" innochecksum --version >/dev/null 2>&1 || die "innochecksum missing in the new root"
        make_datadir "$t"
        copy_innochecksum "$t"
        rm -rf "$t/root/var/cache/apt/archives/"*.deb "$t/root/var/lib/apt/lists/"*_Packages
        # Room for the temporary files of mariadbd and sysbench; the data
        # directory itself lives on the device under test.
        size=$(( $(du -sm "$t/root" | cut -f1) + 200 ))
        mkfs.ext4 -q -F -L mariadb-root -d "$t/root" "$t/root.ext4" "${size}M" >"$t/mkfs.log" 2>&1 \
            || { cat "$t/mkfs.log" >&2; die "mkfs.ext4 -d failed"; }
        rm -rf "$t/root"
        rm -rf "$dir"
        mv "$t" "$dir"
        trap - EXIT
        touch "$dir/.ready"
        for old in "$CACHE/mariadb"/trixie-*; do [[ $old == "$dir" ]] || rm -rf "$old"; done
    fi
    flock -u 9
fi
echo "$dir"
