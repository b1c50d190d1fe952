#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The verdict on real devices in a QEMU guest (Linux 6.1: no RWF_ATOMIC, so
the device paths are what is tested here), table driven:
  - QEMU NVMe namespace, 4 KiB LBAs, AWUPF 0: one LBA, so 4 KiB on
    passthrough and plain_direct; 16 KiB refused, naming the 4096 limit;
  - a Google-PD-shaped SCSI disk with 16 KiB physical blocks: 16 KiB on
    plain_direct, with Google's conditions, once the block layer merges no
    writes (queue/nomerges 2); with the kernel's default (0) neighbouring
    writes can be merged into commands larger than 16 KiB: 512 bytes, naming
    nomerges;
  - that disk partitioned with sfdisk: a partition at sector 2049 (byte
    1049088, 512 past a 16 KiB physical block) keeps only 512-byte writes
    inside one physical block, naming its offset; one at 4 MiB keeps 16 KiB."""
import os
import subprocess
import tempfile

from vmlib import run_guest
from hostlib import main

GUEST = r'''
set -u
"$LCLOUDCTL" probe --format json /dev/nvme0n1 > /out/nvme.json
"$LCLOUDCTL" check --size 4K --path passthrough /dev/nvme0n1 > /out/nvme-4k.txt; echo $? > /out/nvme-4k.rc
"$LCLOUDCTL" check --size 16K --path passthrough /dev/nvme0n1 > /out/nvme-16k.txt; echo $? > /out/nvme-16k.rc
"$LCLOUDCTL" check --size 16K /dev/ng0n1 > /out/ng-16k.txt; echo $? > /out/ng-16k.rc
for d in /sys/block/sd*; do
    n=${d##*/}
    "$LCLOUDCTL" probe --format json /dev/$n > /out/$n-merges.json
    echo 2 > $d/queue/nomerges
    "$LCLOUDCTL" probe --format json /dev/$n > /out/$n.json
    for p in $d/$n[0-9]*; do
        [ -e "$p" ] || continue
        "$LCLOUDCTL" probe --format json /dev/${p##*/} > /out/${p##*/}.json
    done
    cat $d/device/model > /out/$n.model
done
ls /sys/block > /out/blocks
'''


def test_device_paths():
    tmp = tempfile.mkdtemp(prefix="lcloud-vm-img-")
    img = os.path.join(tmp, "gpd.img")
    with open(img, "wb") as f:
        f.truncate(64 << 20)
    subprocess.run(["sfdisk", "-q", img], input="label: dos\nstart=2049, size=4000, type=83\n"
                   "start=8192, size=20000, type=83\n", text=True, check=True, capture_output=True)
    run = run_guest(GUEST, ["--nvme", "lbs=4096,size=32M,serial=lcV",
                            "--scsi", "image=%s,lbs=512,pbs=16384,vendor=Google,product=PersistentDisk" % img])
    os.unlink(img)
    os.rmdir(tmp)

    v = run.json("nvme.json")["probes"][0]["verdict"]
    assert v["passthrough"]["max_untorn_bytes"] == 4096
    assert v["plain_direct"]["max_untorn_bytes"] == 4096
    assert v["buffered"]["max_untorn_bytes"] == 0
    assert v["rwf_atomic"]["max_untorn_bytes"] == 0  # Linux 6.1 has no RWF_ATOMIC
    assert run.text("nvme-4k.rc").strip() == "0", run.text("nvme-4k.txt")
    assert run.text("nvme-16k.rc").strip() == "6"
    assert "4096" in run.text("nvme-16k.txt"), run.text("nvme-16k.txt")
    assert run.text("ng-16k.rc").strip() == "6"

    disks = [n for n in run.text("blocks").split() if n.startswith("sd")]
    gpd = [n for n in disks if run.text(n + ".model").strip() == "PersistentDisk"]
    assert len(gpd) == 1, disks
    n = gpd[0]
    merges = run.json(n + "-merges.json")["probes"][0]["verdict"]["plain_direct"]
    # with merges on, the provider's per-block promise still keeps a whole aligned 16 KiB block
    # whole (the merged command is made of whole blocks where it carries it); writes between one
    # logical block and one physical block can share a block with a neighbour's part
    assert merges["max_untorn_bytes"] == 16384, merges
    assert merges["boundary_bytes"] == 16384, merges
    assert (merges["merge_gap_above_bytes"], merges["merge_gap_below_bytes"]) == (512, 16384), merges
    assert any(r["evidence"] == "sysfs:queue/nomerges" for r in merges["reasons"]), merges
    whole = run.json(n + ".json")["probes"][0]["verdict"]["plain_direct"]
    assert whole["max_untorn_bytes"] == 16384
    assert any(r["evidence"] == "cloud:gcp-pd-16k" for r in whole["reasons"])
    p1 = run.json(n + "1.json")["probes"][0]["verdict"]["plain_direct"]
    assert p1["max_untorn_bytes"] == 512
    assert any("1049088" in r["reason"] for r in p1["reasons"]), p1
    p2 = run.json(n + "2.json")["probes"][0]["verdict"]["plain_direct"]
    assert p2["max_untorn_bytes"] == 16384


if __name__ == "__main__":
    main([test_device_paths])
