#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7). Power cuts of lcloud-target under
'lcloudctl torture run', in one guest boot: for each configuration 20 runs,
each with its own seed and its own cut (--cut-after, 60 to 300 commands:
during the fill or in the random writes), then 'lcloudctl torture verify'
on the backing file the cut left:
  - honest: 4 KiB LBAs, NAWUPF 16 KiB in NABSPF 32 KiB, a volatile cache;
    16 KiB pages by RWF_ATOMIC: never a torn page, never a lost
    acknowledged (flushed) write;
  - honest-off: the same promise without a volatile cache: every completed
    write is durable, and the cut decides only the writes in flight (the
    one it falls on, cut while its data arrives, and any others the host
    had sent); 8 KiB R2Ts, so a 16 KiB page's data comes in two and Linux
    answers several R2Ts per command: never a torn page, never a lost
    acknowledged write;
  - liar: the same Identify, --liar: torn pages appear;
  - none: 512-byte LBAs, no promise, a volatile cache; 16 KiB pages by
    plain O_DIRECT: torn pages appear.
The host's nvme-tcp gives up on a dead target at once (--ctrl-loss-tmo=0),
so each run ends when its power does. Each run's write log goes to
'lcloudctl replay' under the model the target's Identify states."""
import os

from vmlib import run_guest_once
from hostlib import main

TARGET = os.environ.get("LCLOUD_TARGET")
HOSTID = "3c4d5e6f-7081-4293-a4b5-c6d7e8f90a1b"
CUTS = 20

GUEST = r'''
set -u
ip link set lo up
modprobe nvme-tcp || echo "modprobe nvme-tcp failed" >&2
mkdir -p /srv && mount -t tmpfs -o size=128M tmpfs /srv
NQN=nqn.2026-12.org.liblcloud:cuts
cut() { # config seed cut-after path lcloud-target options...
    cfg=$1; seed=$2; after=$3; path=$4; shift 4
    rm -f /srv/t.img /tmp/rec /tmp/listen /tmp/t.log
    truncate -s 16M /srv/t.img
    "$LCLOUD_TARGET" --ns /srv/t.img --nqn $NQN --listen 127.0.0.1:4430 --serial cut-$cfg \
        --seed $seed --cut-after $after --write-log /tmp/t.log \
        --power-report /out/report-$cfg-$seed "$@" > /tmp/listen 2>> /out/target-$cfg.log &
    pid=$!
    i=0; until grep -q '^listening' /tmp/listen 2>/dev/null; do i=$((i+1)); [ $i -gt 100 ] && break; sleep 0.05; done
    nvme connect -t tcp -a 127.0.0.1 -s 4430 -n $NQN --ctrl-loss-tmo=0 --reconnect-delay=1 \
        --hostnqn=nqn.2014-08.org.nvmexpress:uuid:''' + HOSTID + r''' --hostid=''' + HOSTID + r''' > /dev/null 2>&1
    dev=
    i=0; while [ -z "$dev" ] && [ $i -lt 100 ]; do
        for d in /sys/block/nvme*n*; do
            # no match leaves the pattern itself: unquoted, it could match a namespace that appeared since
            [ -e "$d" ] || continue
            case ${d##*/} in *c*) continue ;; esac
            [ "$(cat "$d/device/serial" 2>/dev/null | tr -d ' ')" = cut-$cfg ] && dev=${d##*/}
        done
        i=$((i+1)); sleep 0.05
    done
    "$LCLOUDCTL" torture run /dev/$dev --pages 32 --page-size 16K --path $path --record /tmp/rec \
        --writes 100000 --seed $seed > /dev/null 2>> /out/run-$cfg.log
    echo "$cfg $seed run $?" >> /out/rcs
    wait $pid; echo "$cfg $seed target $?" >> /out/rcs
    nvme disconnect -n $NQN > /dev/null 2>&1
    "$LCLOUDCTL" torture verify /srv/t.img --record /tmp/rec --format json > /out/verify-$cfg-$seed.json 2>> /out/verify.log
    echo "$cfg $seed verify $?" >> /out/rcs
    # the oracle on the commands the target received, under the model its Identify states
    if [ $cfg = none ]; then model="--lba 512"; else model="--lba 4096 --atomic-bytes 16K --boundary 32K"; fi
    [ $cfg = honest-off ] || model="$model --volatile-cache"
    "$LCLOUDCTL" replay $model /tmp/t.log > /dev/null 2>> /out/replay.log
    echo "$cfg $seed replay $?" >> /out/rcs
}
PROMISE="--lba-size 4096 --nawun 16K --nawupf 16K --nabsn 32K --nabspf 32K"
for seed in $(seq 1 ''' + str(CUTS) + r'''); do
    after=$((60 + (seed * 97) % 241))
    cut honest $seed $after rwf_atomic $PROMISE --volatile-write-cache on
    cut honest-off $seed $after rwf_atomic $PROMISE --volatile-write-cache off --max-r2t-bytes 8K
    cut liar $seed $after rwf_atomic $PROMISE --volatile-write-cache on --liar
    cut none $seed $after plain_direct --lba-size 512 --volatile-write-cache on
done
dmesg > /out/dmesg
'''

