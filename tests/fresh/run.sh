#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The fresh machine lane: do the README's first command and its quick test
# subset work on a Debian machine that has nothing installed? A build that
# only ever ran where a package happened to be installed already says
# nothing about that, so for Debian 12 and 13 in turn:
#   1. a clean root: mmdebstrap minbase of the release with its updates and
#      security archives, nothing else (cached, and seen through an overlay:
#      every run starts from the same clean root);
#   2. a fresh clone of COMMIT (default HEAD) in it;
#   3. there, as root (chroot, /proc, /sys and /dev bound), exactly the
#      commands README.md's Install section gives: its first command
#      (./scripts/main: installs what is missing, builds, answers for the
#      folder) and the quick test subset it names (meson test ... --suite
#      unit), read from the clone's README, so the lane runs what a reader
#      runs.
# A missing install step fails it, with the failing command's last lines.
# The packages apt downloads in the roots are kept in the packages lane's
# cache (/var/cache/lcloud-vm/packages/apt-SUITE), so a run downloads only
# the package lists. Needs root. Usage: run.sh [COMMIT] [SUITE...]
# (SUITE: bookworm, trixie; default both).
set -euo pipefail
SRC=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
# in_root, the cached clean roots and apt's download cache
# shellcheck source=tests/packages/roots.sh
. "$SRC/tests/packages/roots.sh"
note() { echo "fresh: $*" >&2; }
die() { note "FAILED: $*"; exit 1; }
[[ $(id -u) == 0 ]] || die "needs root (mmdebstrap, chroot)"
for tool in mmdebstrap git; do
	command -v "$tool" >/dev/null || die "$tool missing: scripts/install-deps --tests installs it"
done
given=${1:-}
commit=$(git -C "$SRC" rev-parse --verify "${given:-HEAD}^{commit}") || die "no commit ${given:-HEAD} in $SRC"
shift || true
suites=("$@")
[[ ${#suites[@]} -gt 0 ]] || suites=(bookworm trixie)
if [[ -z $given && -n $(git -C "$SRC" status --porcelain --untracked-files=no) ]]; then
	note "the tree has uncommitted changes: the lane runs the commit $commit"
fi

work=$(mktemp -d /var/tmp/lcloud-fresh.XXXXXX)
trap 'rm -rf "$work"' EXIT
t0=$(date +%s)
declare -A dist_dir=([bookworm]=12 [trixie]=13)

# The Install section's commands: its first one and the one running the
# quick test subset (meson test), one per line.
readme_commands() {
	awk '/^## /{ins = ($0 == "## Install")} ins && /^    [^ ]/{sub(/^    /, ""); print}' "$1" |
		awk 'NR == 1 {print; next} /^meson test /{print; exit}'
}

fail=0
for suite in "${suites[@]}"; do
	d=${dist_dir[$suite]:-}
	[[ -n $d ]] || die "unknown suite $suite (bookworm or trixie)"
	mkdir -p "$work/$d/archives"
	start=$(date +%s)
	suite_sources "$suite"
	base=$(cached_root "fresh-$suite" "fresh root recipe 1" "$suite" "$work/$d/mmdebstrap.log" \
		--variant=minbase) || die "mmdebstrap of the clean Debian $d root"
	git clone -q --no-local "$SRC" "$work/$d/src" || die "a fresh clone of $SRC"
	git -C "$work/$d/src" checkout -q --detach "$commit" || die "$commit in a fresh clone"
	mapfile -t cmds < <(readme_commands "$work/$d/src/README.md")
	[[ ${#cmds[@]} == 2 ]] || { note "README.md's Install section: ${cmds[*]:-no commands}"; }
	first=${cmds[0]:-}
	quick=${cmds[1]:-}
	[[ -n $first ]] || die "README.md's Install section gives no command"
	note "Debian $d: a clean root, a fresh clone of ${commit:0:12}: $first; ${quick:-(no quick subset named)}"
	apt_cache_lend "$suite" "$work/$d/archives"
	# No service may start in the root (a daemon would outlive the lane): the
	# policy-rc.d of chroots; and dpkg skips its fsyncs there (the root is
	# dropped after the run). Nothing else is added to the clean root.
	rc=0
	LOWER=$base ARCHIVES=$work/$d/archives in_root "$work/$d/root" "$work/$d/src" sh -euc '
		printf "#!/bin/sh\nexit 101\n" >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
		echo force-unsafe-io >/etc/dpkg/dpkg.cfg.d/lcloud-fresh-lane
		cd /build
		t=$(date +%s)
		echo "fresh: \$ $1"
		sh -c "$1"
		echo "fresh: ($(($(date +%s) - t)) s)"
		[ -n "$2" ] || { echo "fresh: README.md names no quick test subset (meson test ...)" >&2; exit 1; }
		t=$(date +%s)
		echo "fresh: \$ $2"
		sh -c "$2"
		echo "fresh: ($(($(date +%s) - t)) s)"' sh "$first" "$quick" >"$work/$d/log" 2>&1 || rc=$?
	apt_cache_keep "$suite" "$work/$d/archives"
	took=$(($(date +%s) - start))
	if [[ $rc == 0 ]]; then
		grep -E "^fresh: |^scripts/main: |^(Ok|Fail|Skipped): " "$work/$d/log" | sed "s/^/fresh: Debian $d: /" >&2
		note "Debian $d: passed in $took s"
	else
		tail -n 40 "$work/$d/log" | sed "s/^/fresh: Debian $d: | /" >&2
		note "Debian $d: FAILED (exit $rc) in $took s: the README's commands do not work on a fresh machine"
		fail=1
	fi
done
note "took $(($(date +%s) - t0)) s"
[[ $fail == 0 ]] || die "see above"
note "all passed"
