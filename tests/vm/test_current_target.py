#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7). lcloud-target inside the guest, on a
file in a tmpfs, and the guest's own nvme-tcp host connected to it over
loopback, as a cloud VM would reach a remote disk:
  - lctA: 4 KiB LBAs, NAWUN=NAWUPF=16 KiB, NABSN=NABSPF=32 KiB, AWUN=AWUPF=8 KiB,
    a volatile write cache, MDTS 6 (256 KiB);
  - lctB: 512-byte LBAs, no promise (NSFEAT bit 1 clear, AWUPF 0), no cache,
    FDP with 4 placement handles (data, journal, metadata, background);
  - c: DH-HMAC-CHAP with a host secret and a controller secret that
    nvme gen-dhchap-key made: the kernel's host connects with both and its
    I/O reaches the file; without a secret, with a wrong one, or with a
    wrong controller secret it is refused.
What the target was told must be what nvme-cli reads in Identify, what the
kernel puts in queue/atomic_write_* and queue/max_write_streams, and what
lcloudctl probe reports; an RWF_ATOMIC write of the promised size succeeds
and one past it is refused; bytes written through /dev/nvmeXnY are in the
backing file; nvme-cli's fdp commands read the FDP logs and handle status,
and an io_uring write with a write stream arrives at the target as a Write
with DTYPE 2 and its placement handle, counted in the FDP statistics."""
import os
import struct

from vmlib import layer, run_guest_once
from hostlib import main

TARGET = os.environ.get("LCLOUD_TARGET")
DIRECT_WRITE = os.environ.get("DIRECT_WRITE")
HOSTID = "2b3c4d5e-6f70-4182-93a4-b5c6d7e8f901"

GUEST = r'''
set -u
ip link set lo up
modprobe nvme-tcp || echo "modprobe nvme-tcp failed" >&2
mkdir -p /srv && mount -t tmpfs -o size=256M tmpfs /srv
truncate -s 64M /srv/a.img /srv/b.img
start() { # serial port args...
    s=$1; port=$2; shift 2
    "$LCLOUD_TARGET" --ns /srv/$s.img --nqn nqn.2026-12.org.liblcloud:$s --listen 127.0.0.1:$port \
        --serial $s "$@" > /out/listen-$s 2> /out/target-$s.log &
    i=0; until grep -q '^listening' /out/listen-$s; do i=$((i+1)); [ $i -gt 100 ] && break; sleep 0.1; done
    nvme connect -t tcp -a 127.0.0.1 -s $port -n nqn.2026-12.org.liblcloud:$s \
        --hostnqn=nqn.2014-08.org.nvmexpress:uuid:''' + HOSTID + r''' --hostid=''' + HOSTID + r''' \
        > /out/connect-$s 2>&1 || echo "connect $s failed" >&2
}
start a 4420 --lba-size 4096 --nawun 16K --nawupf 16K --nabsn 32K --nabspf 32K --awun 8K --awupf 8K \
    --volatile-write-cache on --mdts 6
start b 4421 --lba-size 512 --fdp 4 --placement-use 0=data,1=journal,2=metadata,3=background --trace /out/trace-b
i=0; until [ $(ls /sys/block | grep -c '^nvme[0-9]*n[0-9]*$') -ge 2 ]; do i=$((i+1)); [ $i -gt 100 ] && break; sleep 0.1; done
sleep 1
for d in /sys/block/nvme*n*; do
    n=${d##*/}
    case $n in *c*) continue ;; esac
    s=$(cat $d/device/serial | tr -d ' ')
    "$LCLOUDCTL" probe --format json /dev/$n > /out/probe-$s.json || echo "probe $n failed" >&2
    nvme id-ctrl /dev/${n%n*} -o json > /out/id-ctrl-$s.json
    nvme id-ctrl /dev/${n%n*} -b > /out/id-ctrl-$s.bin
    nvme id-ns /dev/$n -o json > /out/id-ns-$s.json
    cat $d/device/transport > /out/transport-$s
    for f in logical_block_size atomic_write_unit_min_bytes atomic_write_unit_max_bytes \
             atomic_write_max_bytes atomic_write_boundary_bytes max_hw_sectors_kb write_cache \
             max_write_streams write_stream_granularity; do
        echo "$f $(cat $d/queue/$f | tr ' ' _)"
    done > /out/queue-$s
    echo $n > /out/dev-$s
    echo $s >> /out/serials
done
# RWF_ATOMIC at the promise and past it; then bytes through the device into the file
a=$(cat /out/dev-a)
"$DIRECT_WRITE" /dev/$a 16384 65536 0 atomic; echo "atomic16k $?" >> /out/writes
"$DIRECT_WRITE" /dev/$a 32768 65536 0 atomic; echo "atomic32k $?" >> /out/writes
for s in a b; do
    dev=$(cat /out/dev-$s)
    dd if=/dev/urandom of=/tmp/pattern-$s bs=4096 count=40 2>/dev/null
    dd if=/tmp/pattern-$s of=/dev/$dev bs=4096 seek=100 oflag=direct conv=fsync 2>/dev/null; echo "dd-$s $?" >> /out/writes
done
head -c 16384 /dev/zero | tr '\0' Z > /tmp/atomic-pattern  # direct_write's byte, 0x5a
# FDP on b: nvme-cli's view (raw pages), then write stream 3 (placement handle 2) and 5 (past the 4 streams)
b=$(cat /out/dev-b); bc=/dev/${b%n*}
nvme fdp configs $bc -e 1 -b > /out/fdp-configs.bin; echo "configs $?" >> /out/fdp
nvme fdp usage $bc -e 1 -b > /out/fdp-usage.bin; echo "usage $?" >> /out/fdp
nvme fdp status /dev/$b -b > /out/fdp-status0.bin; echo "status0 $?" >> /out/fdp
nvme fdp stats $bc -e 1 -b > /out/fdp-stats0.bin; echo "stats0 $?" >> /out/fdp
"$DIRECT_WRITE" /dev/$b 8192 2097152 0 stream=3; echo "stream3 $?" >> /out/fdp
"$DIRECT_WRITE" /dev/$b 4096 2105344 0 stream=5; echo "stream5 $?" >> /out/fdp
nvme fdp stats $bc -e 1 -b > /out/fdp-stats1.bin; echo "stats1 $?" >> /out/fdp
nvme fdp status /dev/$b -b > /out/fdp-status1.bin; echo "status1 $?" >> /out/fdp
nvme fdp events $bc -e 1 -E -b > /out/fdp-events.bin; echo "events $?" >> /out/fdp
nvme fdp configs $bc -e 1 -o json > /out/fdp-configs.json 2>&1
nvme fdp status /dev/$b -o json > /out/fdp-status.json 2>&1
# the backing files once every write is done: an open of one while the target runs write-protects it
for s in a b; do
    dd if=/srv/$s.img bs=4096 skip=100 count=40 2>/dev/null | cmp - /tmp/pattern-$s; echo "cmp-$s $?" >> /out/writes
done
dd if=/srv/a.img bs=4096 skip=16 count=4 2>/dev/null | cmp - /tmp/atomic-pattern; echo "cmp-atomic $?" >> /out/writes
dd if=/srv/b.img bs=512 skip=4096 count=16 2>/dev/null | cmp -n 8192 - /tmp/atomic-pattern; echo "cmp-stream $?" >> /out/fdp
# DH-HMAC-CHAP: c wants every host to prove the secret nvme-cli made for it, and proves itself with its own
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:''' + HOSTID + r'''
CNQN=nqn.2026-12.org.liblcloud:c
key=$(nvme gen-dhchap-key -m 1 -n $HOSTNQN); ckey=$(nvme gen-dhchap-key -m 3 -l 64 -n $CNQN)
wrong=$(nvme gen-dhchap-key -m 1 -n $HOSTNQN)
(umask 077; echo "$key" > /srv/c.key; echo "$ckey" > /srv/c.ckey)
truncate -s 16M /srv/c.img
"$LCLOUD_TARGET" --ns /srv/c.img --nqn $CNQN --listen 127.0.0.1:4422 --serial c --dhchap-secret /srv/c.key \
    --dhchap-ctrl-secret /srv/c.ckey > /out/listen-c 2> /out/target-c.log &
i=0; until grep -q '^listening' /out/listen-c; do i=$((i+1)); [ $i -gt 100 ] && break; sleep 0.1; done
cconnect() { # name secret-options...
    n=$1; shift
    nvme connect -t tcp -a 127.0.0.1 -s 4422 -n $CNQN --hostnqn=$HOSTNQN --hostid=''' + HOSTID + r''' \
        --ctrl-loss-tmo=0 "$@" > /out/connect-c-$n 2>&1; echo "$n $?" >> /out/auth
}
cconnect none
cconnect wrong --dhchap-secret "$wrong"
cconnect wrong-ctrl --dhchap-secret "$key" --dhchap-ctrl-secret "$wrong"
cconnect right --dhchap-secret "$key" --dhchap-ctrl-secret "$ckey"
c=
i=0; while [ -z "$c" ] && [ $i -lt 100 ]; do
    for d in /sys/block/nvme*n*; do
        [ -e "$d" ] || continue
        case ${d##*/} in *c*) continue ;; esac
        [ "$(cat "$d/device/serial" | tr -d ' ')" = c ] && c=${d##*/}
    done
    i=$((i+1)); sleep 0.1
done
echo "dev-c ${c:-none}" >> /out/auth
if [ -n "$c" ]; then
    dd if=/tmp/pattern-a of=/dev/$c bs=4096 seek=10 oflag=direct conv=fsync 2>/dev/null; echo "dd-c $?" >> /out/auth
    dd if=/srv/c.img bs=4096 skip=10 count=40 2>/dev/null | cmp - /tmp/pattern-a; echo "cmp-c $?" >> /out/auth
fi
nvme disconnect -n $CNQN > /dev/null 2>&1
nvme disconnect-all > /dev/null 2>&1
dmesg > /out/dmesg
'''

DEVICES = ["--copy", os.path.realpath(TARGET or "lcloud-target"), "--env", "LCLOUD_TARGET=" + os.path.realpath(TARGET or "x"),
           "--copy", os.path.realpath(DIRECT_WRITE or "direct_write"),
           "--env", "DIRECT_WRITE=" + os.path.realpath(DIRECT_WRITE or "x"),
           "--module", "nvme-tcp", "--mem", "1024"]

# What each target was told, in the fields NVMe defines (zero-based blocks).
WANT = {
    "a": {"lba": 4096, "ns": {"nsfeat": 2, "nawun": 3, "nawupf": 3, "nabsn": 7, "nabspf": 7, "nabo": 0},
          "ctrl": {"awun": 1, "awupf": 1, "mdts": 6, "vwc": 1},
          # Linux 7: unit_min, unit_max, max, boundary from NAWUPF/NABSPF
          "queue": (4096, 16384, 16384, 32768)},
    "b": {"lba": 512, "ns": {"nsfeat": 0, "nawun": 0, "nawupf": 0, "nabsn": 0, "nabspf": 0, "nabo": 0},
          "ctrl": {"awun": 0, "awupf": 0, "mdts": 5, "vwc": 0},
          "queue": (512, 512, 512, 0)},
}
FDP_HANDLES = {"a": 0, "b": 4}
FDP_RU_BYTES = 64 << 20  # lcloud-target's reclaim unit
QUEUE_KEYS = ("atomic_write_unit_min_bytes", "atomic_write_unit_max_bytes",
              "atomic_write_max_bytes", "atomic_write_boundary_bytes")


def guest():
    if not TARGET or not DIRECT_WRITE:
        raise AssertionError("LCLOUD_TARGET and DIRECT_WRITE are not set (meson sets them)")
    return run_guest_once(GUEST, DEVICES, lane="current")


def queue(run, s):
    return dict(line.split() for line in run.text("queue-" + s).splitlines())


def test_hosts_connected_over_tcp():
    run = guest()
    assert sorted(run.text("serials").split()) == ["a", "b"], (run.text("serials"), run.text("dmesg")[-3000:])
    for s in ("a", "b"):
        assert run.text("transport-" + s).strip() == "tcp"
        assert "closing:" not in run.text("target-%s.log" % s), run.text("target-%s.log" % s)


def test_identify_as_nvme_cli_reads_it():
    run = guest()
    for s, want in WANT.items():
        ns, ctrl = run.json("id-ns-%s.json" % s), run.json("id-ctrl-%s.json" % s)
        assert {k: ns[k] & 2 if k == "nsfeat" else ns[k] for k in want["ns"]} == want["ns"], (s, ns)
        assert {k: ctrl[k] & 1 if k == "vwc" else ctrl[k] for k in want["ctrl"]} == want["ctrl"], (s, ctrl)
        assert ctrl["sn"].strip() == s and ctrl["subnqn"] == "nqn.2026-12.org.liblcloud:" + s
        assert ns["nsze"] == (64 << 20) // want["lba"]
        assert 1 << ns["lbafs"][ns["flbas"] & 0xF]["ds"] == want["lba"]


def test_kernel_limits_follow_the_promise():
    run = guest()
    for s, want in WANT.items():
        q = queue(run, s)
        assert int(q["logical_block_size"]) == want["lba"]
        assert tuple(int(q[k]) for k in QUEUE_KEYS) == want["queue"], (s, q)
        assert q["write_cache"] == ("write_back" if want["ctrl"]["vwc"] else "write_through"), (s, q)
        assert int(q["max_hw_sectors_kb"]) <= (4 << want["ctrl"]["mdts"]), (s, q)


def test_probe_agrees():
    run = guest()
    for s, want in WANT.items():
        probe = run.json("probe-%s.json" % s)["probes"][0]
        nvme = layer(probe, "nvme")["facts"]
        for k, v in list(want["ns"].items()) + list(want["ctrl"].items()):
            if k in nvme:
                got = nvme[k] & (2 if k == "nsfeat" else 0xFFFF)
                assert got == v, (s, k, nvme[k], v)
        assert nvme["lba_size"] == want["lba"]
        q = queue(run, s)
        disk = layer(probe, "disk")["facts"]
        for k in QUEUE_KEYS:
            assert disk[k] == int(q[k]), (s, k, disk[k], q[k])
        # the verdict never promises more than the kernel's RWF_ATOMIC limit
        assert probe["verdict"]["rwf_atomic"]["max_untorn_bytes"] <= int(q["atomic_write_unit_max_bytes"])
    a = layer(run.json("probe-a.json")["probes"][0], "nvme")["facts"]
    assert a["atomic_write_power_fail_bytes"] == 16384 and a["atomic_boundary_power_fail_bytes"] == 32768, a


def test_linux_cloud_extension():
    """The extension's bytes as nvme-cli reads them (id-ctrl -b), and probe's facts from them."""
    run = guest()
    want = {"a": {"lcloud_ext_version": 1, "lcloud_ext_untorn_bytes": 16384,
                  "lcloud_ext_untorn_boundary_bytes": 32768, "lcloud_ext_untorn_boundary_offset_bytes": 0,
                  "lcloud_ext_untorn_with_cache": True, "lcloud_ext_read_ahead_hint": False},
            "b": {"lcloud_ext_version": 1, "lcloud_ext_read_ahead_hint": False,
                  "lcloud_ext_placement": "0:data 1:journal 2:metadata 3:background"}}
    for s, facts in want.items():
        with open(os.path.join(run.files, "id-ctrl-%s.bin" % s), "rb") as f:
            vs = f.read()[3072:]  # nvme-cli's raw Identify Controller
        assert vs[0:8] == b"LNXCLOUD", vs[:16]
        assert int.from_bytes(vs[16:20], "little") == facts.get("lcloud_ext_untorn_bytes", 0)
        nvme = layer(run.json("probe-%s.json" % s)["probes"][0], "nvme")["facts"]
        got = {k: v for k, v in nvme.items() if k.startswith("lcloud_ext_")}
        assert got == facts, (s, got)


def test_rwf_atomic_and_data_reach_the_file():
    run = guest()
    writes = dict(line.split() for line in run.text("writes").splitlines())
    assert writes["atomic16k"] == "0", writes
    assert writes["atomic32k"] != "0", writes  # past atomic_write_unit_max_bytes: the kernel refuses it
    for s in ("a", "b"):
        assert writes["dd-" + s] == "0" and writes["cmp-" + s] == "0", writes
    # the 16 KiB atomic write landed at 64 KiB of the file
    assert writes["cmp-atomic"] == "0", writes


def raw(run, name):
    with open(os.path.join(run.files, name), "rb") as f:
        return f.read()


def ruamw(status):
    """Each handle's reclaim unit available media writes, from a raw reclaim unit handle status."""
    n = struct.unpack_from("<H", status, 14)[0]
    return [struct.unpack_from("<HHIQ", status, 16 + 32 * i) for i in range(n)]


