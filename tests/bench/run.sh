#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The queue benchmark: liblcloud's queue against a plain liburing loop doing the
# same random O_DIRECT writes on the same file (XFS over a loop device), 4 KiB
# and 16 KiB at queue depth 1 and 32, in one run.
#  - IOPS: ROUNDS rounds, the two modes alternating so that both see the same
#    machine; the median of each is compared (ratio = liblcloud / liburing).
#  - instructions per I/O: valgrind --tool=callgrind at two I/O counts; the
#    difference divided by the difference in I/Os leaves out set-up (ring,
#    probe) and counts only the per-I/O path. Two ways:
#    in full batches: bench_queue's "full" mode at depth 32 (every batch QD
#    writes, all waited for, in both modes: the same batches in every run, so
#    the count is the code's alone); at depth 1 the loop as the IOPS rounds
#    run it (one I/O per batch there anyway);
#    kept full: the loop as the IOPS rounds run it, where how many completions
#    each reap finds depends on the machine's timing; the median of CG_REPS
#    measurements, the modes alternating.
# The table replaces the queue section of tests/bench/README.md.
# Usage (root): tests/bench/run.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
bench="$build/tests/bench/bench_queue"
readme="$here/README.md"
ROUNDS=${ROUNDS:-9}
IOS=${IOS:-20000}
CG_REPS=${CG_REPS:-3}
CG_SMALL=${CG_SMALL:-2000}
CG_LARGE=${CG_LARGE:-6000}

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
instr() {  # instructions for MODE FILE BS QD IOS [full] under callgrind
	local out="$work/cg.out"
	valgrind --tool=callgrind --callgrind-out-file="$out" "$bench" "$@" >/dev/null 2>&1
	awk '/^summary:/ {print $2}' "$out"
}
per_io() {  # instructions per I/O for MODE BS QD [full]
	local m=$1 bs=$2 qd=$3
	shift 3
	echo $((($(instr $m "$target" $bs $qd $CG_LARGE "$@") - $(instr $m "$target" $bs $qd $CG_SMALL "$@")) /
		(CG_LARGE - CG_SMALL)))
}
ratio() { echo "$1 / $2" | bc -l; }

# the rows also go to standard output as they come
{
	printf '%-6s %-3s %9s %9s %6s %7s %7s %6s %7s %7s %6s %6s %6s\n' bs qd l_iops u_iops ratio \
		l_ipio u_ipio ratio l_ipio_k u_ipio_k ratio l_b/io u_b/io
	for bs in 4096 16384; do
		for qd in 1 32; do
			: >"$work/l"; : >"$work/u"; : >"$work/lk"; : >"$work/uk"
			for ((i = 0; i < ROUNDS; i++)); do
				"$bench" liblcloud "$target" $bs $qd $IOS | awk '{print $6, $7}' >>"$work/l"
				"$bench" liburing "$target" $bs $qd $IOS | awk '{print $6, $7}' >>"$work/u"
			done
			l=$(cut -d' ' -f1 "$work/l" | median); u=$(cut -d' ' -f1 "$work/u" | median)
			lb=$(cut -d' ' -f2 "$work/l" | median); ub=$(cut -d' ' -f2 "$work/u" | median)
			for ((i = 0; i < CG_REPS; i++)); do
				per_io liblcloud $bs $qd >>"$work/lk"
				per_io liburing $bs $qd >>"$work/uk"
			done
			lk=$(median <"$work/lk"); uk=$(median <"$work/uk")
			if ((qd > 1)); then
				li=$(per_io liblcloud $bs $qd full); ui=$(per_io liburing $bs $qd full)
			else
				li=$lk; ui=$uk
			fi
			printf '%-6s %-3s %9s %9s %6.3f %7s %7s %6.3f %7s %7s %6.3f %6.1f %6.1f\n' $bs $qd "$l" "$u" \
				"$(ratio "$l" "$u")" "$li" "$ui" "$(ratio "$li" "$ui")" "$lk" "$uk" "$(ratio "$lk" "$uk")" \
				"$(ratio "$IOS" "$lb")" "$(ratio "$IOS" "$ub")"
		done
	done
} | tee "$work/table"
table=$(cat "$work/table")
verdict=$(awk 'NR > 1 && $2 == 32 {
	printf "bs %-5s qd 32: IOPS %.2fx (target at least 1.0x): %s; instructions per I/O %.3fx in full batches " \
		"(target at most 1.05x): %s; %.3fx kept full\n", $1, $5, ($5 >= 1.0 ? "meets" : "misses"), $8,
		($8 <= 1.05 ? "meets" : "misses"), $11
}' <<<"$table")

load=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
section=$(cat <<EOF
Command (root, after a build): \`tests/bench/run.sh build\` (ROUNDS=$ROUNDS rounds of IOS=$IOS writes;
callgrind at $CG_SMALL and $CG_LARGE writes, CG_REPS=$CG_REPS).

Machine: $(nproc) CPUs ($cpu), Linux $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME"),
liburing $(dpkg-query -W -f='${Version}' liburing-dev 2>/dev/null || echo "(version unknown)"), $(valgrind --version);
XFS over a loop device with direct I/O. Date: $(date -u '+%Y-%m-%d %H:%M UTC').
Load average at the end of the run: $load (other work shares the machine:
IOPS are medians of interleaved rounds and move with the load; instruction
counts in full batches do not).

\`\`\`
$table

$verdict
\`\`\`

l_: liblcloud, u_: the plain liburing loop. iops: median of $ROUNDS rounds,
the modes alternating, the queue kept full. ipio: user-space instructions
per I/O, at depth 32 in full batches (\`bench_queue ... full\`: the same
batches in every run), at depth 1 as the IOPS rounds run. ipio_k: the queue
kept full, as the IOPS rounds run (how many completions a reap finds
depends on timing), median of $CG_REPS. b/io: I/Os per submission in the
IOPS rounds (median).
EOF
)
echo "$verdict"
"$here/readme-section" "$readme" queue "The queue against a plain liburing loop: figures" <<<"$section"
