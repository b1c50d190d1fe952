#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The fuzz lane: builds the libFuzzer harnesses (clang, -Dfuzz=true) in
# ./build-fuzz, writes their seeds from the captured data, and runs each for
# SECONDS (default 25). Exits non-zero when a harness crashes, leaks, hangs
# or trips a sanitizer, printing the input that did it.
# Usage: tests/fuzz/run.sh [SECONDS]
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-25}
build=build-fuzz
if [ ! -f "$build/build.ninja" ]; then
	CC=clang-14 meson setup "$build" -Dfuzz=true -Dtests=false
fi
ninja -C "$build"

# Stack traces with function names and lines.
[ -x /usr/lib/llvm-14/bin/llvm-symbolizer ] && export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer

seeds=$build/fuzz-seeds
rm -rf "$seeds"
python3 tests/fuzz/make-seeds.py "$seeds" >/dev/null
mkdir -p "$build/fuzz-corpus" "$build/fuzz-artifacts" "$build/fuzz-logs"

fail=0
for exe in "$build"/tests/fuzz/fuzz_*; do
	[ -f "$exe" ] && [ -x "$exe" ] || continue
	h=$(basename "$exe")
	corpus=$build/fuzz-corpus/$h
	log=$build/fuzz-logs/$h.log
	mkdir -p "$corpus"
	# New inputs go to the first folder, the kept corpus; the seeds are only read.
	if "$exe" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$build/fuzz-artifacts/$h-" "$corpus" "$seeds/$h" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		echo "fuzz: $h: ${runs:-?} runs in ${secs} s, no finding"
	else
		fail=1
		tail -n 60 "$log"
		input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		echo "fuzz: $h: FAILED; input: ${input:-none written (see $log)}" >&2
		[ -n "$input" ] && echo "fuzz: reproduce with: $exe $input" >&2
	fi
done
if [ "$fail" -ne 0 ]; then
	echo "fuzz: FAILED (logs: $build/fuzz-logs)" >&2
	exit 1
fi
