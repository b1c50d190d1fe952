#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The NVMe layer against real NVMe controllers driven by Linux 6.1's nvme
driver (QEMU 7.2 guest): one controller with two 4 KiB-LBA namespaces and a
second with a 512-byte-LBA namespace. Every raw field lcloudctl reports must
equal what nvme-cli reports in the same guest; /dev/ngXnY probes the same
namespace; lcloudctl list shows every namespace. The guest kernel (6.1)
predates the atomic-write queue limits: they must read as not provided."""
from vmlib import layer, run_guest_once
from hostlib import main
from schemalib import validate

GUEST = r'''
set -u
i=0
for ns in /sys/block/nvme*n*; do
    n=${ns##*/}
    ctrl=/dev/${n%n*}
    "$LCLOUDCTL" probe --format json /dev/$n > /out/probe-$n.json || echo "probe $n failed" >&2
    g=$(echo $n | sed 's/^nvme/ng/')
    "$LCLOUDCTL" probe --format json /dev/$g > /out/probe-$g.json || echo "probe $g failed" >&2
    nvme id-ctrl $ctrl -o json > /out/id-ctrl-$n.json
    nvme id-ns /dev/$n -o json > /out/id-ns-$n.json
    nvme id-ctrl $ctrl > /out/id-ctrl-$n.txt
    nvme id-ns /dev/$n > /out/id-ns-$n.txt
    "$LCLOUDCTL" probe -H /dev/$n > /out/probe-$n.txt
    cat /sys/block/$n/queue/logical_block_size > /out/lbs-$n
    echo $n >> /out/namespaces
done
"$LCLOUDCTL" list -J > /out/list.json
"$LCLOUDCTL" list > /out/list.txt
"$LCLOUDCTL" list -J -O --size 16K > /out/list-all.json
"$LCLOUDCTL" list -J --tree --all > /out/list-tree.json
for n in $(cat /out/namespaces); do
    "$LCLOUDCTL" check --format json /dev/$n --size 4K > /out/check-$n.json || : # 6 and 8 answer too
done
'''

DEVICES = ["--nvme", "lbs=4096,ns=2,size=32M,serial=lcA", "--nvme", "lbs=512,ns=1,size=32M,serial=lcB"]


def guest():
    return run_guest_once(GUEST, DEVICES)


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


def test_nvme_fields_equal_nvme_cli():
    run = guest()
    namespaces = run.text("namespaces").split()
    assert len(namespaces) == 3, namespaces
    lbs_seen = set()
    for n in namespaces:
        probe = run.json("probe-%s.json" % n)["probes"][0]
        nvme = layer(probe, "nvme", n)
        keys = compare_raw(nvme, run.json("id-ctrl-%s.json" % n)) + compare_raw(nvme, run.json("id-ns-%s.json" % n))
        for required in ("vid", "mn", "sn", "fr", "mdts", "oacs", "oncs", "vwc", "awun", "awupf", "acwu",
                         "ctratt", "nsfeat", "nawun", "nawupf", "nacwu", "nabsn", "nabo", "nabspf", "noiob",
                         "npwg", "npwa", "npdg", "npda", "nows"):
            assert required in keys, (n, required, keys)
        lbs = int(run.text("lbs-%s" % n))
        lbs_seen.add(lbs)
        assert nvme["facts"]["lba_size"] == lbs
        # QEMU: NSABP clear, AWUPF 0: one LBA is power-fail atomic, from the controller field
        assert nvme["facts"]["atomic_write_power_fail_bytes"] == (run.json("id-ctrl-%s.json" % n)["awupf"] + 1) * lbs
        assert nvme["sources"]["atomic_write_power_fail_bytes"] == "nvme:id-ctrl:awupf"
        disk = layer(probe, "disk", n)
        assert disk["facts"]["logical_block_size"] == lbs
        # Linux 6.1 has no atomic write limits: not provided, never 0
        assert disk["facts"]["atomic_write_unit_max_bytes"] is None
        assert disk["unavailable"]["atomic_write_unit_max_bytes"]["state"] == "not-provided"
        assert any(note["code"] == "nvme-kernel-view" for note in probe["notes"])

        # the generic node is the same namespace
        ng = "ng" + n[len("nvme"):]
        gprobe = run.json("probe-%s.json" % ng)["probes"][0]
        assert gprobe["target"] == "nvme-generic"
        assert layer(gprobe, "nvme", n)["facts"] == nvme["facts"]
    assert lbs_seen == {512, 4096}


def test_list_shows_every_namespace():
    run = guest()
    names = {d["name"] for d in run.json("list.json")["blockdevices"]}
    for n in run.text("namespaces").split():
        assert n in names, (n, names)
    text = run.text("list.txt")
    # the names the guest's sysfs gave: which controller is nvme0 follows the (asynchronous) probe order
    words = set(text.split())
    assert "AWU-MAX" in words and set(run.text("namespaces").split()) <= words, text


def nvme_cli_text(text):
    """nvme-cli's normal output: 'name   : value' lines."""
    fields = {}
    for line in text.splitlines():
        if ":" in line and not line.startswith(" "):
            k, v = line.split(":", 1)
            fields.setdefault(k.strip(), v.strip())
    return fields


def test_raw_fields_look_like_nvme_cli():
    """The normal output shows the raw fields as 'nvme id-ctrl' and 'nvme id-ns' print them (hex
    where they use hex), and -H names the bits of the capability fields."""
    run = guest()
    for n in run.text("namespaces").split():
        text = run.text("probe-%s.txt" % n)
        mine = {}
        for line in text.split("nvme %s (about" % n)[1].split("\n\n")[0].splitlines()[1:]:
            parts = line.split()
            if len(parts) == 2 and not line.startswith("    "):
                mine[parts[0]] = parts[1]
        cli = nvme_cli_text(run.text("id-ctrl-%s.txt" % n))
        cli.update(nvme_cli_text(run.text("id-ns-%s.txt" % n)))
        compared = []
        for key in ("vid", "ver", "ctratt", "oacs", "oncs", "vwc", "mdts", "awun", "awupf", "nsze", "nsfeat",
                    "flbas", "nawun", "nawupf"):
            if key in mine and key in cli:
                assert mine[key] == cli[key], (n, key, mine[key], cli[key])
                compared.append(key)
        assert {"vid", "oacs", "oncs", "vwc", "nsfeat", "flbas"} <= set(compared), (n, compared)
        oncs = int(cli["oncs"], 16)
        decoded = "Dataset Management: %s" % ("yes" if oncs & 4 else "no")
        assert decoded in text, (n, decoded)


def test_json_matches_the_schema():
    """What lcloudctl prints about real NVMe namespaces under Linux 6.1 keeps the JSON contract."""
    run = guest()
    for n in run.text("namespaces").split():
        validate("probe", run.json("probe-%s.json" % n), "probe " + n)
        validate("probe", run.json("probe-%s.json" % n.replace("nvme", "ng", 1)), "probe ng of " + n)
        validate("check", run.json("check-%s.json" % n), "check " + n)
    for f in ("list.json", "list-all.json", "list-tree.json"):
        validate("list", run.json(f), f)
    devices = run.json("list-all.json")["blockdevices"]
    assert {d["tran"] for d in devices if d["type"] == "disk" and d["name"].startswith("nvme")} == {"nvme"}
    assert all(d["model"] for d in devices if d["name"].startswith("nvme")), devices


if __name__ == "__main__":
    main([test_raw_fields_look_like_nvme_cli, test_nvme_fields_equal_nvme_cli, test_list_shows_every_namespace,
          test_json_matches_the_schema])
