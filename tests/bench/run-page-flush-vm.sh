#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# page_flush on a device that writes 16 KiB atomically itself: an NVMe
# namespace with NAWUPF 16 KiB (4 KiB LBAs) in the current VM lane (QEMU 11,
# Linux 7), XFS on it, 16 KiB pages. The device is emulated under TCG, so
# only ratios to doublewrite mean anything; all three methods run in the same
# guest, interleaved, ROUNDS times, and the medians are compared.
# Usage (root, after a build): tests/bench/run-page-flush-vm.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
bench=$(readlink -f "$build/tests/bench/page_flush")
readme="$here/README.md"
ROUNDS=${ROUNDS:-3}
PAGES=${PAGES:-1024}
DEPTHS=${DEPTHS:-"1 32"}

[[ $(id -u) == 0 ]] || { echo "run-page-flush-vm.sh: needs root (the current lane)" >&2; exit 1; }
[[ -x $bench ]] || { echo "run-page-flush-vm.sh: build first ($bench missing)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
libdir=$(readlink -f "$build/lib")

cat >"$work/guest.sh" <<GUEST
set -u
export LD_LIBRARY_PATH=$libdir
d=\${LCVM_NVME0}n1
/usr/sbin/mkfs.xfs -q -f \$d && mkdir -p /mnt/x && mount -t xfs \$d /mnt/x || exit 3
/usr/bin/dd if=/dev/zero of=/mnt/x/data bs=1M count=256 oflag=direct status=none
uname -r > /out/kernel
for r in \$(seq $ROUNDS); do
    for qd in $DEPTHS; do
        for m in doublewrite rwf_atomic plain_direct; do
            $bench \$m /mnt/x/data 16384 \$qd $PAGES >> /out/results 2>> /out/errors || echo "\$m \$qd failed" >> /out/errors
        done
    done
done
umount /mnt/x
GUEST
"$here/../vm/lcvm" run --lane current --quiet --timeout 3000 \
	--nvme "lbs=4096,size=1G,serial=pf0,atomic.nawun=3,atomic.nawupf=3" \
	--module xfs --copy /usr/sbin/mkfs.xfs --copy /usr/bin/dd --copy "$bench" --copy "$libdir" \
	--script "$work/guest.sh" --out "$work/res" || { cat "$work/res/stderr" "$work/res/files/errors" >&2 || true; exit 1; }
res="$work/res/files"
[[ -s $res/results ]] || { echo "run-page-flush-vm.sh: no results" >&2; cat "$res/errors" >&2; exit 1; }
qemu=$(cat "$work/res/qemu-version" 2>/dev/null || echo "QEMU 11 (current lane)")

table=$(awk -v depths="$DEPTHS" '
	function median(list,   n, a, i, j, t) {
		n = split(list, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		return a[int((n + 1) / 2)]
	}
	{ key = $1 " " $3; pps[key] = pps[key] " " $6; bpp[key] = bpp[key] " " $8; wpp[key] = wpp[key] " " $9 }
	END {
		printf "%-4s %-13s %9s %7s %11s %7s %8s\n", "qd", "method", "pages/s", "x dw", "bytes/page", "x dw", "wr/page"
		n = split(depths, ds, " ")
		for (i = 1; i <= n; i++) {
			base = median(pps["doublewrite " ds[i]]); bbase = median(bpp["doublewrite " ds[i]])
			split("doublewrite rwf_atomic plain_direct", ms, " ")
			for (k = 1; k <= 3; k++) {
				key = ms[k] " " ds[i]
				if (!(key in pps)) { printf "%-4s %-13s %9s\n", ds[i], ms[k], "failed"; continue }
				p = median(pps[key]); b = median(bpp[key])
				printf "%-4s %-13s %9.0f %7.2f %11.0f %7.2f %8s\n", ds[i], ms[k], p, p / base, b, b / bbase, median(wpp[key])
			}
		}
	}' "$res/results")
echo "$table"
section=$(cat <<EOF2
Command (root, after a build): \`tests/bench/run-page-flush-vm.sh build\`
(ROUNDS=$ROUNDS, $PAGES pages of 16 KiB per run, 64 pages per flush), $(date -u +%Y-%m-%d),
guest kernel $(cat "$res/kernel"), $qemu under TCG (software emulation: only
the ratios mean anything), XFS on an NVMe namespace with 4 KiB LBAs and
NAWUPF 3 (16 KiB): statx there gives \`stx_atomic_write_unit_max_opt\` 16384,
so 16 KiB RWF_ATOMIC writes are the device's own (tests/vm/test_current_hwsw.py).

\`\`\`
$table
\`\`\`

\`x dw\`: ratio to doublewrite's median at the same depth. bytes/page: the
namespace's sectors written × 512 / pages; wr/page: its write requests per page.
EOF2
)
"$here/readme-section" "$readme" page_flush_vm "page_flush in the current VM lane: a device that writes 16 KiB atomically" <<<"$section"
