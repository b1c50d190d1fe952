#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every verdict on every captured tree, for a restructuring to show it changed none:
# each fixture sysroot, check at 4K..64K on every path and max_untorn_bytes
# per path from probe --format json. Usage: verdict-snapshot.sh LCLOUDCTL FIXTURES
set -u
L=$1; F=$2
for tree in "$F"/*/; do
	[ -d "$tree/sys" ] || continue
	t=$(basename "$tree")
	for dev in $("$L" --sysroot "$tree" list -l -n -o NAME --all 2>/dev/null | sort -u); do
		printf '%s/%s probe: ' "$t" "$dev"
		"$L" --sysroot "$tree" probe --format json "/dev/$dev" 2>/dev/null | python3 -c '
import json,sys
try:
    d=json.load(sys.stdin)
except Exception as e:
    print("no json"); sys.exit()
v=d["probes"][0].get("verdict") or {}
print(" ".join("%s=%s,%s,%s,%s,%s" % (k, x.get("max_untorn_bytes"), x.get("min_untorn_bytes"), x.get("alignment"), x.get("above_max"), bool(x.get("unknown_reason"))) for k, x in sorted(v.items())))'
		for size in 4K 8K 16K 32K 64K; do
			for path in rwf_atomic passthrough plain_direct buffered; do
				"$L" --sysroot "$tree" check --no-confirm --size $size --path $path "/dev/$dev" >/dev/null 2>&1
				printf '%s/%s %s %s: %s\n' "$t" "$dev" $size $path $?
			done
		done
	done
done
