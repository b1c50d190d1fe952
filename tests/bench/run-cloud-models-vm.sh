#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# page_flush under cloud disk models: what dropping doublewrite buys when the
# disk is limited by an IOPS cap and a bandwidth cap, against the best ratio
# those caps allow. Each model (tests/vm/lcvm disk-model: gp3,
# hyperdisk-balanced, ops-bound, bw-bound) is a QEMU throttle group on its own
# NVMe namespace (4 KiB LBAs, NAWUPF 16 KiB, so RWF_ATOMIC of a 16 KiB page
# is the device's own) in one guest of the current VM lane; one more
# namespace without caps measures what the emulation itself can do. Under TCG
# the emulation is far slower than a cloud disk, so every rate is scaled by
# one factor (SCALE) and each result is checked: the measured operations or
# bytes per second must be within 10 % of a cap, else the caps did not bound
# it. page_flush runs on the raw namespace (data in its first 256 MiB, the
# doublewrite area past it), 16 KiB pages, 64 per flush; the guest splits
# requests at 256 KiB (max_sectors_kb), the size a cloud disk counts as one
# operation, so the device's write count is the operations the caps count.
#
# Usage (root, after a build): tests/bench/run-cloud-models-vm.sh [--short] [--json FILE] [BUILD_DIR]
#   --short   one model (bw-bound), depth 32, one round, no README update:
#             the form the vm suite runs (tests/vm/test_cloud_models.py)
#   --json    write the results (caps, runs, limits, checks) as JSON
# Environment: MODELS, SCALE (0.02), ROUNDS (3), PAGES (512), DEPTHS ("1 32"),
# TRIES (1; --short 2): when a cap check fails, run again at half the scale.
# Exit status: 0 when every cap check passes, 2 when one fails, 1 on errors.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
short=0 json=""
while (($#)); do
	case $1 in
		--short) short=1 ;;
		--json) json=$2; shift ;;
		-*) echo "run-cloud-models-vm.sh: unknown option $1" >&2; exit 1 ;;
		*) break ;;
	esac
	shift
done
build=$(cd "${1:-$here/../../build}" && pwd)
bench=$(readlink -f "${PAGE_FLUSH:-$build/tests/bench/page_flush}")
libdir=$(readlink -f "$build/lib")
readme="$here/README.md"
lcvm="$here/../vm/lcvm"
if ((short)); then
	MODELS=${MODELS:-bw-bound} ROUNDS=${ROUNDS:-1} PAGES=${PAGES:-512} DEPTHS=${DEPTHS:-32} TRIES=${TRIES:-2}
fi
MODELS=${MODELS:-"gp3 hyperdisk-balanced ops-bound bw-bound"}
SCALE=${SCALE:-0.02} ROUNDS=${ROUNDS:-3} PAGES=${PAGES:-512} DEPTHS=${DEPTHS:-"1 32"} TRIES=${TRIES:-1}
BATCH=64 PAGE=16384 SPLIT_KB=256