def test_fdp_as_linux_and_nvme_cli_read_it():
    """CTRATT bit 19 in the raw Identify, queue/max_write_streams and write_stream_granularity from the
    kernel's own reading of the FDP configuration and handle status, and nvme-cli's fdp pages."""
    run = guest()
    fdp = dict(line.split() for line in run.text("fdp").splitlines())
    for s, n in FDP_HANDLES.items():
        ctratt = struct.unpack_from("<I", raw(run, "id-ctrl-%s.bin" % s), 96)[0]
        assert bool(ctratt & (1 << 19)) == bool(n), (s, hex(ctratt))
        q = queue(run, s)
        assert int(q["max_write_streams"]) == n, (s, q)
        assert int(q["write_stream_granularity"]) == (FDP_RU_BYTES if n else 0), (s, q)
    assert all(fdp[k] == "0" for k in ("configs", "usage", "status0", "stats0", "stats1", "status1", "events")), fdp
    configs = raw(run, "fdp-configs.bin")
    numfdpc, sze = struct.unpack_from("<HxxI", configs, 0)
    assert numfdpc == 0 and sze == 16 + 64 + 4 * 4 and len(configs) >= sze, (numfdpc, sze, len(configs))
    dsze, fdpa, vss, nrg, nruh, maxpids, nnss, runs = struct.unpack_from("<HBBIHHIQ", configs, 16)
    assert (nrg, nruh, maxpids, runs) == (1, 4, 3, FDP_RU_BYTES) and fdpa & 0x80, configs[:48].hex()
    # liblcloud's own probe reads the same feature, log and handle status through the kernel's passthrough
    for s, n in FDP_HANDLES.items():
        assert layer(run.json("probe-%s.json" % s)["probes"][0], "nvme")["facts"]["fdp_supported"] == bool(n)
    nvme = layer(run.json("probe-b.json")["probes"][0], "nvme")["facts"]
    want = {"fdp_enabled": True, "fdp_config_index": 0, "fdp_reclaim_groups": 1, "fdp_reclaim_unit_handles": 4,
            "fdp_max_placement_ids": 4, "fdp_reclaim_unit_bytes": FDP_RU_BYTES, "fdp_placement_id_count": 4,
            "fdp_placement_ids": "0,1,2,3"}
    assert {k: nvme.get(k) for k in want} == want, {k: v for k, v in nvme.items() if k.startswith("fdp")}
    usage = raw(run, "fdp-usage.bin")
    assert struct.unpack_from("<H", usage, 0)[0] == 4
    assert [d[:2] for d in ruamw(raw(run, "fdp-status0.bin"))] == [(i, i) for i in range(4)]


