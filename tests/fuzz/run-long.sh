#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Long fuzzing by hand: runs each harness (or the ones named) for MINUTES,
# keeping the corpus in build-fuzz/fuzz-corpus, then measures the line
# coverage that corpus reaches with a second build instrumented for llvm-cov
# (build-fuzz-cov), and writes executions, speed, coverage and findings into
# the figures section of tests/fuzz/README.md. Stops at the first finding,
# which it leaves in build-fuzz/fuzz-artifacts.
# Usage: tests/fuzz/run-long.sh [--report-only] MINUTES [HARNESS...]
#   e.g. nice tests/fuzz/run-long.sh 120        (two hours per harness)
# --report-only writes the figures from the results of the last run
# (build-fuzz/fuzz-long), e.g. after the report step was interrupted.
set -eu
cd "$(dirname "$0")/../.."
report_only=0
if [ "${1:-}" = "--report-only" ]; then
	report_only=1
	shift
fi
[ $# -ge 1 ] || { echo "usage: $0 [--report-only] MINUTES [HARNESS...]" >&2; exit 2; }
minutes=$1
shift
build=build-fuzz
covbuild=build-fuzz-cov
results=$build/fuzz-long
llvm=/usr/lib/llvm-14/bin
export ASAN_SYMBOLIZER_PATH=$llvm/llvm-symbolizer

harnesses=$*
if [ -z "$harnesses" ]; then
	for exe in "$build"/tests/fuzz/fuzz_*; do
		[ -f "$exe" ] && [ -x "$exe" ] && harnesses="$harnesses $(basename "$exe")"
	done
fi
if [ "$report_only" -eq 0 ]; then
tests/fuzz/run.sh 1 >/dev/null # builds the harnesses, writes the seeds, checks them once
if [ ! -f "$covbuild/build.ninja" ]; then
	CC=clang-14 meson setup "$covbuild" -Dfuzz=true -Dtests=false \
		-Dc_args='-fprofile-instr-generate -fcoverage-mapping' \
		-Dc_link_args='-fprofile-instr-generate -fcoverage-mapping' >/dev/null
fi
ninja -C "$covbuild" >/dev/null

rm -rf "$results"
mkdir -p "$results"
echo "$(date -u '+%Y-%m-%d %H:%M') $(git rev-parse --short HEAD) $(nice)" >"$results/run-info"
for h in $harnesses; do
	corpus=$build/fuzz-corpus/$h
	log=$results/$h.log
	mkdir -p "$corpus"
	echo "run-long: $h for $minutes min"
	if ! "$build/tests/fuzz/$h" -max_total_time=$((minutes * 60)) -timeout=20 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$h-" \
		"$corpus" "$build/fuzz-seeds/$h" >"$log" 2>&1; then
		tail -n 60 "$log"
		echo "run-long: $h: FINDING; input: $(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log")" >&2
		echo "finding" >"$results/$h.finding"
	fi
	# Line coverage of the corpus it kept and the seeds (libFuzzer does not copy
	# seeds into the corpus), library sources only.
	rm -f "$results/$h".*.profraw
	LLVM_PROFILE_FILE="$results/$h.%p.profraw" "$covbuild/tests/fuzz/$h" -runs=0 "$corpus" "$build/fuzz-seeds/$h" \
		>"$results/$h.cov.log" 2>&1 || true
	"$llvm/llvm-profdata" merge -sparse "$results/$h".*.profraw -o "$results/$h.profdata"
	"$llvm/llvm-cov" report "$covbuild/tests/fuzz/$h" -instr-profile="$results/$h.profdata" \
		-ignore-filename-regex='tests/' >"$results/$h.coverage.txt"
	ls "$corpus" | wc -l >"$results/$h.corpus-files"
done
fi

python3 - "$results" "$minutes" $harnesses <<'PY'
import datetime, os, re, subprocess, sys