[[ $(id -u) == 0 ]] || { echo "run-cloud-models-vm.sh: needs root (the current lane)" >&2; exit 1; }
[[ -x $bench ]] || { echo "run-cloud-models-vm.sh: build first ($bench missing)" >&2; exit 1; }
for m in $MODELS; do "$lcvm" disk-model "$m" >/dev/null || exit 1; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One guest: namespace 0 without caps (the emulation's own rate), then one
# capped namespace per model, each with its own controller.
cat >"$work/guest.sh" <<GUEST
set -u
export LD_LIBRARY_PATH=$libdir
i=0
for m in cal $MODELS; do
    eval d=\\\${LCVM_NVME\$i}n1
    b=\${d##*/}
    echo $SPLIT_KB > /sys/block/\$b/queue/max_sectors_kb
    echo "\$m \$d \$(cat /sys/block/\$b/queue/max_sectors_kb) \$(cat /sys/block/\$b/queue/atomic_write_unit_max_bytes)" >> /out/devices
    i=\$((i + 1))
done
uname -r > /out/kernel
dev() { awk -v m="\$1" '\$1 == m { print \$2 }' /out/devices; }
for qd in $DEPTHS; do
    for meth in doublewrite plain_direct; do
        echo "cal 0 \$($bench \$meth \$(dev cal) $PAGE \$qd 512 --force 2>> /out/errors)" >> /out/results
    done
done
for r in \$(seq $ROUNDS); do
    for m in $MODELS; do
        for qd in $DEPTHS; do
            for meth in doublewrite rwf_atomic plain_direct; do
                line=\$($bench \$meth \$(dev \$m) $PAGE \$qd $PAGES --force 2>> /out/errors) || echo "\$m \$meth \$qd failed" >> /out/errors
                echo "\$m \$r \$line" >> /out/results
            done
        done
    done
done
cat /proc/loadavg > /out/guest-loadavg
GUEST

attempt=1 scale=$SCALE rc=2
while :; do
	nvme=(--nvme "lbs=4096,size=512M,serial=cal,atomic.nawun=3,atomic.nawupf=3")
	for m in $MODELS; do
		nvme+=(--nvme "lbs=4096,size=512M,serial=m-$m,atomic.nawun=3,atomic.nawupf=3,model=$m,model.scale=$scale")
	done
	echo "run-cloud-models-vm.sh: models $MODELS at scale $scale (attempt $attempt), $ROUNDS round(s) of $PAGES pages" >&2
	"$lcvm" run --lane current --quiet --timeout 3000 "${nvme[@]}" --copy "$bench" --copy "$libdir" \
		--script "$work/guest.sh" --out "$work/res" ||
		{ cat "$work/res/stderr" "$work/res/files/errors" >&2 2>/dev/null || true; exit 1; }
	[[ -s $work/res/files/results ]] || { echo "run-cloud-models-vm.sh: no results" >&2; cat "$work/res/files/errors" >&2; exit 1; }
	# Analysis: caps as lcvm applied them (OUTDIR/throttle), medians, limits, checks.
	rc=0
	python3 - "$work/res" "$scale" "$BATCH" "$PAGE" "$SPLIT_KB" "$work/out.json" "$MODELS" >"$work/table" <<'PY' || rc=$?
import json, math, os, statistics, sys
res, scale, batch, page, split_kb, out, models = sys.argv[1:8]
scale, batch, page, split = float(scale), int(batch), int(page), int(split_kb) * 1024
models = models.split()
caps = {}
for line in open(os.path.join(res, "throttle")):
    name, *props = line.strip().split(",")
    kv = dict(p.split("=") for p in props)
    caps[name] = {"iops": int(kv["x-iops-total"]), "bps": int(kv["x-bps-total"]), "iops_size": int(kv["x-iops-size"])}
# lcvm names the capped disks nvmeI-n1 in the order given: cal is 0
cap = {m: caps["nvme%d-n1" % (i + 1)] for i, m in enumerate(models)}
runs = {}
for line in open(os.path.join(res, "files", "results")):
    f = line.split()
    if len(f) < 12:
        continue
    model, meth, qd = f[0], f[2], int(f[4])
    r = {"pages": int(f[5]), "seconds": float(f[6]), "pps": float(f[7]), "bytes_per_page": float(f[9]),
         "writes_per_page": float(f[10]), "flushes_per_kpage": float(f[11])}
    # the syncs of a flush (doublewrite: two) reach the block layer as empty
    # PREFLUSH writes or as flushes; neither carries data, and QEMU's
    # throttle counts only reads and writes: leave them out of the operations
    syncs = (2.0 if meth == "doublewrite" else 1.0) / batch
    r["ops_per_page"] = r["writes_per_page"] - max(0.0, syncs - r["flushes_per_kpage"] / 1000)
    runs.setdefault((model, qd, meth), []).append(r)

def throttled_pps(c, phases, batch, batches=60):
    """pages/s QEMU's throttle lets a flush of BATCH pages through when its
    requests come in PHASES (lists of (operations, bytes)), each phase
    waiting for the one before (doublewrite: the copy, then the pages in
    place): two leaky buckets (operations, bytes) leaking at the caps, a
    request admitted while both levels are at most a tenth of a second's
    worth (QEMU's bucket without an explicit burst, util/throttle.c). A
    phase that leaves one cap idle leaves its rate unused, beyond that tenth
    of a second: unlike min(caps / per-page cost), this counts it."""
    io, ib = c["iops"], c["bps"]
    lo = lb = t = 0.0
    spent = []
    for k in range(batches):
        t0 = t
        for phase in phases:
            for ops, nbytes in phase:
                w = max(0.0, (lo - io / 10) / io, (lb - ib / 10) / ib)
                t += w
                lo, lb = max(0.0, lo - io * w) + ops, max(0.0, lb - ib * w) + nbytes
        spent.append(t - t0)
    steady = spent[batches // 4:]
    return batch / (sum(steady) / len(steady))


def med(rs, k):
    return statistics.median(x[k] for x in rs)

def page_limit(c, ops, bpp):
    """pages/s the caps allow a method needing OPS operations and BPP bytes per page."""
    by_ops, by_bytes = c["iops"] / ops, c["bps"] / bpp
    return min(by_ops, by_bytes), ("iops" if by_ops <= by_bytes else "bytes")

report = {"scale": scale, "batch": batch, "page": page, "split": split, "caps": cap, "calibration": [], "rows": [],
          "checks_pass": True, "targets": []}
for (model, qd, meth), rs in sorted(runs.items()):
    if model == "cal":
        r = rs[0]
        report["calibration"].append({"qd": qd, "method": meth, "pps": r["pps"], "ops_s": r["pps"] * r["ops_per_page"],
                                      "bytes_s": r["pps"] * r["bytes_per_page"]})
methods = ["doublewrite", "rwf_atomic", "plain_direct"]
print("%-18s %3s %-13s %8s %6s %7s %9s %5s %-5s %8s %5s %6s %6s %6s %6s %6s" % (
    "model", "qd", "method", "pages/s", "x dw", "ops/pg", "bytes/pg", "use", "bound", "cap_pg/s", "thr", "limit",
    "apriori", "m/lim", "phased", "m/ph"))
explain = []
for model in models:
    c = cap[model]
    for qd in sorted({k[1] for k in runs if k[0] == model}):
        base = runs.get((model, qd, "doublewrite"))
        if not base:
            continue
        dw_pps = med(base, "pps")
        dw_lim, _ = page_limit(c, med(base, "ops_per_page"), med(base, "bytes_per_page"))
        # a priori: in place one operation and one page per page; doublewrite
        # adds the batch copied in requests of at most the split size
        dw0, _ = page_limit(c, 1 + math.ceil(batch * page / min(split, c["iops_size"])) / batch, 2 * page)
        chunk = min(split, c["iops_size"])
        copy = [(1, min(chunk, batch * page - i)) for i in range(0, batch * page, chunk)]
        in_place = [(1, page)] * batch
        dw_ph = throttled_pps(c, [copy, in_place], batch)
        ip_ph = throttled_pps(c, [in_place], batch)
        for meth in methods:
            rs = runs.get((model, qd, meth))
            if not rs:
                print("%-18s %3d %-13s %8s" % (model, qd, meth, "failed"))
                continue
            pps, opp, bpp = med(rs, "pps"), med(rs, "ops_per_page"), med(rs, "bytes_per_page")
            lim, bound = page_limit(c, opp, bpp)
            use = [max(r["pps"] * r["ops_per_page"] / c["iops"], r["pps"] * r["bytes_per_page"] / c["bps"]) for r in rs]
            # the check: each run at what the throttle lets this request pattern through, within 10 %
            ph = dw_ph if meth == "doublewrite" else ip_ph
            use_ph = [r["pps"] / ph for r in rs]
            ok = all(0.9 <= u <= 1.1 for u in use_ph)
            report["checks_pass"] &= ok
            row = {"model": model, "qd": qd, "method": meth, "pps": pps, "pps_each": [r["pps"] for r in rs],
                   "ops_per_page": opp, "bytes_per_page": bpp, "cap_use": use, "throttled_use": use_ph,
                   "cap_check": ok, "bound": bound, "cap_pages_per_s": lim, "throttled_pages_per_s": ph}
            if meth != "doublewrite":
                ratio, limit = pps / dw_pps, lim / dw_lim
                limit0 = page_limit(c, 1.0, page)[0] / dw0
                phased = ip_ph / dw_ph
                row.update(ratio=ratio, limit=limit, limit_a_priori=limit0, measured_over_limit=ratio / limit,
                           limit_phased=phased, measured_over_phased=ratio / phased)
                if abs(ratio / limit - 1) > 0.10:
                    explain.append("%s qd %d %s: %.2fx doublewrite against a limit of %.2fx (%.2f): doublewrite "
                                   "at %.0f%% of its caps (operations or bytes), %s at %.0f%%; with the copy before "
                                   "the pages in place and QEMU's 0.1 s buckets, the caps let doublewrite through "
                                   "at %.0f pages/s, not %.0f: a limit of %.2fx, measured %.2f of it" % (
                                       model, qd, meth, ratio, limit, ratio / limit,
                                       100 * statistics.median(max(r["pps"] * r["ops_per_page"] / c["iops"],
                                                                   r["pps"] * r["bytes_per_page"] / c["bps"]) for r in base),
                                       meth, 100 * statistics.median(use), dw_ph, dw_lim, phased, ratio / phased))
            report["rows"].append(row)
            print("%-18s %3d %-13s %8.0f %6.2f %7.3f %9.0f %5.2f %-5s %8.0f %5.2f %6s %6s %6s %6s %6s%s" % (
                model, qd, meth, pps, pps / dw_pps, opp, bpp, statistics.median(use), bound, lim,
                statistics.median(use_ph),
                "%.2f" % row["limit"] if "limit" in row else "-", "%.2f" % row["limit_a_priori"] if "limit" in row else "-",
                "%.2f" % row["measured_over_limit"] if "limit" in row else "-",
                "%.2f" % row["limit_phased"] if "limit" in row else "-",
                "%.2f" % row["measured_over_phased"] if "limit" in row else "-", "" if ok else "  CAP CHECK FAILS"))
            if model == "bw-bound" and meth != "doublewrite":
                report["targets"].append("%s qd %d %s: %.2fx of the limit (target at least 0.9x): %s" % (
                    model, qd, meth, row["measured_over_limit"], "meets" if row["measured_over_limit"] >= 0.9 else "misses"))
print()
for c in report["calibration"]:
    print("no caps (the emulation itself), qd %d %s: %.0f pages/s, %.0f ops/s, %.1f MB/s" % (
        c["qd"], c["method"], c["pps"], c["ops_s"], c["bytes_s"] / 1e6))
print("cap check (each run's pages/s within 10 %% of what the throttle lets its requests through, thr): %s" % (
    "passes for every run" if report["checks_pass"] else "FAILS for some run"))
for t in report["targets"]:
    print("target: " + t)
for e in explain:
    print("off the limit by more than 10 %: " + e)
report["explanations"] = explain
json.dump(report, open(out, "w"), indent=1)
sys.exit(0 if report["checks_pass"] else 2)
PY
	cat "$work/table"
	[[ $rc == 0 || $attempt -ge $TRIES ]] && break
	attempt=$((attempt + 1))
	scale=$(awk -v s="$scale" 'BEGIN { print s / 2 }')
	echo "run-cloud-models-vm.sh: a cap check failed: the emulation, not the caps, bounded a run; again at scale $scale" >&2
done
((rc <= 2)) || exit 1
[[ -n $json ]] && cp "$work/out.json" "$json"
((short)) && exit "$rc"

qemu=$(cat "$work/res/qemu-version" 2>/dev/null || echo "QEMU 11 (current lane)")
caps=$(for m in $MODELS; do printf '%s: %s; ' "$m" "$("$lcvm" disk-model "$m" | awk '{ printf "%d IOPS, %.1f MiB/s", $1, $2 / 1048576 }')"; done)
scaled=$(for m in $MODELS; do printf '%s: %s; ' "$m" "$("$lcvm" disk-model "$m" "$scale" | awk '{ printf "%d IOPS, %.2f MiB/s", $1, $2 / 1048576 }')"; done)
section=$(cat <<EOF2
Command (root, after a build): \`tests/bench/run-cloud-models-vm.sh build\`
(ROUNDS=$ROUNDS, $PAGES pages of 16 KiB per run, 64 pages per flush, queue depths $DEPTHS), $(date -u "+%Y-%m-%d %H:%M") UTC,
guest kernel $(cat "$work/res/files/kernel"), $qemu under TCG, raw NVMe namespaces with 4 KiB LBAs
and NAWUPF 16 KiB, requests split at 256 KiB. Load average of the host at the end: $(cut -d' ' -f1-3 /proc/loadavg).

Models as published: ${caps%; }. **Scaling factor $scale**: ${scaled%; } (iops-size 256 KiB unscaled).

\`\`\`
$(cat "$work/table")
\`\`\`
EOF2
)
"$here/readme-section" "$readme" cloud_models_vm "page_flush under cloud disk models" <<<"$section"
exit "$rc"
