#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Build (once) a Debian 13 root with MariaDB 11.8, its plugin headers
# (libmariadbd-dev, libmariadb-dev for libmysqlservices.a) and what liblcloud
# needs to build (scripts/install-deps' build packages), for
# test_plugin_118.py to build liblcloud and the plugin in and run an 11.8
# server from through chroot: a plugin must be built against the headers of
# the server that loads it, and Debian 12 has 10.11 only; the host's apt
# sources are never touched. Cached under the lcvm cache, keyed by what goes
# into it (suite, mirror, packages, this recipe), so a second call costs
# nothing. Prints the cache directory: DIR/root/, DIR/version. Needs root.
set -euo pipefail
CACHE=$(readlink -m "${LCLOUD_VM_CACHE:-/var/cache/lcloud-vm}")
MIRROR=${LCVM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=trixie
HERE=$(dirname "$(readlink -f "$0")")
note() { echo "md118-root: $*" >&2; }
die() { note "$*"; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null || die "mmdebstrap missing: install it (scripts/install-deps --tests does)"

build_pkgs=$(sed -n 's/^build_pkgs="\(.*\)"$/\1/p' "$HERE/../../scripts/install-deps")
[[ -n $build_pkgs ]] || die "no build_pkgs line in scripts/install-deps"
pkgs="mariadb-server mariadb-client libmariadbd-dev libmariadb-dev make $build_pkgs"
key=$({ cat "$0"; printf '%s\n' "$MIRROR" "$pkgs"; } | sha256sum | cut -c1-16)
dir=$CACHE/mariadb-plugin/md-$SUITE-$key
[[ -e $dir/.ready ]] && touch "$dir/.used"
if [[ ! -e $dir/.ready ]]; then
    mkdir -p "$CACHE/mariadb-plugin"
    exec 9>"$CACHE/.mariadb-plugin-lock"
    flock 9
    if [[ ! -e $dir/.ready ]]; then
        note "building a Debian 13 root with MariaDB and liblcloud's build packages (mmdebstrap, a few minutes, once)"
        t=$(mktemp -d "$CACHE/mariadb-plugin/.tmp.XXXXXX")
        trap 'rm -rf "$t"' EXIT
        # No services start in the build (policy-rc.d from mmdebstrap).
        if ! mmdebstrap --variant=apt --include="${pkgs// /,}" \
                --dpkgopt='path-exclude=/usr/share/{doc,man,locale}/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
                --components=main "$SUITE" "$t/root" "deb $MIRROR $SUITE main" >"$t/mmdebstrap.log" 2>&1; then
            tail -n 20 "$t/mmdebstrap.log" >&2
            die "mmdebstrap failed"
        fi
        chroot "$t/root" mariadbd --version >"$t/version" || die "mariadbd does not run in the new root"
        [[ -e $t/root/usr/include/mariadb/server/mysql/plugin.h ]] || die "no plugin headers in the new root"
        rm -rf "$t/root/var/cache/apt/archives/"*.deb "$t/root/var/lib/apt/lists/"*_Packages
        rm -rf "$dir"
        mv "$t" "$dir"
        trap - EXIT
        touch "$dir/.ready"
    fi
    # Roots of other keys unused for two days.
    for old in "$CACHE/mariadb-plugin/md-"*/; do
        old=${old%/}
        [[ $old == "$dir" || -n $(find "$old/.used" -mtime -2 2>/dev/null) ]] || rm -rf "$old"
    done
    flock -u 9
fi
touch "$dir/.used"
echo "$dir"
