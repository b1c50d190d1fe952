#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# What an untorn page write buys a storage engine: page_flush's three methods
# (doublewrite, rwf_atomic, plain_direct) on XFS (reflink) and on ext4 with
# bigalloc, each over its own loop device (direct I/O) on this machine, page
# sizes 8, 16 and 64 KiB, queue depth 1 and 32, in one run.
#  - ROUNDS rounds, the three methods interleaved in each so that all see the
#    same machine; medians are reported;
#  - device bytes per page: the loop device's sectors written (its stat file)
#    before and after, read by page_flush itself;
#  - journal: XFS transactions and log writes (/sys/fs/xfs/DEV/stats/stats),
#    ext4's jbd2 commits (/proc/fs/jbd2/DEV-8/info), per 1000 pages;
#  - extents of each method's data file after its runs (CoW shows here).
# The tables replace the page_flush section of tests/bench/README.md.
# Usage (root): tests/bench/run-page-flush.sh [BUILD_DIR]   (default: build)
#
# A device with real atomic writes (an NVMe namespace with NAWUPF, in a VM):
# run page_flush itself there, unchanged, on a file of a file system on it or
# on the raw namespace (page_flush METHOD /dev/nvme0n1 16384 32 4096 --force).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
bench="$build/tests/bench/page_flush"
statx_reader="$build/tests/host/statx_reader"
readme="$here/README.md"
ROUNDS=${ROUNDS:-5}
BYTES_PER_RUN=${BYTES_PER_RUN:-$((64 << 20))} # pages written per run: this many bytes
BATCH=${BATCH:-64}
SIZES=${SIZES:-"8192 16384 65536"}
DEPTHS=${DEPTHS:-"1 32"}
METHODS="doublewrite rwf_atomic plain_direct"

[[ $(id -u) == 0 ]] || { echo "run-page-flush.sh: needs root (loop devices, mounts)" >&2; exit 1; }
command -v mkfs.xfs >/dev/null || apt-get install -y -qq xfsprogs >/dev/null
command -v mkfs.ext4 >/dev/null || apt-get install -y -qq e2fsprogs >/dev/null
[[ -x $bench && -x $statx_reader ]] || { echo "run-page-flush.sh: build first ($bench missing)" >&2; exit 1; }
export LD_LIBRARY_PATH="$build/lib"

work=$(mktemp -d)
loops=()
cleanup() {
	for m in "$work"/mnt-*; do mountpoint -q "$m" && umount "$m"; done
	for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done # gone already: nothing to do
	rm -rf "$work"
}
trap cleanup EXIT

median() { sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }

