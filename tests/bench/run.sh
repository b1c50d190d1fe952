#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The queue benchmark: liblcloud's queue against a plain liburing loop doing the
# same random O_DIRECT writes on the same file (XFS over a loop device), 4 KiB
# and 16 KiB at queue depth 1 and 32, in one run.
#  - IOPS: ROUNDS rounds, the two modes alternating so that both see the same
#    machine; the median of each is compared (ratio = liblcloud / liburing).
#  - instructions per I/O: valgrind --tool=callgrind at two I/O counts; the
#    difference divided by the difference in I/Os leaves out set-up (ring,
#    probe) and counts only the per-I/O path.
# Usage (root): tests/bench/run.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
bench="$build/tests/bench/bench_queue"
ROUNDS=${ROUNDS:-5}
IOS=${IOS:-20000}
CG_SMALL=2000
CG_LARGE=6000

[[ $(id -u) == 0 ]] || { echo "run.sh: needs root (loop device, mount)" >&2; exit 1; }
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null
command -v mkfs.xfs >/dev/null || apt-get install -y -qq xfsprogs >/dev/null
[[ -x $bench ]] || { echo "run.sh: build first ($bench missing)" >&2; exit 1; }

work=$(mktemp -d)
loop=""
cleanup() {
	mountpoint -q "$work/mnt" && umount "$work/mnt"
	[[ -n $loop ]] && losetup -d "$loop"
	rm -rf "$work"
}
trap cleanup EXIT
truncate -s 2G "$work/img"
loop=$(losetup -f --show --direct-io=on "$work/img")
mkfs.xfs -q -f "$loop"
mkdir "$work/mnt"
mount "$loop" "$work/mnt"
target="$work/mnt/bench.dat"
# written once in full, so that both modes overwrite allocated blocks
dd if=/dev/zero of="$target" bs=1M count=256 oflag=direct status=none
export LD_LIBRARY_PATH="$build/lib"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
instr() {  # instructions for MODE BS QD IOS under callgrind
	local out="$work/cg.out"
	valgrind --tool=callgrind --callgrind-out-file="$out" "$bench" "$1" "$target" "$2" "$3" "$4" >/dev/null 2>&1
	awk '/^summary:/ {print $2}' "$out"
}

printf '%-6s %-3s %12s %12s %7s %14s %14s %7s\n' bs qd liblcloud_iops liburing_iops ratio \
	liblcloud_ipio liburing_ipio ratio
for bs in 4096 16384; do
	for qd in 1 32; do
		: >"$work/l" ; : >"$work/u"
		for ((i = 0; i < ROUNDS; i++)); do
			"$bench" liblcloud "$target" $bs $qd $IOS | awk '{print $6}' >>"$work/l"
			"$bench" liburing "$target" $bs $qd $IOS | awk '{print $6}' >>"$work/u"
		done
		l=$(median <"$work/l"); u=$(median <"$work/u")
		li=$(( ($(instr liblcloud $bs $qd $CG_LARGE) - $(instr liblcloud $bs $qd $CG_SMALL)) / (CG_LARGE - CG_SMALL) ))
		ui=$(( ($(instr liburing $bs $qd $CG_LARGE) - $(instr liburing $bs $qd $CG_SMALL)) / (CG_LARGE - CG_SMALL) ))
		printf '%-6s %-3s %12s %12s %7.3f %14s %14s %7.3f\n' $bs $qd "$l" "$u" \
			"$(echo "$l / $u" | bc -l)" "$li" "$ui" "$(echo "$li / $ui" | bc -l)"
	done
done
