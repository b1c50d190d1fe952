#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Merged commands across an atomic boundary, in a current-lane guest
(QEMU 11, Linux 7), under the write log.

Two disks whose promise has a 16 KiB boundary: an NVMe namespace with
NAWUPF 16 KiB and NABSPF 16 KiB, and a Google-PD-shaped scsi-hd (16 KiB
physical blocks). Both get queue/max_sectors_kb 16, so no command the
block layer builds is larger than the promise, with merges on
(queue/nomerges 0). 8 KiB pages written at depth 32 (lcloudctl torture
run) still meet in flight: two on either side of a 16 KiB boundary merge
into one 16 KiB command that crosses it, and such a command is atomic
only per logical block. The independent reading is the write log judged
by the oracle (lcloudctl replay on the host): it must find such page
writes tearable, and 'check --size 8K --path plain_direct' must answer
"no" naming queue/nomerges (it answered "untorn" when only a command's
size was weighed against the promise)."""
import json
import os
import subprocess

from vmlib import LCLOUDCTL, run_guest_once
from hostlib import main

GUEST = r'''
set -u
N=${LCVM_NVME0}n1; S=$LCVM_SCSI0
for d in $N $S; do
    n=${d##*/}
    echo 16 > /sys/block/$n/queue/max_sectors_kb
    echo 0 > /sys/block/$n/queue/nomerges
    cat /sys/block/$n/queue/max_sectors_kb > /out/max_sectors_kb-$n
    "$LCLOUDCTL" probe --format json $d > /out/probe-$n.json
    "$LCLOUDCTL" check --size 8K --path plain_direct $d > /out/check-$n.txt; echo $? > /out/check-$n.rc
    "$LCLOUDCTL" torture run $d --page-size 8192 --pages 64 --path plain_direct --depth 32 --writes 2000 \
        --seed 7 --force --record /out/$n.rec --format json > /out/run-$n.json 2> /out/run-$n.err
    echo $? > /out/run-$n.rc
    echo $n >> /out/disks
done
'''

DEVICES = ["--nvme", "lbs=4096,size=16M,atomic.nawun=3,atomic.nawupf=3,atomic.nabsn=3,atomic.nabspf=3,log=1",
           "--scsi", "lbs=512,pbs=16384,vendor=Google,product=PersistentDisk,size=16M,log=1"]
LOGS = {"nvme0n1": "nvme0-n1", "sda": "scsi0"}


def test_merged_commands_across_a_boundary():
    run = run_guest_once(GUEST, DEVICES, lane="current")
    disks = run.text("disks").split()
    assert sorted(disks) == sorted(LOGS), disks
    for n in disks:
        assert run.text("max_sectors_kb-%s" % n).strip() == "16"
        assert run.text("run-%s.rc" % n).strip() == "0", run.text("run-%s.err" % n)
        rid = run.json("run-%s.json" % n)["run_id"]
        probe = os.path.join(run.outdir, "files", "probe-%s.json" % n)
        log = os.path.join(run.outdir, "logs", LOGS[n] + ".log")
        p = subprocess.run([LCLOUDCTL, "replay", log, "--model-from", probe, "--run", rid, "--all", "--format", "json"],
                           capture_output=True, text=True)
        assert p.returncode in (0, 11), p.stderr
        rep = json.loads(p.stdout)
        assert rep["model"]["boundary"] == 16384, rep["model"]
        tear = [w for w in rep["page_writes"] if w["verdict"] == "tearable"]
        print("%s: %d of %d page writes tearable" % (n, len(tear), rep["summary"]["page_writes"]))
        # the oracle: merged commands across the boundary carried pages (the runs make dozens)
        assert tear, "no merged command crossed a boundary on %s: the test proves nothing" % n
        assert all("boundary" in w["rules"] for w in tear), tear[:3]
        # the verdict: no 8 KiB write is untorn while merges can build such commands
        assert run.text("check-%s.rc" % n).strip() == "6", run.text("check-%s.txt" % n)
        assert "nomerges" in run.text("check-%s.txt" % n), run.text("check-%s.txt" % n)


if __name__ == "__main__":
    main([test_merged_commands_across_a_boundary])