results, minutes, harnesses = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
# The files each harness is aimed at (its coverage is also given for all of lib/).
TARGETS = {
    'fuzz_nvme_identify': ['nvme_identify.c', 'cloud_nvme.c'],
    'fuzz_nvme_hints': ['nvme_hints.c'],
    'fuzz_scsi_pages': ['scsi_pages.c', 'cloud_scsi.c'],
    'fuzz_mountinfo': ['mountinfo.c'],
    'fuzz_dm_table': ['stack.c', 'align.c', 'verdict.c'],
    'fuzz_sysroot': ['probe.c', 'sysfs.c', 'stack.c', 'nvme_layer.c', 'scsi_layer.c', 'verdict.c'],
}


def stat(log, name):
    m = re.search(r'^stat::%s:\s*(\d+)' % name, log, re.M)
    return int(m.group(1)) if m else 0


def lines(report, files):
    """(covered, total) lines over FILES (basenames) in an llvm-cov report; all when FILES is None."""
    cov = tot = 0
    for row in report.splitlines():
        cols = row.split()
        if len(cols) < 13 or not cols[0].endswith('.c'):
            continue
        if files is not None and os.path.basename(cols[0]) not in files:
            continue
        # Filename Regions Missed Cover Functions Missed Executed Lines Missed Cover ...
        total, missed = int(cols[7]), int(cols[8])
        tot += total
        cov += total - missed
    return cov, tot


def pct(c, t):
    return '%d/%d (%.1f %%)' % (c, t, 100.0 * c / t) if t else 'n/a'


rows = []
for h in harnesses:
    if not os.path.exists(os.path.join(results, h + '.coverage.txt')):
        continue
    log = open(os.path.join(results, h + '.log'), errors='replace').read()
    report = open(os.path.join(results, h + '.coverage.txt')).read()
    done = re.findall(r'^#\d+\s+DONE\s+cov: (\d+) ft: (\d+)', log, re.M)
    edges, features = done[-1] if done else ('?', '?')
    runs = stat(log, 'number_of_executed_units')
    corpus = open(os.path.join(results, h + '.corpus-files')).read().strip()
    finding = 'yes: see build-fuzz/fuzz-artifacts' if os.path.exists(os.path.join(results, h + '.finding')) else 'none'
    rows.append('| %s | %d min | %s | %s | %s | %s | %s | %s | %s | %s |' % (
        h, minutes, format(runs, ','), format(stat(log, 'average_exec_per_sec'), ','), edges, features, corpus,
        pct(*lines(report, TARGETS.get(h, []))) + ' of ' + ', '.join(TARGETS.get(h, [])),
        pct(*lines(report, None)), finding))

try:
    day, time, head, niceness = open(os.path.join(results, 'run-info')).read().split()
    when = '%s %s UTC, commit %s, niceness %s' % (day, time, head, niceness)
except (OSError, ValueError):
    when = 'figures written %s UTC (start, commit and niceness of the run not recorded)' % (
        datetime.datetime.utcnow().strftime('%Y-%m-%d %H:%M'))
cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), '?')
section = '\n'.join([
    '<!-- figures: written by tests/fuzz/run-long.sh; do not edit by hand -->',
    'Last long run: %s; clang 14, %s (%d CPUs, shared with other work), %d min per harness, one harness'
    ' at a time.' % (when, cpu, os.cpu_count(), minutes),
    '',
    '| harness | time | executions | exec/s | edges (libFuzzer cov) | features | corpus files | lines covered, target files | lines covered, all of lib/ | finding |',
    '|---|---|---|---|---|---|---|---|---|---|',
] + rows + [
    '',
    'Executions and exec/s: `-print_final_stats`; edges and features: libFuzzer\'s last `DONE` line. Lines: the'
    ' corpus kept in build-fuzz/fuzz-corpus and the seeds replayed once through a build with'
    ' `-fprofile-instr-generate -fcoverage-mapping`, `llvm-cov report` over lib/ only.',
    '<!-- figures: end -->',
])
readme = 'tests/fuzz/README.md'
text = open(readme).read()
text = re.sub(r'<!-- figures: written.*?<!-- figures: end -->', lambda m: section, text, flags=re.S)
open(readme, 'w').write(text)
print(section)
PY