def test_write_stream_reaches_its_placement_handle():
    """io_uring write stream 3 of 4 leaves the host as a Write with DTYPE 2 and DSPEC 2 (the kernel's
    placement identifier list is the handle status's), lands in the file, and is counted: 8 KiB more in the
    FDP statistics, 16 blocks fewer in handle 2's reclaim unit; stream 5 is refused by the kernel."""
    run = guest()
    fdp = dict(line.split() for line in run.text("fdp").splitlines())
    assert fdp["stream3"] == "0" and fdp["stream5"] != "0", fdp
    assert fdp["cmp-stream"] == "0", fdp
    rows = [l.split() for l in run.text("trace-b").splitlines() if not l.startswith("#")]
    placed = [r for r in rows if r[1] == "0x01" and r[8] == "2"]
    # seq opcode nsid slba nlb fua lr dsm dtype dspec ...: one Write at 2 MiB, 16 blocks, handle 2
    assert [(r[3], r[4], r[9], r[12]) for r in placed] == [("4096", "16", "2", "0x000")], placed
    before, after = (int.from_bytes(raw(run, "fdp-stats%d.bin" % i)[0:16], "little") for i in (0, 1))
    assert after - before == 8192, (before, after)
    was, now = ruamw(raw(run, "fdp-status0.bin")), ruamw(raw(run, "fdp-status1.bin"))
    assert now[2][3] == was[2][3] - 16 and now[1][3] == was[1][3] and now[3][3] == was[3][3], (was, now)
    events = raw(run, "fdp-events.bin")
    assert struct.unpack_from("<I", events, 0)[0] == 0, events[:8].hex()  # the kernel sent no invalid handle


