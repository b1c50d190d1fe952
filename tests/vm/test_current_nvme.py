#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lane: current (QEMU 11 + Linux 7). NVMe namespaces whose atomic promise the
test chooses, driven by a kernel that has the atomic queue limits:
  - lcA: 4 KiB LBAs, NAWUN=NAWUPF=3 (16 KiB), NABSN=NABSPF=7 (32 KiB boundary);
  - lcB: the same with NABO=2 (boundary offset 8 KiB): Linux then offers no
    atomic writes at all;
  - lcC: AWUPF-only controller (AWUN=AWUPF=3, the namespace without NSABP):
    Linux ignores AWUPF and reports one block;
  - lcD: 512-byte LBAs, NAWUPF=31 (16 KiB), NABSPF=63 (32 KiB boundary);
  - lcF: FDP on its subsystem, 8 reclaim unit handles of 1 MiB: Linux shows
    them as write streams.
Every raw NVMe field lcloudctl reports must equal nvme-cli's reading in the
same guest, the derived byte sizes must follow the NVMe rules computed here
from nvme-cli's fields, and the disk layer's atomic limits must equal the
guest's sysfs files. The kernel's own answers are pinned too (they are what
the lane exists to show). Verdict: only the unambiguous rule is asserted,
rwf_atomic's maximum = the kernel's atomic_write_unit_max_bytes."""
from vmlib import layer, run_guest_once
from hostlib import main
from schemalib import validate

GUEST = r'''
set -u
for d in /sys/block/nvme*n*; do
    n=${d##*/}
    case $n in *c*) continue ;; esac
    s=$(cat $d/device/serial | tr -d ' ')
    "$LCLOUDCTL" probe --format json /dev/$n > /out/probe-$s.json || echo "probe $n failed" >&2
    nvme id-ctrl /dev/${n%n*} -o json > /out/id-ctrl-$s.json
    nvme id-ns /dev/$n -o json > /out/id-ns-$s.json
    for f in logical_block_size atomic_write_unit_min_bytes atomic_write_unit_max_bytes \
             atomic_write_max_bytes atomic_write_boundary_bytes max_write_streams write_stream_granularity; do
        echo "$f $(cat $d/queue/$f)"
    done > /out/queue-$s
    echo $s >> /out/serials
done
"$LCLOUDCTL" list -J -O --size 16K > /out/list-all.json
dmesg > /out/dmesg
'''

ATOMIC_A = "atomic.nawun=3,atomic.nawupf=3,atomic.nabsn=7,atomic.nabspf=7"
DEVICES = ["--nvme", "lbs=4096,size=16M,serial=lcA," + ATOMIC_A,
           "--nvme", "lbs=4096,size=16M,serial=lcB,atomic.nabo=2," + ATOMIC_A,
           "--nvme", "lbs=4096,size=16M,serial=lcC,ctrl.atomic.awun=3,ctrl.atomic.awupf=3",
           "--nvme", "lbs=512,size=16M,serial=lcD,atomic.nawun=31,atomic.nawupf=31,"
                     "atomic.nabsn=63,atomic.nabspf=63",
           "--nvme", "lbs=4096,size=16M,serial=lcF,subsys.fdp=on,subsys.fdp.nruh=8,subsys.fdp.runs=1M,fdp.ruhs=0-7"]

# What Linux 7 puts in queue/: unit_min, unit_max, max, boundary.
KERNEL = {
    "lcA": (4096, 16384, 16384, 32768),
    "lcB": (0, 0, 0, 0),          # NABO != 0: no atomic writes
    "lcC": (4096, 4096, 4096, 0),  # "AWUPF ignored, only NAWUPF accepted"
    "lcD": (512, 16384, 16384, 32768),
    "lcF": (4096, 4096, 4096, 0),
}
QUEUE_KEYS = ("atomic_write_unit_min_bytes", "atomic_write_unit_max_bytes",
              "atomic_write_max_bytes", "atomic_write_boundary_bytes")


def guest():
    return run_guest_once(GUEST, DEVICES, lane="current")


def queue(run, serial):
    return {k: int(v) for k, v in (line.split() for line in run.text("queue-" + serial).splitlines())}


def compare_raw(nvme, cli):
    """Raw fields under nvme-cli's names must hold nvme-cli's values."""
    compared = []
    for key, want in cli.items():
        if key not in nvme["facts"] or isinstance(want, (dict, list)):
            continue
        got = nvme["facts"][key]
        if isinstance(want, str):
            want = want.rstrip(" ")
        assert got == want, (key, got, want)
        compared.append(key)
    return compared


def expected_sizes(ctrl, ns, lba):
    """The NVMe rules, from nvme-cli's fields: with NSABP the namespace fields
    hold (0 = the controller's), without it the controller's AWUN/AWUPF."""
    if ns["nsfeat"] & 2:
        return {
            "atomic_write_normal_bytes": ((ns["nawun"] or ctrl["awun"]) + 1) * lba,
            "atomic_write_power_fail_bytes": ((ns["nawupf"] or ctrl["awupf"]) + 1) * lba,
            "atomic_boundary_power_fail_bytes": (ns["nabspf"] + 1) * lba if ns["nabspf"] else 0,
            "atomic_boundary_normal_bytes": (ns["nabsn"] + 1) * lba if ns["nabsn"] else 0,
            "atomic_boundary_offset_bytes": ns["nabo"] * lba,
        }
    return {
        "atomic_write_normal_bytes": (ctrl["awun"] + 1) * lba,
        "atomic_write_power_fail_bytes": (ctrl["awupf"] + 1) * lba,
        "atomic_boundary_power_fail_bytes": 0,
    }


def test_nvme_fields_equal_nvme_cli():
    run = guest()
    serials = sorted(run.text("serials").split())
    assert serials == sorted(KERNEL), serials
    for s in serials:
        probe = run.json("probe-%s.json" % s)["probes"][0]
        nvme = next(l for l in probe["layers"] if l["layer"] == "nvme")
        ctrl, ns = run.json("id-ctrl-%s.json" % s), run.json("id-ns-%s.json" % s)
        keys = compare_raw(nvme, ctrl) + compare_raw(nvme, ns)
        for required in ("awun", "awupf", "acwu", "nsfeat", "nawun", "nawupf", "nacwu", "nabsn", "nabo",
                         "nabspf", "mdts", "vwc", "oncs", "ctratt"):
            assert required in keys, (s, required, keys)
        lba = queue(run, s)["logical_block_size"]
        assert nvme["facts"]["lba_size"] == lba
        for key, want in expected_sizes(ctrl, ns, lba).items():
            assert nvme["facts"].get(key) == want, (s, key, nvme["facts"].get(key), want)


def test_the_device_promises_what_lcvm_asked():
    """lcvm's options reach the device model (read back with nvme-cli)."""
    run = guest()
    a, b, d = (run.json("id-ns-%s.json" % s) for s in ("lcA", "lcB", "lcD"))
    assert (a["nawupf"], a["nabspf"], a["nabo"], a["nsfeat"] & 2) == (3, 7, 0, 2)
    assert (b["nawupf"], b["nabspf"], b["nabo"]) == (3, 7, 2)
    assert (d["nawupf"], d["nabspf"]) == (31, 63)
    c_ctrl, c_ns = run.json("id-ctrl-lcC.json"), run.json("id-ns-lcC.json")
    assert (c_ctrl["awun"], c_ctrl["awupf"], c_ns["nawupf"], c_ns["nsfeat"] & 2) == (3, 3, 0, 0)


def test_kernel_limits_equal_sysfs():
    run = guest()
    for s, want in KERNEL.items():
        q = queue(run, s)
        assert tuple(q[k] for k in QUEUE_KEYS) == want, (s, q)
        probe = run.json("probe-%s.json" % s)["probes"][0]
        disk = layer(probe, "disk")
        for k in QUEUE_KEYS + ("logical_block_size",):
            assert disk["facts"][k] == q[k], (s, k, disk["facts"][k], q[k])
    assert "AWUPF ignored" in run.text("dmesg")


def test_fdp_write_streams():
    """FDP (CTRATT bit 19) as nvme-cli reads it; Linux turns the reclaim unit
    handles into write streams, which the disk layer must show as sysfs does."""
    run = guest()
    for s in KERNEL:
        ctratt = run.json("id-ctrl-%s.json" % s)["ctratt"]
        probe = run.json("probe-%s.json" % s)["probes"][0]
        nvme = next(l for l in probe["layers"] if l["layer"] == "nvme")
        assert nvme["facts"]["fdp_supported"] == bool(ctratt & (1 << 19)) == (s == "lcF"), (s, ctratt)
        q, disk = queue(run, s), layer(probe, "disk")["facts"]
        for k in ("max_write_streams", "write_stream_granularity"):
            assert disk[k] == q[k], (s, k, disk[k], q[k])
        assert (q["max_write_streams"], q["write_stream_granularity"]) == ((8, 1 << 20) if s == "lcF" else (0, 0)), (s, q)


def test_rwf_atomic_maximum_is_the_kernels():
    run = guest()
    for s in KERNEL:
        v = run.json("probe-%s.json" % s)["probes"][0]["verdict"]
        assert v["rwf_atomic"]["max_untorn_bytes"] == queue(run, s)["atomic_write_unit_max_bytes"], (s, v["rwf_atomic"])


def test_json_matches_the_schema_and_list_agrees():
    """The current kernel's atomic limits keep the JSON contract, and list's verdict columns are probe's."""
    run = guest()
    verdicts = {}
    for s in run.text("serials").split():
        doc = run.json("probe-%s.json" % s)
        validate("probe", doc, "probe " + s)
        p = doc["probes"][0]
        verdicts[p["layers"][0]["name"]] = p["verdict"]
    listing = run.json("list-all.json")
    validate("list", listing, "list -J -O --size 16K")
    rows = {d["name"]: d for d in listing["blockdevices"]}
    for name, v in verdicts.items():
        for col, path in (("rwf-atomic", "rwf_atomic"), ("passthrough", "passthrough"), ("plain-direct", "plain_direct")):
            want = v[path]["max_untorn_bytes"] if v[path]["max_untorn_bytes"] or not v[path]["unknown_reason"] else None
            assert rows[name][col] == want, (name, col, rows[name][col], v[path])
        # never untorn where no path proves 16 KiB
        if max(v[p]["max_untorn_bytes"] for p in ("rwf_atomic", "passthrough", "plain_direct")) < 16384:
            assert rows[name]["untorn"] != "yes", (name, rows[name], v)


if __name__ == "__main__":
    main([test_nvme_fields_equal_nvme_cli, test_the_device_promises_what_lcvm_asked, test_kernel_limits_equal_sysfs,
          test_fdp_write_streams, test_rwf_atomic_maximum_is_the_kernels, test_json_matches_the_schema_and_list_agrees])
