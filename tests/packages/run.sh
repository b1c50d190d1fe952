#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The installed-copy test: are the Debian packages and the release tarball
# what a user gets, and does that work on a machine that never saw the
# source tree? From the committed tree (HEAD):
#   1. `meson dist` makes the release tarball;
#   2. the Debian 12 packages are built from the unpacked tarball alone on
#      this (Debian 12) host with dpkg-buildpackage, whose build runs the unit
#      suite: the tarball builds and passes it;
#   3. the Debian 13 packages are built from the same tarball, unit suite
#      included, in a trixie root holding only the build dependencies
#      (mmdebstrap, cached);
#   4. for each, a clean root (mmdebstrap minbase, cached, seen through an
#      overlay) gets the .debs through apt, dependencies from the archive
#      (mariadb-server for the plugin among them), and in-root.sh runs
#      there: the tool, a C program through pkg-config, the Python binding,
#      the PostgreSQL extension, the MariaDB plugin in its server, man
#      pages, completion, udev rule.
# Prints the packages with their sizes and lintian's output for each
# distribution (overridden tags too, as O:); lintian errors or warnings not
# overridden fail the test.
# Debian 13 is reached only through mmdebstrap's own apt lists, never the
# host's sources. Downloads are cached under /var/cache/lcloud-vm/packages.
# Needs root. Usage: run.sh [OUTDIR] (the .debs are kept there).
set -euo pipefail
SRC=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
HERE=$SRC/tests/packages
# in_root, the cached clean roots and apt's download cache
# shellcheck source=tests/packages/roots.sh
. "$HERE/roots.sh"
note() { echo "packages: $*" >&2; }
die() { note "FAILED: $*"; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (mmdebstrap, chroot)"
for tool in mmdebstrap dpkg-buildpackage lintian meson; do
	command -v "$tool" >/dev/null || die "$tool missing: scripts/install-deps --tests installs it"
done
. /etc/os-release
[[ $VERSION_CODENAME == bookworm ]] || die "the host must be Debian 12 (bookworm): it builds Debian 12's packages"

work=$(mktemp -d /var/tmp/lcloud-packages.XXXXXX)
out=${1:-$work/out}
mkdir -p "$out" "$CACHE"
chmod 755 "$work"  # apt reads the local .debs as its own user
cleanup() {
	# a root of this run's may still be mounted by a child namespace that died: they are private
	rm -rf "$work"
}
trap cleanup EXIT
t0=$(date +%s)
timing() { note "$1 ($(($(date +%s) - t0)) s so far)"; }

# Build dependencies named in debian/control.in (without the test suite's,
# marked <!nocheck>, when $2 is nocheck), one per line.
build_deps() {
	python3 - "$1" "${2:-}" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
field = re.search(r"^Build-Depends:(.*?)(?=^\S)", text, re.M | re.S).group(1)
for dep in field.replace("\n", " ").split(","):
    dep = dep.strip()
    if not dep or (sys.argv[2] == "nocheck" and "<!nocheck>" in dep):
        continue
    print(re.split(r"[\s(<]", dep)[0])
PY
}

# 1. the release tarball
timing "meson dist"
meson setup "$work/dist" "$SRC" -Dtests=false >"$work/dist.log" 2>&1 || { cat "$work/dist.log"; die "meson setup"; }
if [[ -n $(git -C "$SRC" status --porcelain --untracked-files=no) ]]; then
	note "the tree has uncommitted changes: the tarball and packages are of HEAD"
fi
meson dist -C "$work/dist" --no-tests --allow-dirty --formats xztar >>"$work/dist.log" 2>&1 \
	|| { cat "$work/dist.log"; die "meson dist"; }
tarball=$(ls "$work/dist/meson-dist/"liblcloud-*.tar.xz)
version=$(basename "$tarball" .tar.xz); version=${version#liblcloud-}
grep -q "^liblcloud ($version-" "$SRC/debian/changelog" \
	|| die "debian/changelog's first entry is not of version $version (meson.build)"
cp "$tarball" "$out/"
ls -l "$tarball" | awk '{print "packages: tarball " $NF ": " $5 " bytes"}' >&2

# unpacks the tarball into DIR as Debian's source package would be
unpack() {
	mkdir -p "$1"
	cp "$tarball" "$1/liblcloud_$version.orig.tar.xz"
	tar -xf "$tarball" -C "$1"
}

# 2. Debian 12, on this host, from the tarball, with the unit suite; with
# Debian's own programs only (no python3 of pyenv's or a user's PATH)
timing "Debian 12: dpkg-buildpackage from the tarball (unit suite included)"
unpack "$work/12"
(cd "$work/12/liblcloud-$version" && dpkg-checkbuilddeps) \
	|| die "build dependencies missing on the host: scripts/install-deps --tests"
if ! (cd "$work/12/liblcloud-$version" && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME="$work" \
		DEB_BUILD_OPTIONS="parallel=$(nproc)" dpkg-buildpackage -us -uc -b) >"$work/12/build.log" 2>&1; then
	tail -n 60 "$work/12/build.log"
	die "Debian 12 package build (log: $work/12/build.log)"
fi
grep -E "^(Ok|Fail|Skipped):" "$work/12/build.log" | sed 's/^/packages: Debian 12 unit suite: /' >&2

# lintian of each distribution's packages runs while the next step does
lint() {
	local label=$1 log=$2
	shift 2
	if "$@" >"$log" 2>&1; then echo 0 >"$log.rc"; else echo $? >"$log.rc"; fi
}
lint "Debian 12" "$work/12/lintian.log" \
	lintian --show-overrides --fail-on none "$work/12/liblcloud_${version}-"*_amd64.changes &
lint12=$!

# 3. Debian 13: a build root with the build dependencies only (cached by
# what goes into it), the unit suite included
deps13=$(build_deps "$SRC/debian/control.in" | sort | tr '\n' ' ')
# the key: what goes into the root (bump the recipe's number when its making changes)
# the release's packages only: what builds against them installs with the
# release's and with its updates
sources=("deb $MIRROR trixie main")
broot=$(cached_root build-trixie "build-root recipe 1" trixie "$work/broot.log" \
	--variant=buildd --include="${deps13// /,}lintian") || die "mmdebstrap of the Debian 13 build root"
timing "Debian 13: dpkg-buildpackage from the tarball in the build root"
unpack "$work/13"
if ! in_root "$broot" "$work/13" sh -c "cd /build/liblcloud-$version &&
		DEB_BUILD_OPTIONS='parallel=$(nproc)' dpkg-buildpackage -us -uc -b" \
		>"$work/13/build.log" 2>&1; then
	tail -n 60 "$work/13/build.log"
	die "Debian 13 package build (log: $work/13/build.log)"
fi
grep -E "^(Ok|Fail|Skipped):" "$work/13/build.log" | sed 's/^/packages: Debian 13 unit suite: /' >&2
lint "Debian 13" "$work/13/lintian.log" in_root "$broot" "$work/13" sh -c \
	"lintian --show-overrides --fail-on none /build/liblcloud_${version}-*_amd64.changes" &
lint13=$!

# 4. clean roots: minbase and the tools a user would have, from the archive
# only (cached, by what goes into them); each run sees one through an
# overlay, installs the packages (no -dbgsym) there with apt, dependencies
# and recommendations from the archive, runs in-root.sh, and drops it.
declare -A pg_major=([bookworm]=15 [trixie]=17)
declare -A dist_dir=([bookworm]=12 [trixie]=13)
fail=0
for suite in bookworm trixie; do
	d=${dist_dir[$suite]}
	tools="gcc,libc6-dev,pkg-config,python3,postgresql-${pg_major[$suite]},man-db,bash-completion"
	suite_sources "$suite"
	# the server's postinst makes no cluster: the test makes its own
	# shellcheck disable=SC2016 # $1 is mmdebstrap's root, expanded by its hook shell
	base=$(cached_root "clean-$suite" "clean root recipe 1" "$suite" "$work/clean-$d.log" \
		--variant=minbase --include="$tools" \
		--essential-hook='mkdir -p "$1/etc/postgresql-common/createcluster.d" &&
			echo "create_main_cluster = false" >"$1/etc/postgresql-common/createcluster.d/lcloud-test.conf"') \
		|| die "mmdebstrap of the clean Debian $d root"
	debs=$work/$d/debs
	mkdir -p "$debs" "$out/$d"
	for deb in "$work/$d/"*.deb; do
		[[ $deb == *-dbgsym_* ]] || cp "$deb" "$debs/"
	done
	cp "$debs/"*.deb "$out/$d/"
	cp "$HERE/in-root.sh" "$debs/"
	chmod -R a+rX "$debs"
	timing "Debian $d: apt-get install of the packages into a clean root, and the installed copy"
	# what apt downloads there (mariadb-server for the plugin, the libraries) is kept for the next run
	mkdir -p "$work/$d/archives"
	apt_cache_lend "$suite" "$work/$d/archives"
	# no service starts in the root (mariadb-server's postinst would start one): the test starts its own
	rc=0
	LOWER=$base ARCHIVES=$work/$d/archives in_root "$work/$d/clean" "$debs" sh -euc '
			export DEBIAN_FRONTEND=noninteractive
			printf "#!/bin/sh\nexit 101\n" >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
			apt-get update -q >/dev/null
			apt-get install -y -q /build/*.deb >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
			grep "^Setting up" /tmp/apt.log
			for p in /build/*.deb; do
				n=$(dpkg-deb -f "$p" Package)
				dpkg-query -W -f="\${Status}\n" "$n" | grep -q "^install ok installed" || { echo "in-root: $n not installed" >&2; exit 1; }
			done
			exec sh /build/in-root.sh "$1"' sh "${pg_major[$suite]}" >"$work/$d/in-root.log" 2>&1 || rc=$?
	apt_cache_keep "$suite" "$work/$d/archives"
	if [[ $rc == 0 ]]; then
		grep -F -e "in-root:" -e "Setting up" "$work/$d/in-root.log" | sed "s/^/packages: Debian $d: /" >&2
	else
		cat "$work/$d/in-root.log" >&2
		note "Debian $d: the installed copy FAILED"
		fail=1
	fi
done

wait "$lint12" "$lint13" || true
for d in 12 13; do
	echo "== Debian $d packages (bytes, installed KiB)"
	for deb in "$out/$d/"*.deb; do
		printf '%-45s %9s %6s\n' "$(basename "$deb")" "$(stat -c %s "$deb")" "$(dpkg-deb -f "$deb" Installed-Size)"
	done
	echo "== Debian $d lintian (exit $(cat "$work/$d/lintian.log.rc"))"
	grep -v "^running with root privileges" "$work/$d/lintian.log" || echo "(no tags)"
	# Debian 12's lintian counts shown overrides in its exit status: the tags decide
	if [[ $(cat "$work/$d/lintian.log.rc") != 0 ]] || grep -q "^[EW]: " "$work/$d/lintian.log"; then
		note "Debian $d: lintian FAILED"
		fail=1
	fi
done
timing "done"
[[ $fail == 0 ]] || die "see above"
note "all passed"
