#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Probing at lsblk's cost: with LOOPS loop devices attached (created here,
# detached at the end; the first carries XFS with one file on it):
#  - `lcloudctl list` against `lsblk -t`;
#  - `lcloudctl probe FILE` (a file on that XFS) against `lsblk -t` plus
#    `xfs_io -c 'statx -r' FILE` together (what a person would run instead).
# Wall time: the median of RUNS runs of each, the commands alternating so that
# all see the same machine. System calls: `strace -c -f`, total calls (the same
# in every run: the primary figure on a shared machine).
# The table replaces the probe section of tests/bench/README.md.
# Usage (root): tests/bench/run-probe.sh [BUILD_DIR]   (default: build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
lcloudctl="$build/cli/lcloudctl"
readme="$here/README.md"
LOOPS=${LOOPS:-64}
RUNS=${RUNS:-10}

[[ $(id -u) == 0 ]] || { echo "run-probe.sh: needs root (loop devices, mount)" >&2; exit 1; }
command -v strace >/dev/null || apt-get install -y -qq strace >/dev/null
command -v mkfs.xfs >/dev/null || apt-get install -y -qq xfsprogs >/dev/null
[[ -x $lcloudctl ]] || { echo "run-probe.sh: build first ($lcloudctl missing)" >&2; exit 1; }
export LD_LIBRARY_PATH="$build/lib"

work=$(mktemp -d)
loops=()
cleanup() {
	mountpoint -q "$work/mnt" && umount "$work/mnt"
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done # gone already: nothing to do
	rm -rf "$work"
}
trap cleanup EXIT
for ((i = 0; i < LOOPS; i++)); do
	truncate -s $((i == 0 ? 512 : 64))M "$work/img$i" # XFS needs 300 MiB
	loops+=("$(losetup -f --show --direct-io=on "$work/img$i")")
done
mkfs.xfs -q -f "${loops[0]}"
mkdir "$work/mnt"
mount "${loops[0]}" "$work/mnt"
file="$work/mnt/data"
dd if=/dev/zero of="$file" bs=1M count=16 status=none
udevadm settle 2>/dev/null || true
unbound=0
for d in /sys/block/loop*; do [[ -e $d/loop ]] || unbound=$((unbound + 1)); done

# syscalls CMD...: total system calls of CMD and its children. strace -c's total
# line is "100.00 seconds usecs/call calls [errors] total": calls is the 4th field.
syscalls() {
	strace -f -c -o "$work/strace" "$@" >/dev/null 2>&1
	awk '$NF == "total" {print $4}' "$work/strace"
}

# Median wall times (ms) of the commands given as shell strings, RUNS alternating rounds.
walltimes() {
	python3 - "$RUNS" "$@" <<'PY'
import statistics, subprocess, sys, time
runs, cmds = int(sys.argv[1]), sys.argv[2:]
times = [[] for _ in cmds]
for _ in range(runs):
    for i, c in enumerate(cmds):
        t = time.perf_counter()
        subprocess.run(c, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times[i].append((time.perf_counter() - t) * 1000)
print(" ".join("%.1f" % statistics.median(t) for t in times))
PY
}

list="$lcloudctl list"
probe="$lcloudctl probe $file"
lsblk="lsblk -t"
statx="xfs_io -c 'statx -r' $file"
# warm the dentry caches once
$list >/dev/null; $probe >/dev/null; $lsblk >/dev/null; eval "$statx" >/dev/null
read -r t_list t_lsblk t_probe t_lsblk2 t_statx < <(walltimes "$list" "$lsblk" "$probe" "$lsblk" "$statx")
s_list=$(syscalls $list)
s_lsblk=$(syscalls $lsblk)
s_probe=$(syscalls $probe)
s_statx=$(syscalls xfs_io -c 'statx -r' "$file")
rows_list=$($list | tail -n +2 | wc -l)
rows_lsblk=$($lsblk | tail -n +2 | wc -l)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
sum() { awk -v a="$1" -v b="$2" 'BEGIN {print a + b}'; }
t_ref=$(sum "$t_lsblk2" "$t_statx")
s_ref=$(sum "$s_lsblk" "$s_statx")
table=$(
	printf '%-32s %10s %9s %7s %9s %7s\n' command wall_ms "x ref" syscalls "x ref" rows
	printf '%-32s %10s %9s %7s %9s %7s\n' "lsblk -t" "$t_lsblk" 1.00 "$s_lsblk" 1.00 "$rows_lsblk"
	printf '%-32s %10s %9s %7s %9s %7s\n' "lcloudctl list" "$t_list" "$(ratio "$t_list" "$t_lsblk")" \
		"$s_list" "$(ratio "$s_list" "$s_lsblk")" "$rows_list"
	printf '%-32s %10s %9s %7s %9s %7s\n' "lsblk -t + xfs_io statx -r" "$t_ref" 1.00 "$s_ref" 1.00 -
	printf '%-32s %10s %9s %7s %9s %7s\n' "lcloudctl probe FILE" "$t_probe" "$(ratio "$t_probe" "$t_ref")" \
		"$s_probe" "$(ratio "$s_probe" "$s_ref")" -
)
verdict=$(awk -v tl="$(ratio "$t_list" "$t_lsblk")" -v sl="$(ratio "$s_list" "$s_lsblk")" \
	-v tp="$(ratio "$t_probe" "$t_ref")" -v sp="$(ratio "$s_probe" "$s_ref")" 'BEGIN {
	printf "list:  wall %.2fx, syscalls %.2fx of lsblk -t (target 1.0x): %s\n", tl, sl,
		(tl <= 1.0 && sl <= 1.0) ? "meets" : "misses"
	printf "probe: wall %.2fx, syscalls %.2fx of lsblk -t + xfs_io (target 1.2x): %s\n", tp, sp,
		(tp <= 1.2 && sp <= 1.2) ? "meets" : "misses"
}')

load=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
section=$(cat <<EOF
Command (root, after a build): \`tests/bench/run-probe.sh build\` (LOOPS=$LOOPS, RUNS=$RUNS).

Machine: $(nproc) CPUs ($cpu), Linux $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME"),
$(lsblk --version), $(xfs_io -V). Date: $(date -u '+%Y-%m-%d %H:%M UTC').
$LOOPS loop devices attached by the script (the first with XFS and the probed
file), $unbound unbound loop devices present; load average at the end: $load.

\`\`\`
$table

$verdict
\`\`\`

wall_ms: median of $RUNS runs, the commands alternating (each run includes
starting the program). syscalls: \`strace -c -f\` total calls of one run.
rows: devices listed (\`list\` leaves out unbound loop devices, as lsblk does;
\`list --all\` shows them).
EOF
)
echo "$table"
echo "$verdict"
"$here/readme-section" "$readme" probe "Probing at lsblk's cost" <<<"$section"