DEVICES = ["--copy", os.path.realpath(TARGET or "lcloud-target"),
           "--env", "LCLOUD_TARGET=" + os.path.realpath(TARGET or "x"),
           "--module", "nvme-tcp", "--timeout", "420"]
CONFIGS = ("honest", "honest-off", "liar", "none")


def guest():
    if not TARGET:
        raise AssertionError("LCLOUD_TARGET is not set (meson sets it)")
    return run_guest_once(GUEST, DEVICES, lane="current")


def report_lines(run, cfg, seed):
    return [l.split() for l in run.text("report-%s-%d" % (cfg, seed)).splitlines() if not l.startswith("#")]


def table(run):
    """Per configuration: cuts made, pages checked, torn pages, lost acknowledged writes, and the writes
    the cuts found in flight (decided like cached ones, never completed)."""
    rows = {}
    for cfg in CONFIGS:
        cuts = pages = torn = lost = flight = 0
        for seed in range(1, CUTS + 1):
            if run.exists("report-%s-%d" % (cfg, seed)) and "power cut" in run.text("report-%s-%d" % (cfg, seed)):
                cuts += 1
                flight += sum(1 for f in report_lines(run, cfg, seed) if f[7] == "in-flight")
            v = run.json("verify-%s-%d.json" % (cfg, seed))["summary"]
            pages += v["intact"] + v["torn"] + v["damaged"] + v["unwritten"]
            torn += v["torn"]
            lost += v["lost_acknowledged_writes"]
        rows[cfg] = (cuts, pages, torn, lost, flight)
    print("config      cuts  pages checked  torn  lost acknowledged  in flight")
    for cfg, (cuts, pages, torn, lost, flight) in rows.items():
        print("%-10s  %4d  %13d  %4d  %17d  %9d" % (cfg, cuts, pages, torn, lost, flight))
    return rows


def test_every_run_was_cut():
    run = guest()
    rcs = [line.split() for line in run.text("rcs").splitlines()]
    for cfg in CONFIGS:
        targets = [r for r in rcs if r[0] == cfg and r[2] == "target"]
        assert len(targets) == CUTS and all(r[3] == "0" for r in targets), (cfg, targets)
        for seed in range(1, CUTS + 1):
            assert "power cut (the command count was reached)" in run.text("target-%s.log" % cfg)
            assert run.text("report-%s-%d" % (cfg, seed)).startswith("# lcloud-target power cut")


def test_the_promise_is_kept():
    rows = table(guest())
    for cfg in ("honest", "honest-off"):
        cuts, pages, torn, lost, flight = rows[cfg]
        assert cuts == CUTS and pages == CUTS * 32, rows
        assert torn == 0 and lost == 0, rows
    # without a cache the cuts had writes in flight to decide, and decided no cached ones
    assert rows["honest-off"][4] > 0, rows
    run = guest()
    for seed in range(1, CUTS + 1):
        assert all(f[7] == "in-flight" for f in report_lines(run, "honest-off", seed)), seed


def test_liar_and_no_promise_tear():
    rows = table(guest())
    for cfg in ("liar", "none"):
        cuts, pages, torn, lost, flight = rows[cfg]
        assert cuts == CUTS and pages == CUTS * 32, rows
        assert torn > 0, (cfg, rows)
        assert lost == 0, (cfg, rows)  # flushed writes survive on every device


def test_torn_pages_are_where_the_report_tore():
    """Each torn page verify finds lies under a write the target's report says it tore."""
    run = guest()
    for cfg in ("liar", "none"):
        lba = 4096 if cfg == "liar" else 512
        for seed in range(1, CUTS + 1):
            v = run.json("verify-%s-%d.json" % (cfg, seed))
            torn_pages = [p["page"] for p in v["page_reports"] if p["status"] == "torn"]
            if not torn_pages:
                continue
            tears = set()
            for line in run.text("report-%s-%d" % (cfg, seed)).splitlines():
                f = line.split()
                if line.startswith("#") or f[5] != "torn":
                    continue
                first = int(f[2]) * lba // 16384
                last = (int(f[2]) + int(f[3])) * lba // 16384
                tears.update(range(first, last + 1))
            assert set(torn_pages) <= tears, (cfg, seed, torn_pages, tears)


def test_the_oracle_reads_the_targets_log():
    """lcloudctl replay on each run's write log: under the stated promise no page write of the honest
    targets (cache on or off) or of the liar could tear (exit 0): the liar's torn pages are a broken promise, not
    commands that asked for a tear; without a promise the 16 KiB page writes could (exit 11)."""
    rcs = [line.split() for line in guest().text("rcs").splitlines()]
    replay = {(r[0], r[1]): r[3] for r in rcs if r[2] == "replay"}
    assert len(replay) == len(CONFIGS) * CUTS, replay
    for (cfg, seed), rc in replay.items():
        assert rc == ("11" if cfg == "none" else "0"), (cfg, seed, rc, guest().text("replay.log")[-2000:])


if __name__ == "__main__":
    main([test_every_run_was_cut, test_the_promise_is_kept, test_liar_and_no_promise_tear,
          test_torn_pages_are_where_the_report_tore, test_the_oracle_reads_the_targets_log])
