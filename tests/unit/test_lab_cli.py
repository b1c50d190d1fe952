#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lcloudctl replay on write logs made here (tests/host/stamps.py writes the
dm-log-writes layout and the stamps from their descriptions): the entry
kinds counted, FUA and flushes deciding durability under a volatile cache,
QEMU's stale super block and --scan-tail, a boundary model taken from a
probe's JSON, and damaged logs refused with exit status 5. No root needed."""
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "host"))
from hostlib import main  # noqa: E402
import stamps  # noqa: E402

LCLOUDCTL = os.environ["LCLOUDCTL"]
PAGE = 16384
RUN = 0x5EED


def replay(*args):
    p = subprocess.run([LCLOUDCTL, "replay"] + list(args), capture_output=True, text=True)
    doc = (json.loads(p.stdout) if p.stdout else None) if "--format" in args else p.stdout
    return p.returncode, doc, p.stderr


def mark_entry(text, ss=512):
    """A kernel dm-log-writes MARK: the text inside the entry's own sector, no data."""
    return struct.pack("<QQQQ", 0, 0, stamps.MARK, len(text)) + text.encode()


def raw_log(path, entries, ss=512, count=None):
    """ENTRIES: (header bytes, data); COUNT overrides the super block's entry count."""
    out = bytearray(struct.pack("<QQQI", stamps.LOG_MAGIC, 1, len(entries) if count is None else count, ss)
                    .ljust(ss, b"\0"))
    for head, data in entries:
        out += head.ljust(ss, b"\0") + data
    with open(path, "wb") as f:
        f.write(out)
    return bytes(out)


def head(sector, nr, flags=0):
    return struct.pack("<QQQQ", sector, nr, flags, 0)


def test_entry_kinds_and_durability():
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "log")
        p0, p1, p2 = (stamps.page(RUN, n, 7 + n, PAGE) for n in range(3))
        raw_log(log, [
            (head(0, 32), p0),                       # a write
            (head(0, 0, stamps.FLUSH), b""),         # QEMU's flush: no sectors
            (head(64, 32), p1),                      # after the last flush: not durable
            (head(128, 32, stamps.FUA), p2),         # FUA: durable by itself
            (head(512, 64, stamps.DISCARD), b""),    # no data follows a discard
            (mark_entry("after-run"), b""),
        ])
        rc, doc, err = replay(log, "--format", "json", "--all", "--lba", "4K", "--atomic-bytes", "16K",
                              "--volatile-cache")
        assert rc == 0 and doc["result"] == "atomic", (rc, err)
        info = doc["logs"][0]
        assert (info["entries"], info["writes"], info["flushes"], info["fua_writes"], info["discards"],
                info["marks"]) == (6, 3, 1, 1, 1, 1), info
        assert info["bytes_written"] == 3 * PAGE
        durable = {p["page"]: p["durable"] for p in doc["page_writes"]}
        assert durable == {0: True, 1: False, 2: True}, durable
        assert doc["summary"]["not_durable"] == 1
        kinds = [c["kind"] for p in doc["page_writes"] for c in p["commands"]]
        assert kinds == ["write", "write", "write+fua"], kinds
        assert [(p["device_offset"], p["relocated"]) for p in doc["page_writes"]] == \
            [(0, None), (64 * 512, None), (128 * 512, None)], doc["page_writes"]
        # without a volatile cache every completed write is durable
        rc, doc, _ = replay(log, "--format", "json", "--lba", "4K", "--atomic-bytes", "16K")
        assert rc == 0 and doc["summary"]["not_durable"] == 0 and doc["page_writes"] == [], doc
        # the default model: one 512-byte block is atomic, a 16 KiB command is not
        rc, doc, _ = replay(log, "--format", "json")
        assert rc == 11 and doc["summary"]["tearable"] == 3 and doc["model"]["lba"] == 512, doc["summary"]
        assert doc["model"]["sources"]["atomic_bytes"] == "default: one logical block", doc["model"]