def test_kernel_host_authenticates():
    """The kernel's own DH-HMAC-CHAP: nvme connect --dhchap-secret with nvme-cli's secret (SHA-256 transform)
    and --dhchap-ctrl-secret (the target proves itself too) connects, and the target's log says every queue
    authenticated; without a secret, with a wrong one, or expecting another controller secret, it does not."""
    run = guest()
    auth = dict(line.split() for line in run.text("auth").splitlines())
    log = run.text("target-c.log")
    assert auth["right"] == "0" and auth["dev-c"] != "none", (auth, run.text("connect-c-right"), log[-3000:],
                                                               run.text("dmesg")[-3000:])
    assert auth["dd-c"] == "0" and auth["cmp-c"] == "0", auth
    for refused in ("none", "wrong", "wrong-ctrl"):
        assert auth[refused] != "0", (refused, auth, run.text("connect-c-" + refused))
    assert "the host's response does not match the secret" in log, log
    assert "the host gave up (AUTH_Failure2" in log, log  # the host saw the controller's response fail
    assert "authenticated (DH-HMAC-CHAP, hmac(sha256), NULL group; the controller too)" in log, log
    # every queue authenticated on its own: the admin queue and at least one I/O queue
    assert "queue 0 of controller" in log and log.count("authenticated (DH-HMAC-CHAP") >= 2, log


if __name__ == "__main__":
    main([test_hosts_connected_over_tcp, test_identify_as_nvme_cli_reads_it, test_kernel_limits_follow_the_promise,
          test_probe_agrees, test_rwf_atomic_and_data_reach_the_file, test_linux_cloud_extension,
          test_fdp_as_linux_and_nvme_cli_read_it, test_write_stream_reaches_its_placement_handle,
          test_kernel_host_authenticates])
