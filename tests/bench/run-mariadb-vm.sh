#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# MariaDB in the crash lab (tests/vm/test_mariadb_lab.py): sysbench
# oltp_write_only, innodb_doublewrite OFF (as `lcloudctl advise` says) and ON
# on the same kind of device (NVMe NAWUPF 16 KiB, ext4 bigalloc 16 KiB), one
# after the other in one guest, the negative control (one 4 KiB block,
# doublewrite OFF anyway) and XFS with 16 KiB blocks (doublewrite as advise
# says), then MariaDB's crash recovery on crash images of them. The device
# is emulated under TCG: only the ratio between the runs of one guest means
# anything. Writes the figures into tests/bench/README.md.
# Usage (root, after a build): tests/bench/run-mariadb-vm.sh [BUILD_DIR]
#        tests/bench/run-mariadb-vm.sh --figures FIGURES.JSON  (a run's MARIADB_LAB_OUT, no new run)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
readme="$here/README.md"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ ${1:-} == --figures ]]; then
    cp "$2" "$work/figures.json"
else
    build=$(cd "${1:-$here/../../build}" && pwd)
    [[ $(id -u) == 0 ]] || { echo "run-mariadb-vm.sh: needs root (the current lane)" >&2; exit 1; }
    LCLOUDCTL=$(readlink -f "$build/cli/lcloudctl") MARIADB_LAB_OUT=$work PYTHONDONTWRITEBYTECODE=1 \
        python3 "$here/../vm/test_mariadb_lab.py" | tee "$work/test.out"
fi
section=$(python3 - "$work/figures.json" "$(date -u +%Y-%m-%d)" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
rows = [("A", "NVMe NAWUPF 16 KiB, ext4 bigalloc 16 KiB"), ("B", "NVMe NAWUPF 16 KiB, ext4 bigalloc 16 KiB"),
        ("C", "NVMe, one 4 KiB block atomic, ext4"), ("D", "NVMe NAWUPF 16 KiB, XFS 16 KiB blocks")]
print("Run of %s: Debian 13's MariaDB 11.8, sysbench oltp_write_only (2 tables x 20000 rows, 1 thread, %d s per load after 8 s not measured),"
      " loads in the order A B B A C D, innodb_flush_method=O_DIRECT, 8 MiB buffer pool, in one guest of the current VM lane (QEMU 11 + Linux 7, %s)."
      % (sys.argv[2], f["seconds"], f["accelerator"]))
print()
print("| run | device | innodb_doublewrite | transactions | tps (each load) | device bytes / transaction | InnoDB page writes | tearable |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for k, dev in rows:
    if k not in f:
        continue
    r = f[k]
    print("| %s | %s | %s | %d | %.1f (%s) | %d | %d | %d |" % (k, dev, r["doublewrite"], r["transactions"], r["tps"],
          ", ".join("%.1f" % v for v in r["tps_each"]),
          r["device_bytes_per_transaction"], r["page_writes"], r["tearable"]))
print()
print("tps with the doublewrite buffer OFF / ON on the proved device: **%.2f**. Emulation bound: under TCG the"
      " server and sysbench spend their time on the emulated CPU, so the I/O the buffer adds weighs little and"
      " the drift between loads of one guest is as large; the bytes per transaction are the steadier figure." % f["tps_off_over_on"])
rej = f.get("rejected")
if rej:
    print()
    print("Negative control: a crash image cut inside page %d of %s (space %d; `lcloudctl replay --cut %d --tear %d`)"
          " is rejected by innochecksum; the same page in the final image passes."
          % (rej["page"]["page_no"], rej["file"], rej["page"]["space_id"], rej["page"]["tearing_cut"]["cut"],
             rej["page"]["tearing_cut"]["tear_blocks"]))
rec = f.get("recovered")
if rec:
    print()
    print("Crash recovery with the doublewrite buffer OFF: crash images of the proved namespaces cut in the middle"
          " of the load (%s) verify page by page with innochecksum before recovery (every data file; ibdata1 without"
          " its doublewrite area, which holds copies), and MariaDB recovers from each;"
          " CHECK TABLE finds both tables sound." % ", ".join(
              "%s: `--cut %d%s`" % (k, v["cut"], " --tear %d" % v["tear_blocks"] if v["tear_blocks"] else "")
              for k, v in sorted(rec.items())))
neg = f.get("negative_recovery")
if neg:
    why = [l.split("] ", 1)[-1] for l in neg["log"] if "[ERROR]" in l][:1]
    print()
    print("The negative control's crash image: MariaDB %s%s." % (
        "does not start" if not neg["started"] else "starts, but does not come back clean",
        " (\"%s\")" % why[0] if why else ""))
print()
print("Device bytes per transaction: the namespace's sectors written (guest /sys/block/*/stat) during the load,"
      " x 512, / transactions; the whole run's total equals the write log's bytes (checked by the test).")
PY
)
"$here/readme-section" "$readme" mariadb_vm "MariaDB in the crash lab: doublewrite OFF and ON" <<<"$section"
