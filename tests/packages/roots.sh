# SPDX-License-Identifier: LGPL-2.1-or-later
# shellcheck shell=bash
# Clean Debian roots for the lanes that test what a user gets on a machine
# that never saw this source tree: the packages lane (run.sh) and the fresh
# machine lane (tests/fresh/run.sh). Sourced by them (bash, set -euo
# pipefail, root). Roots are made with mmdebstrap from the archive only, never
# the host's apt sources; each is cached under $CACHE by a key naming what
# goes into it, and a run sees it through an overlay, so the cached root
# stays clean. apt's downloads of each suite are kept in $CACHE/apt-SUITE.
CACHE=$(readlink -m "${LCLOUD_VM_CACHE:-/var/cache/lcloud-vm}")/packages
MIRROR=${LCVM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${LCVM_DEBIAN_SECURITY:-${MIRROR%/debian}/debian-security}

# In a private mount namespace: /proc, /sys and /dev, and the folder BIND (if
# not empty) at /build, in ROOT, then chroot ROOT CMD... With LOWER set, ROOT
# is first made an overlay of the root LOWER (left as it is) with ROOT.upper
# for the changes; with ARCHIVES set, that folder is apt's download cache
# (/var/cache/apt/archives) in the root. The mounts go with the namespace,
# also when something fails.
in_root() {
	local root=$1 bind=$2
	shift 2
	unshare --mount --propagation private -- sh -euc '
		root=$1 bind=$2 lower=$3 archives=$4; shift 4
		if [ -n "$lower" ]; then
			mkdir -p "$root" "$root.upper" "$root.work"
			mount -t overlay lcloud-packages -o "lowerdir=$lower,upperdir=$root.upper,workdir=$root.work" "$root"
		fi
		mount -t proc proc "$root/proc"
		mount --rbind /sys "$root/sys"
		mount --rbind /dev "$root/dev"
		[ -z "$bind" ] || { mkdir -p "$root/build" && mount --bind "$bind" "$root/build"; }
		[ -z "$archives" ] || mount --bind "$archives" "$root/var/cache/apt/archives"
		cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
		exec chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root "$@"
	' sh "$root" "$bind" "${LOWER:-}" "${ARCHIVES:-}" "$@"
}

# apt's downloads of SUITE are kept between runs, for mmdebstrap (its recipe:
# sync-in before, sync-out after); liblcloud's own packages never go into the
# cache. Sets the array cache_opts.
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

# The same cache for an apt that runs inside a root (ARCHIVES of in_root):
# DIR gets hard links to SUITE's cached downloads, and apt_cache_keep SUITE
# DIR links what apt downloaded there back into the cache. Links, not copies:
# a root's apt may delete or add files in DIR, never change the cached ones.
apt_cache_lend() {
	local cached=$CACHE/apt-$1 dir=$2
	mkdir -p "$cached" "$dir/partial"
	find "$cached" -maxdepth 1 -name '*.deb' -exec ln -f -t "$dir" {} + 2>/dev/null ||
		find "$cached" -maxdepth 1 -name '*.deb' -exec cp -t "$dir" {} +
}
apt_cache_keep() {
	local cached=$CACHE/apt-$1 dir=$2 deb name
	for deb in "$dir"/*.deb; do
		name=${deb##*/}
		[[ -e $deb && $name != *lcloud* && ! -e $cached/$name ]] || continue
		# whole or not at all: another lane may be lending from the cache this moment
		ln "$deb" "$cached/$name" 2>/dev/null ||
			{ cp "$deb" "$cached/.$name.tmp" && mv -f "$cached/.$name.tmp" "$cached/$name"; } || true
	done
}

# The archive lines of SUITE, as a user's machine has them: the release, its
# updates and security updates (the packages built against them depend on
# their versions). Sets the array sources.
suite_sources() {
	sources=("deb $MIRROR $1 main" "deb $MIRROR $1-updates main" "deb $SECURITY $1-security main")
}

# cached_root NAME RECIPE SUITE LOG MMDEBSTRAP-OPTION... : the path of a root
# made once by mmdebstrap with the options given, SUITE and the archive lines
# of the array sources (suite_sources sets it), cached as $CACHE/NAME-KEY,
# KEY naming RECIPE (bump its number when the making changes), the sources
# and the options.
# Roots of the same NAME and another key are removed once unused for two
# days (worktrees with different recipes keep theirs). On failure prints
# mmdebstrap's last lines and returns 1.
cached_root() {
	local name=$1 recipe=$2 suite=$3 log=$4 key root old
	shift 4
	key=$(printf '%s\n' "$recipe" "${sources[@]}" "$@" | sha256sum | cut -c1-16)
	root=$CACHE/$name-$key
	mkdir -p "$CACHE"
	(
		# one maker per suite's download cache at a time, across lanes
		flock 9
		if [[ ! -e $root/.ready ]]; then
			echo "packages: making $name (mmdebstrap, once)" >&2
			rm -rf "$root" "$root.tmp"
			apt_cache_opts "$suite"
			if ! mmdebstrap "$@" "${cache_opts[@]}" --components=main "$suite" "$root.tmp" "${sources[@]}" \
					>"$log" 2>&1; then
				tail -n 30 "$log" >&2
				rm -rf "$root.tmp"
				exit 1
			fi
			mv "$root.tmp" "$root"
			touch "$root/.ready"
		fi
		touch "$root/.used"
		for old in "$CACHE/$name"-*/; do
			old=${old%/}
			[[ $old == "$root" || -n $(find "$old/.used" -mtime -2 2>/dev/null) ]] || rm -rf "$old"
		done
	) 9>"$CACHE/.lock-$suite" || return 1
	echo "$root"
}