def test_stale_super_block():
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "log")
        raw_log(log, [
            (head(0, 0, stamps.FLUSH), b""),
            (head(0, 16), stamps.page(RUN, 0, 1, PAGE)[:8192]),
            (head(16, 16), stamps.page(RUN, 0, 1, PAGE)[8192:]),
        ], count=1)
        rc, doc, err = replay(log, "--format", "json")
        assert rc == 0 and doc["logs"][0]["entries"] == 1 and doc["logs"][0]["trailing_bytes"] == 2 * 512 + PAGE, doc["logs"][0]
        rc, text, err = replay(log)
        assert "--scan-tail" in err, err
        rc, doc, err = replay(log, "--format", "json", "--scan-tail", "--lba", "4K", "--atomic-bytes", "16K")
        assert rc == 11 and doc["logs"][0]["entries"] == 3 and doc["logs"][0]["super_entries"] == 1, doc["logs"][0]
        assert doc["page_writes"][0]["rules"] == ["split"], doc["page_writes"]


def test_boundary_from_probe_json():
    with tempfile.TemporaryDirectory() as d:
        log, probe = os.path.join(d, "log"), os.path.join(d, "probe.json")
        ss = 4096
        # page 1 at 16 KiB crosses the boundary at 24 KiB (32 KiB boundaries from NABO 24 KiB); page 2 does not
        stamps.write_log(log, [(16384 // ss, 0, stamps.page(RUN, 1, 1, PAGE)),
                               (57344 // ss, 0, stamps.page(RUN, 2, 2, PAGE))], sector_size=ss)
        with open(probe, "w") as f:
            json.dump({"probes": [{"path": "/dev/nvme0n1", "layers": [
                {"layer": "disk", "name": "nvme0n1", "facts": {"logical_block_size": 4096}},
                {"layer": "nvme", "name": "nvme0n1", "facts": {
                    "lba_size": 4096, "atomic_write_power_fail_bytes": 16384,
                    "atomic_boundary_power_fail_bytes": 32768, "atomic_boundary_offset_bytes": 24576}}]}]}, f)
        rc, doc, err = replay(log, "--format", "json", "--all", "--model-from", probe)
        assert (doc["model"]["boundary"], doc["model"]["boundary_offset"]) == (32768, 24576), doc["model"]
        assert doc["model"]["sources"]["boundary"] == "probe:nvme:nvme0n1:atomic_boundary_power_fail_bytes"
        verdicts = {p["page"]: (p["verdict"], p["rules"]) for p in doc["page_writes"]}
        assert rc == 11 and verdicts == {1: ("tearable", ["boundary"]), 2: ("atomic", [])}, verdicts
        # the options override the probe
        rc, doc, _ = replay(log, "--format", "json", "--model-from", probe, "--boundary", "0")
        assert rc == 0 and doc["model"]["boundary"] == 0, doc["model"]
        # another run's pages only: nothing of this one
        rc, doc, _ = replay(log, "--format", "json", "--model-from", probe, "--run", "0x1234")
        assert rc == 0 and doc["summary"]["page_writes"] == 0 and doc["summary"]["runs"] == ["0x%016x" % RUN], doc
        rc, doc, _ = replay(log, "--format", "json", "--model-from", probe, "--run", hex(RUN))
        assert rc == 11 and doc["summary"]["page_writes"] == 2, doc["summary"]
        # not a probe: the wrong kind of file, named with the key that is not there
        with open(probe, "w") as f:
            f.write("{}")
        rc, _, err = replay(log, "--model-from", probe)
        assert rc == 5 and '"probes" is missing' in err, (rc, err)


def probe_file(path, layers):
    with open(path, "w") as f:
        json.dump({"probes": [{"path": "/dev/x", "layers": layers}]}, f)


def test_the_verdicts_model():
    """--model-from builds the model the verdict applies (lib/verdict/power_fail.c), not one of its own: a SCSI disk's
    WRITE ATOMIC limit covers no logged plain write, a provider's promise aligned to the write's size does not
    cover an 8 KiB write at 4 KiB, and a shared namespace's AWUPF is the smallest among its controllers."""
    with tempfile.TemporaryDirectory() as d:
        log, probe = os.path.join(d, "log"), os.path.join(d, "probe.json")
        ss = 512
        # one 8 KiB page written as one command at 4 KiB, one at 16 KiB
        small = 8192
        stamps.write_log(log, [(4096 // ss, 0, stamps.page(RUN, 1, 1, small)),
                               (16384 // ss, 0, stamps.page(RUN, 2, 2, small))], sector_size=ss)
        disk = {"layer": "disk", "name": "sdb", "facts": {"logical_block_size": 512, "write_cache": "write through"}}
        # SCSI: max_atomic_transfer_bytes is WRITE ATOMIC(16)'s, and the log's commands are plain WRITEs
        probe_file(probe, [disk, {"layer": "scsi", "name": "sdb", "facts": {
            "logical_block_length": 512, "max_atomic_transfer_bytes": 65536}}])
        rc, doc, err = replay(log, "--format", "json", "--all", "--model-from", probe)
        assert doc["model"]["atomic_bytes"] == 512, doc["model"]
        assert rc == 11 and all(p["verdict"] == "tearable" for p in doc["page_writes"]), doc["page_writes"]
        # AWS: 16 KiB untorn, aligned to the write's own size
        probe_file(probe, [disk, {"layer": "nvme", "name": "nvme1n1", "facts": {"lba_size": 512}},
                           {"layer": "cloud", "name": "aws", "facts": {
                               "promise_untorn_max_bytes": 16384, "promise_untorn_granularity_bytes": 4096,
                               "promise_boundary_bytes": 0, "promise_alignment": "size", "product": "EBS"},
                            "sources": {"promise_untorn_max_bytes": "cloud:aws-ebs-twp"}}])
        rc, doc, err = replay(log, "--format", "json", "--all", "--model-from", probe)
        assert doc["model"]["atomic_bytes"] == 16384 and doc["model"]["aligned_to_size"], doc["model"]
        assert doc["model"]["sources"]["atomic_bytes"].startswith("probe:cloud:aws:"), doc["model"]
        verdicts = {p["page"]: (p["verdict"], p["rules"]) for p in doc["page_writes"]}
        assert rc == 11 and verdicts == {1: ("tearable", ["misaligned"]), 2: ("atomic", [])}, verdicts
        # Google: inside one aligned 16 KiB block, so the 8 KiB write at 4 KiB is whole too
        google = {"layer": "cloud", "name": "gcp", "facts": {
            "promise_untorn_max_bytes": 16384, "promise_untorn_granularity_bytes": 4096,
            "promise_boundary_bytes": 16384, "promise_alignment": "boundary", "product": "Hyperdisk"}}
        probe_file(probe, [disk, {"layer": "nvme", "name": "nvme1n1", "facts": {"lba_size": 512}}, google])
        rc, doc, err = replay(log, "--format", "json", "--all", "--model-from", probe)
        verdicts = {p["page"]: p["verdict"] for p in doc["page_writes"]}
        assert rc == 0 and not doc["model"]["aligned_to_size"] and verdicts == {1: "atomic", 2: "atomic"}, doc
        # a word the model does not know is bad input, not "aligned to the size"
        google["facts"]["promise_alignment"] = "sideways"
        probe_file(probe, [disk, {"layer": "nvme", "name": "nvme1n1", "facts": {"lba_size": 512}}, google])
        rc, doc, err = replay(log, "--format", "json", "--all", "--model-from", probe)
        assert rc == 5 and "promise_alignment" in err and "sideways" in err, (rc, err)
        # the controllers of a shared namespace: AWUPF 16 KiB on the one that answered, 4 KiB the smallest
        nvme = {"layer": "nvme", "name": "nvme7n1", "facts": {
            "lba_size": 512, "atomic_write_power_fail_bytes": 16384, "multipath_paths": 2,
            "atomic_write_power_fail_bytes_every_path": 4096},
            "sources": {"atomic_write_power_fail_bytes": "nvme:id-ctrl:awupf",
                        "atomic_write_power_fail_bytes_every_path": "nvme:id-ctrl:awupf:every-path"}}
        probe_file(probe, [disk, nvme])
        rc, doc, err = replay(log, "--format", "json", "--all", "--model-from", probe)
        assert doc["model"]["atomic_bytes"] == 4096, doc["model"]
        assert rc == 11 and all(p["rules"] == ["over-unit"] for p in doc["page_writes"]), doc["page_writes"]
        # and with NAWUPF (the namespace's own), 16 KiB stands on every path
        nvme["sources"]["atomic_write_power_fail_bytes"] = "nvme:id-ns:nawupf"
        probe_file(probe, [disk, nvme])
        rc, doc, err = replay(log, "--format", "json", "--all", "--model-from", probe)
        assert rc == 0 and doc["model"]["atomic_bytes"] == 16384, (rc, doc["model"])


def test_two_devices():
    """md raid0 with 8 KiB chunks over two logged devices: page 0's halves on each."""
    with tempfile.TemporaryDirectory() as d:
        log0, log1 = os.path.join(d, "nvme0.log"), os.path.join(d, "nvme1.log")
        pg = stamps.page(RUN, 0, 3, PAGE)
        stamps.write_log(log0, [(0, 0, pg[:8192]), (0, stamps.FLUSH, b"")])
        stamps.write_log(log1, [(0, 0, pg[8192:]), (0, stamps.FLUSH, b"")])
        rc, doc, err = replay(log0, log1, "--format", "json", "--lba", "4K", "--atomic-bytes", "16K")
        assert rc == 11 and [l["file"] for l in doc["logs"]] == [log0, log1], (rc, err)
        (pw,) = doc["page_writes"]
        assert pw["rules"] == ["split"] and pw["across_devices"], pw
        assert [(c["log"], c["entry"], c["first_block"]) for c in pw["commands"]] == [(0, 0, 0), (1, 0, 16)], pw
        assert pw["tearing_cut"] == {"log": 1, "cut": 0, "tear_blocks": 0, "tear_bytes": 0}, pw["tearing_cut"]
        rc, text, _ = replay(log0, log1, "--lba", "4K", "--atomic-bytes", "16K")
        assert "to more than one device" in text and "log 1 entry 0" in text, text
        # one device alone holds half of the page
        rc, doc, _ = replay(log0, "--format", "json", "--lba", "4K", "--atomic-bytes", "16K")
        assert rc == 0 and doc["summary"]["incomplete"] == 1, doc["summary"]
        # an image is made from one device's log
        rc, _, err = replay(log0, log1, "--base", log0, "--out", os.path.join(d, "img"), "--cut", "1")
        assert rc == 2 and "one device" in err, (rc, err)


def test_damaged_logs():
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "log")
        good = raw_log(log, [(head(0, 32), stamps.page(RUN, 0, 1, PAGE))])
        for data, words in ((b"\0" * 512, "not a write log"),
                            (good[:8] + struct.pack("<Q", 2) + good[16:], "version 2"),
                            (good[:-1000], "truncated"),
                            (good[:16] + struct.pack("<Q", 1 << 62) + good[24:], "past the end"),
                            (good[:512 + 8] + struct.pack("<Q", 1 << 61) + good[512 + 16:], "64 bits"),
                            (good[:10], "fewer than")):
            with open(log, "wb") as f:
                f.write(data)
            rc, _, err = replay(log)
            assert rc == 5 and words in err and "lcloudctl replay" in err, (words, rc, err)
        rc, _, err = replay(os.path.join(d, "missing"))
        assert rc == 3, (rc, err)
        # a model that is not one
        with open(log, "wb") as f:
            f.write(good)
        rc, _, err = replay(log, "--lba", "3000")
        assert rc == 2 and "power of two" in err, (rc, err)


if __name__ == "__main__":
    main([test_the_verdicts_model, test_entry_kinds_and_durability, test_stale_super_block,
          test_boundary_from_probe_json, test_two_devices, test_damaged_logs])
