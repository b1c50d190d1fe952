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
#   4. for each, a clean root (mmdebstrap minbase, made afresh each run) gets
#      the .debs through apt, dependencies from the archive, and in-root.sh
#      runs there: the tool, a C program through pkg-config, the Python
#      binding, the PostgreSQL extension, man pages, completion, udev rule.
# Prints the packages with their sizes and lintian's output for each
# distribution (overridden tags too, as O:); lintian errors or warnings not
# overridden fail the test.
# Debian 13 is reached only through mmdebstrap's own apt lists, never the
# host's sources. Downloads are cached under /var/cache/lcloud-vm/packages.
# Needs root. Usage: run.sh [OUTDIR] (the .debs are kept there).
set -euo pipefail
SRC=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
HERE=$SRC/tests/packages
CACHE=$(readlink -m "${LCLOUD_VM_CACHE:-/var/cache/lcloud-vm}")/packages
MIRROR=${LCVM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${LCVM_DEBIAN_SECURITY:-${MIRROR%/debian}/debian-security}
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

# In a private mount namespace: /proc, /sys, /dev and the folder BIND (if
# not empty) at /build in ROOT, then chroot ROOT CMD... With LOWER set, ROOT
# is first made an overlay of the root LOWER (left as it is) with ROOT.upper
# for the changes. The mounts go with the namespace, also when something fails.
in_root() {
	local root=$1 bind=$2
	shift 2
	unshare --mount --propagation private -- sh -euc '
		root=$1 bind=$2 lower=$3; shift 3
		if [ -n "$lower" ]; then
			mkdir -p "$root" "$root.upper" "$root.work"
			mount -t overlay lcloud-packages -o "lowerdir=$lower,upperdir=$root.upper,workdir=$root.work" "$root"
		fi
		mount -t proc proc "$root/proc"
		mount --rbind /sys "$root/sys"
		mount --rbind /dev "$root/dev"
		[ -z "$bind" ] || { mkdir -p "$root/build" && mount --bind "$bind" "$root/build"; }
		cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
		exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root "$@"
	' sh "$root" "$bind" "${LOWER:-}" "$@"
}

# apt's downloads of each suite are kept between runs (mmdebstrap's recipe);
# liblcloud's own packages never go into the cache. Sets the array cache_opts.
apt_cache_opts() {
	local dir=$CACHE/apt-$1
	mkdir -p "$dir"
	# shellcheck disable=SC2016 # $1 is mmdebstrap's root, expanded by its hook shell
	cache_opts=(--skip=essential/unlink
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives/'
		--setup-hook="sync-in $dir /var/cache/apt/archives/"
		--customize-hook="sync-out /var/cache/apt/archives $dir"
		--customize-hook="rm -f $dir/*lcloud*")
}

# The archive lines of SUITE, as a user's machine has them: the release, its
# updates and security updates (the packages built against them depend on
# their versions). Sets the array sources.
suite_sources() {
	sources=("deb $MIRROR $1 main" "deb $MIRROR $1-updates main" "deb $SECURITY $1-security main")
}

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
key=$(printf '%s\n' "build-root recipe 1" "$MIRROR" "$deps13" | sha256sum | cut -c1-16)
broot=$CACHE/build-trixie-$key
if [[ ! -e $broot/.ready ]]; then
	timing "Debian 13: making a build root (mmdebstrap, once)"
	rm -rf "$broot" "$broot.tmp"
	apt_cache_opts trixie
	mmdebstrap --variant=buildd --include="${deps13// /,}lintian" "${cache_opts[@]}" \
		--components=main trixie "$broot.tmp" "deb $MIRROR trixie main" >"$work/broot.log" 2>&1 \
		|| { tail -n 30 "$work/broot.log"; rm -rf "$broot.tmp"; die "mmdebstrap of the Debian 13 build root"; }
	mv "$broot.tmp" "$broot"
	touch "$broot/.ready"
	for old in "$CACHE"/build-trixie-*/; do
		old=${old%/}
		[[ $old == "$broot" ]] || rm -rf "$old"
	done
fi
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
	key=$(printf '%s\n' "clean root recipe 1" "${sources[@]}" "$tools" | sha256sum | cut -c1-16)
	base=$CACHE/clean-$suite-$key
	if [[ ! -e $base/.ready ]]; then
		timing "Debian $d: making a clean root (mmdebstrap, once)"
		rm -rf "$base" "$base.tmp"
		apt_cache_opts "$suite"
		# the server's postinst makes no cluster: the test makes its own
		# shellcheck disable=SC2016 # $1 is mmdebstrap's root, expanded by its hook shell
		if ! mmdebstrap --variant=minbase --include="$tools" "${cache_opts[@]}" \
				--essential-hook='mkdir -p "$1/etc/postgresql-common/createcluster.d" &&
					echo "create_main_cluster = false" >"$1/etc/postgresql-common/createcluster.d/lcloud-test.conf"' \
				--components=main "$suite" "$base.tmp" "${sources[@]}" >"$work/clean-$d.log" 2>&1; then
			tail -n 30 "$work/clean-$d.log"
			rm -rf "$base.tmp"
			die "mmdebstrap of the clean Debian $d root"
		fi
		mv "$base.tmp" "$base"
		touch "$base/.ready"
		for old in "$CACHE/clean-$suite"-*/; do
			old=${old%/}
			[[ $old == "$base" ]] || rm -rf "$old"
		done
	fi
	debs=$work/$d/debs
	mkdir -p "$debs" "$out/$d"
	for deb in "$work/$d/"*.deb; do
		[[ $deb == *-dbgsym_* ]] || cp "$deb" "$debs/"
	done
	cp "$debs/"*.deb "$out/$d/"
	cp "$HERE/in-root.sh" "$debs/"
	chmod -R a+rX "$debs"
	timing "Debian $d: apt-get install of the packages into a clean root, and the installed copy"
	if LOWER=$base in_root "$work/$d/clean" "$debs" sh -euc '
			export DEBIAN_FRONTEND=noninteractive
			apt-get update -q >/dev/null
			apt-get install -y -q /build/*.deb >/tmp/apt.log 2>&1 || { cat /tmp/apt.log; exit 1; }
			grep "^Setting up" /tmp/apt.log
			for p in /build/*.deb; do
				n=$(dpkg-deb -f "$p" Package)
				dpkg-query -W -f="\${Status}\n" "$n" | grep -q "^install ok installed" || { echo "in-root: $n not installed" >&2; exit 1; }
			done
			exec sh /build/in-root.sh "$1"' sh "${pg_major[$suite]}" >"$work/$d/in-root.log" 2>&1; then
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
