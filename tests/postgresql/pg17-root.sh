#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build (once) a Debian 13 root with PostgreSQL 17, its PGXS files and what
# liblcloud needs to build (scripts/install-deps' build packages), for
# test_extension_pg17.py to build liblcloud and the extension in and run a
# PostgreSQL 17 server from through chroot: Debian 12 has only PostgreSQL 15,
# and the host's apt sources are never touched. Cached under the lcvm cache,
# keyed by what goes into it (suite, mirror, packages, this recipe), so a
# second call costs nothing and a change of the package list rebuilds it.
# Prints the cache directory: DIR/root/, DIR/version. Needs root.
set -euo pipefail
CACHE=$(readlink -m "${LCLOUD_VM_CACHE:-/var/cache/lcloud-vm}")
MIRROR=${LCVM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
PG_MAJOR=17
HERE=$(dirname "$(readlink -f "$0")")
note() { echo "pg17-root: $*" >&2; }
die() { note "$*"; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null || die "mmdebstrap missing: install it (scripts/install-deps --tests does)"

build_pkgs=$(sed -n 's/^build_pkgs="\(.*\)"$/\1/p' "$HERE/../../scripts/install-deps")
[[ -n $build_pkgs ]] || die "no build_pkgs line in scripts/install-deps"
# make: PGXS. No postgresql-contrib or client extras: the test needs the
# server, initdb, pg_ctl and psql only.
pkgs="postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR make $build_pkgs"
# The key: this recipe itself, the mirror and the package list.
key=$({ cat "$0"; printf '%s\n' "$MIRROR" "$pkgs"; } | sha256sum | cut -c1-16)
dir=$CACHE/postgresql/pg$PG_MAJOR-$SUITE-$key
# In use from now on (see the cleanup below).
[[ -e $dir/.ready ]] && touch "$dir/.used"
if [[ ! -e $dir/.ready ]]; then
    mkdir -p "$CACHE/postgresql"
    exec 9>"$CACHE/.postgresql-lock"
    flock 9
    if [[ ! -e $dir/.ready ]]; then
        note "building a Debian 13 root with PostgreSQL $PG_MAJOR and liblcloud's build packages (mmdebstrap, a few minutes, once)"
        t=$(mktemp -d "$CACHE/postgresql/.tmp.XXXXXX")
        trap 'rm -rf "$t"' EXIT
        # postgresql-common would make and start a "main" cluster while
        # installing: the test makes its own, so none is made. No services
        # start in the build (policy-rc.d from mmdebstrap).
        # shellcheck disable=SC2016 # $1 is mmdebstrap's root, expanded by its hook shell
        if ! mmdebstrap --variant=apt --include="${pkgs// /,}" \
                --essential-hook='mkdir -p "$1/etc/postgresql-common/createcluster.d" &&
                    echo "create_main_cluster = false" >"$1/etc/postgresql-common/createcluster.d/lcloud-test.conf"' \
                --dpkgopt='path-exclude=/usr/share/{doc,man,locale}/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
                --components=main "$SUITE" "$t/root" "deb $MIRROR $SUITE main" >"$t/mmdebstrap.log" 2>&1; then
            tail -n 20 "$t/mmdebstrap.log" >&2
            die "mmdebstrap failed"
        fi
        chroot "$t/root" "/usr/lib/postgresql/$PG_MAJOR/bin/postgres" --version >"$t/version" \
            || die "postgres does not run in the new root"
        chroot "$t/root" pg_config --pgxs >/dev/null || die "no PGXS in the new root"
        rm -rf "$t/root/var/cache/apt/archives/"*.deb "$t/root/var/lib/apt/lists/"*_Packages
        rm -rf "$dir"
        mv "$t" "$dir"
        trap - EXIT
        touch "$dir/.ready"
    fi
    # Roots of other keys unused for two days: a run holds its root for
    # minutes, and worktrees with different package lists keep theirs.
    for old in "$CACHE/postgresql/pg$PG_MAJOR"-*/; do
        old=${old%/}
        [[ $old == "$dir" || -n $(find "$old/.used" -mtime -2 2>/dev/null) ]] || rm -rf "$old"
    done
    flock -u 9
fi
touch "$dir/.used"
echo "$dir"