# Journal counters of the file system on loop device $1 ($2: xfs or ext4): "transactions log_writes".
journal() {
	local dev=${1#/dev/}
	if [[ $2 == xfs ]]; then
		awk '/^trans / {t = $2 + $3} /^log / {w = $2} END {print t, w}' "/sys/fs/xfs/$dev/stats/stats"
	else
		awk 'NR == 1 {print $1, $1}' "/proc/fs/jbd2/$dev-8/info"
	fi
}

# make_fs xfs|ext4: a file system on its own loop device $loop, mounted at $work/mnt-FS.
make_fs() {
	local fs=$1 img="$work/$1.img"
	truncate -s 3G "$img"
	loop=$(losetup -f --show --direct-io=on "$img")
	loops+=("$loop")
	if [[ $fs == xfs ]]; then
		mkfs.xfs -q -f -m reflink=1 "$loop"
	else
		# no lazy init: its background writes would count as the methods' bytes
		mkfs.ext4 -q -F -O bigalloc -C 16384 -E lazy_itable_init=0,lazy_journal_init=0 "$loop"
	fi
	mkdir -p "$work/mnt-$fs"
	mount "$loop" "$work/mnt-$fs"
}

# Fresh data files, written once in full, so that every method overwrites allocated blocks.
fresh_files() {
	local dir=$1
	rm -f "$dir"/*.dat "$dir"/*.dblwr
	for m in $METHODS; do
		dd if=/dev/zero of="$dir/$m.dat" bs=1M count=256 oflag=direct status=none
	done
	sync
}

extents() { # of file $1 (xfs_bmap lists one line per extent after the file name)
	if [[ $2 == xfs ]]; then xfs_bmap "$1" | tail -n +2 | grep -vc hole || true
	else filefrag "$1" | awk '{print $2}'; fi
}

results="$work/results"
: >"$results"
notes="$work/notes"
: >"$notes"
for fs in xfs ext4; do
	make_fs $fs
	dir="$work/mnt-$fs"
	stat="/sys/block/${loop#/dev/}/stat"
	for bs in $SIZES; do
		fresh_files "$dir"
		pages=$((BYTES_PER_RUN / bs))
		opt=$("$statx_reader" "$dir/rwf_atomic.dat" | awk '$1 == "stx_atomic_write_unit_max_opt" {print $2}')
		max=$("$statx_reader" "$dir/rwf_atomic.dat" | awk '$1 == "stx_atomic_write_unit_max" {print $2}')
		for qd in $DEPTHS; do
			for m in $METHODS; do for k in pps bpp wpp fpk tr lw; do : >"$work/$k.$m"; done; done
			# round 0 warms up (first overwrites, caches) and is not counted
			for ((i = 0; i <= ROUNDS; i++)); do
				for m in $METHODS; do
					if ((i == 0)); then
						"$bench" $m "$dir/$m.dat" $bs $qd $pages --batch $BATCH --stat "$stat" >/dev/null || true
						continue
					fi
					read -r t0 w0 < <(journal "$loop" $fs)
					if out=$("$bench" $m "$dir/$m.dat" $bs $qd $pages --batch $BATCH --stat "$stat"); then
						read -r t1 w1 < <(journal "$loop" $fs)
						awk '{print $6}' <<<"$out" >>"$work/pps.$m"
						awk '{print $8}' <<<"$out" >>"$work/bpp.$m"
						awk '{print $9}' <<<"$out" >>"$work/wpp.$m"
						awk '{print $10}' <<<"$out" >>"$work/fpk.$m"
						echo "$(( (t1 - t0) * 1000 / pages ))" >>"$work/tr.$m"
						echo "$(( (w1 - w0) * 1000 / pages ))" >>"$work/lw.$m"
					elif [[ $out == *refused* ]]; then
						grep -qxF "$fs $bs: $out" "$notes" 2>/dev/null || echo "$fs $bs: $out" >>"$notes"
					else
						echo "run-page-flush.sh: page_flush $m failed on $fs" >&2
						exit 1
					fi
				done
			done
			for m in $METHODS; do
				echo "$fs $bs $qd $m $(median <"$work/pps.$m") $(median <"$work/bpp.$m") \
$(median <"$work/tr.$m") $(median <"$work/lw.$m") $(extents "$dir/$m.dat" $fs) ${max:-0} ${opt:-0} \
$(median <"$work/wpp.$m") $(median <"$work/fpk.$m")" >>"$results"
			done
		done
	done
	umount "$dir"
done

# The table: every method against doublewrite of the same file system, page size and depth.
table=$(awk '
	BEGIN { printf "%-5s %-6s %-3s %-13s %9s %6s %10s %6s %7s %9s %10s %8s\n", "fs", "page", "qd", "method",
		"pages/s", "x dw", "bytes/page", "x dw", "wr/page", "trans/kpg", "commit/kpg", "extents" }
	{ key = $1 " " $2 " " $3; if ($4 == "doublewrite") { dwp[key] = $5; dwb[key] = $6 }
	  row[NR] = $0 }
	END {
		for (i = 1; i <= NR; i++) {
			split(row[i], f, " "); key = f[1] " " f[2] " " f[3]
			if (f[5] == "-") {
				printf "%-5s %-6s %-3s %-13s %9s %6s %10s %6s %7s %9s %10s %8s\n", f[1], f[2], f[3], f[4],
					"refused", "-", "-", "-", "-", "-", "-", f[9]
				continue
			}
			printf "%-5s %-6s %-3s %-13s %9d %6.2f %10d %6.2f %7.3f %9s %10s %8s\n", f[1], f[2], f[3], f[4],
				f[5], f[5] / dwp[key], f[6], f[6] / dwb[key], f[12], f[7], f[8], f[9]
		}
	}' "$results")
# Target: rwf_atomic or plain_direct at least 1.8x doublewrite's pages/s and at most 0.55x its bytes.
verdicts=$(awk '
	{ key = $1 " " $2 " " $3; v[key, $4, "p"] = $5; v[key, $4, "b"] = $6
	  if ($4 == "doublewrite") order[++n] = key
	  if ($4 == "rwf_atomic") { awmax[key] = $10; awopt[key] = $11 } }
	function judge(key, m,   p, b, rp, rb, res) {
		p = v[key, m, "p"]; b = v[key, m, "b"]
		if (p == "-" || p == "") return sprintf("%s refused", m)
		rp = p / v[key, "doublewrite", "p"]; rb = b / v[key, "doublewrite", "b"]
		if (rp >= 1.8 && rb <= 0.55) res = "meets"
		else if (rb <= 0.55) res = "misses (pages/s)"
		else if (rp >= 1.8) res = "misses (bytes)"
		else res = "misses (both)"
		return sprintf("%s %.2fx pages/s, %.2fx bytes: %s", m, rp, rb, res)
	}
	END {
		for (i = 1; i <= n; i++) {
			k = order[i]; split(k, f, " ")
			s = sprintf("%-5s %-6s qd %-3s %s; %s", f[1], f[2], f[3], judge(k, "rwf_atomic"), judge(k, "plain_direct"))
			if (f[1] == "xfs" && v[k, "rwf_atomic", "p"] != "-")
				s = s sprintf(" [statx unit_max %s, unit_max_opt %s: %s]", awmax[k], awopt[k],
					awopt[k] + 0 >= f[2] + 0 ? "device atomic write" : "software (copy-on-write) atomic write")
			print s
		}
	}' "$results")

load=$(cut -d' ' -f1-3 /proc/loadavg)
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
host_fs=$(findmnt -no FSTYPE,SOURCE -T "$work" | tr -s ' ')
section=$(cat <<EOF
Command (root, after a build): \`tests/bench/run-page-flush.sh build\`
(ROUNDS=$ROUNDS, $((BYTES_PER_RUN >> 20)) MiB of pages per run, $BATCH pages per flush).

Machine: $(nproc) CPUs ($cpu), Linux $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME");
loop devices with direct I/O over files on $host_fs. Date: $(date -u '+%Y-%m-%d %H:%M UTC').
Load average at the end of the run: $load (other work shares the machine:
pages/s are medians of interleaved rounds; bytes, transactions and extents
are counts and do not depend on the load).

\`\`\`
$table
\`\`\`

\`x dw\`: ratio to doublewrite's median at the same file system, page size and
depth. bytes/page: the loop device's sectors written × 512 / pages;
wr/page: write requests the loop device completed per page (the cache
flush of an fdatasync counts as one: 1/64 per flush of 64 pages).
trans/kpg: file system transactions per 1000 pages (XFS; ext4: jbd2 commits);
commit/kpg: log writes (XFS) or jbd2 commits (ext4) per 1000 pages. extents:
of the method's data file after all its runs at that page size.

Target (rwf_atomic or plain_direct at least 1.8x doublewrite's pages/s, at
most 0.55x its bytes):

\`\`\`
$verdicts
\`\`\`
EOF
)
if [[ -s $notes ]]; then
	section+=$'\n\nRefusals, as page_flush printed them:\n\n```\n'"$(cat "$notes")"$'\n```'
fi
echo "$table"
echo "$verdicts"
[[ -s $notes ]] && cat "$notes"

"$here/readme-section" "$readme" page_flush "page_flush on the host: XFS and ext4 over loop devices" <<<"$section"
