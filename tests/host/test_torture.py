#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lcloudctl torture on the real 6.18 kernel: a run through RWF_ATOMIC on XFS
over a loop device, every page read back with the tests' own decoder
(stamps.py), then simulated crashes on copies of the file (a page half
overwritten by an older generation, a page with garbage, a lost write, a
truncated copy, a torn record) that verify must name exactly; and the
refusal to write to a mounted or formatted device."""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import lcloudctl, loop_device, main, mounted_fs, need_root, run, scratch_dir  # noqa: E402
import stamps  # noqa: E402

PAGE = 16384
PAGES = 64


def torture_run(target, record, *extra):
    p = lcloudctl("torture", "run", target, "--page-size", "16K", "--pages", str(PAGES), "--record", record,
                  "--format", "json", *extra)
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    return json.loads(p.stdout)


def verify(target, record, *extra):
    p = lcloudctl("torture", "verify", target, "--record", record, "--format", "json", *extra)
    assert p.returncode in (0, 9, 10), (p.returncode, p.stdout, p.stderr)
    return p.returncode, json.loads(p.stdout)


def read_pages(path):
    with open(path, "rb") as f:
        data = f.read()
    return [data[i * PAGE:(i + 1) * PAGE] for i in range(len(data) // PAGE)]


def own_reading(path, run_id):
    """Generation of every page by the tests' decoder; every block must agree."""
    gens = []
    for n, pg in enumerate(read_pages(path)):
        seen = {stamps.decode(pg[b * 512:(b + 1) * 512]) for b in range(PAGE // 512)}
        gens_here = {s[2] for s in seen if s}
        assert None not in seen and len(gens_here) == 1, "page %d is not one whole generation: %s" % (n, seen)
        assert all(s[0] == run_id and s[1] == n for s in seen), "page %d carries another page's stamps" % n
        gens.append(gens_here.pop())
    return gens


def test_run_verify_and_simulated_crashes():
    need_root()
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        data = os.path.join(mnt, "pages")
        record = os.path.join(mnt, "pages.record")
        # pages at 4 KiB: 16 KiB atomic writes must be aligned to 16 KiB; refused before anything is written
        p = lcloudctl("torture", "run", data, "--pages", "8", "--offset", "4K", "--record", record)
        assert p.returncode == 7 and "page 0 (offset 4096) would not be an untorn write" in p.stderr, p.stderr
        assert not os.path.exists(data) and not os.path.exists(record), "a refused run left files"
        out = torture_run(data, record, "--path", "rwf_atomic", "--depth", "4", "--writes", "300", "--seed", "7")
        assert out["schema"] == 1 and out["writes"] == 300 and out["path"] == "rwf_atomic", out
        assert out["backend"] in ("io_uring", "sync") and out["stopped_by"] == "writes", out
        run_id = int(out["run_id"], 16)
        assert os.path.getsize(data) == PAGES * PAGE
        gens = own_reading(data, run_id)
        assert max(gens) == out["last_generation"], (max(gens), out)
        rc, v = verify(data, record)
        assert rc == 0 and v["result"] == "clean", v
        assert v["summary"] == {"intact": PAGES, "torn": 0, "damaged": 0, "unwritten": 0,
                                "lost_acknowledged_writes": 0, "newer_than_record": 0}, v["summary"]
        assert v["record"]["acknowledged_writes"] == 300 and v["record"]["ended"], v["record"]
        assert v["page_reports"] == []

        # simulated crash: page 5 half new, half an older generation
        crash = os.path.join(mnt, "crash")
        pages = read_pages(data)
        torn, damaged, lost = 5, 9, 11
        older = stamps.page(run_id, torn, 0, PAGE)  # its fill generation, never the newest after 300 writes
        assert gens[torn] > 0 and gens[lost] > 0, gens
        pages[torn] = pages[torn][:PAGE // 2] + older[PAGE // 2:]
        pages[damaged] = pages[damaged][:4096] + b"\xde\xad" * 256 + pages[damaged][4608:]
        pages[lost] = stamps.page(run_id, lost, 0, PAGE)
        crash_record = os.path.join(mnt, "crash.record")
        shutil.copy(record, crash_record)
        with open(crash_record, "ab") as f:
            f.write(b"\x4c\x43\x54\x72" + bytes(26))  # a record torn by the crash
        # a target shorter than the run's pages is refused, not read past its end
        with open(crash, "wb") as f:
            f.write(b"".join(pages)[:(PAGES - 1) * PAGE])
        p = lcloudctl("torture", "verify", crash, "--record", crash_record)
        assert p.returncode == 5 and "holds %d bytes" % ((PAGES - 1) * PAGE) in p.stderr, (p.returncode, p.stderr)
        with open(crash, "wb") as f:
            f.write(b"".join(pages[:-1]) + bytes(PAGE))  # and the last page zeroed
        rc, v = verify(crash, crash_record)
        assert rc == 9 and v["result"] == "torn", (rc, v["result"])
        s = v["summary"]
        assert (s["torn"], s["damaged"], s["intact"]) == (1, 2, PAGES - 3), s
        assert s["lost_acknowledged_writes"] == 2, s  # page 11, and the page zeroed
        assert v["record"]["ignored_tail_bytes"] == 30, v["record"]
        by_page = {p["page"]: p for p in v["page_reports"]}
        assert set(by_page) == {torn, damaged, lost, PAGES - 1}, sorted(by_page)
        t = by_page[torn]
        assert t["status"] == "torn" and t["offset"] == torn * PAGE, t
        assert t["parts"] == [
            {"first_block": 0, "blocks": 16, "kind": "generation", "generation": gens[torn], "age": "new"},
            {"first_block": 16, "blocks": 16, "kind": "generation", "generation": 0, "age": "old"},
        ], t["parts"]
        d = by_page[damaged]
        assert d["status"] == "damaged" and [p["kind"] for p in d["parts"]] == ["generation", "garbage", "generation"]
        assert d["parts"][1] == {"first_block": 8, "blocks": 1, "kind": "garbage", "why": "no-stamp"}, d["parts"]
        l = by_page[lost]
        assert l["status"] == "lost" and l["lost_acknowledged_write"], l
        assert l["newest_generation"] == 0 and l["acknowledged_generation"] == gens[lost], l
        assert by_page[PAGES - 1]["status"] == "damaged", by_page[PAGES - 1]

        # the text report names the torn page with its old and new parts
        p = lcloudctl("torture", "verify", crash, "--record", crash_record)
        assert p.returncode == 9, p.stderr
        line = [x for x in p.stdout.splitlines() if x.startswith("page %d " % torn)]
        assert line and "torn" in line[0] and "blocks 0-15 generation %d (new)" % gens[torn] in line[0] \
            and "blocks 16-31 generation 0 (old)" in line[0], p.stdout
        assert "summary: 64 pages: 61 intact, 1 torn, 2 damaged" in p.stdout, p.stdout

        # only a lost write: its own exit code
        pages = read_pages(data)
        pages[lost] = stamps.page(run_id, lost, 0, PAGE)
        with open(crash, "wb") as f:
            f.write(b"".join(pages))
        rc, v = verify(crash, record)
        assert rc == 10 and v["result"] == "lost" and v["summary"]["lost_acknowledged_writes"] == 1, (rc, v)


def test_buffered_and_plain_paths():
    need_root()
    with mounted_fs("xfs") as (dev, mnt):
        for path in ("buffered", "plain_direct"):
            data = os.path.join(mnt, path)
            out = torture_run(data, data + ".record", "--path", path, "--writes", "100", "--depth", "3")
            assert out["writes"] == 100, out
            assert len(own_reading(data, int(out["run_id"], 16))) == PAGES
            rc, v = verify(data, data + ".record")
            assert rc == 0 and v["summary"]["intact"] == PAGES, v
        # a record belongs to one run
        p = lcloudctl("torture", "run", os.path.join(mnt, "other"), "--pages", "4", "--record",
                      os.path.join(mnt, "buffered.record"))
        assert p.returncode == 2 and "one run" in p.stderr, (p.returncode, p.stderr)
        assert not os.path.exists(os.path.join(mnt, "other"))
    with mounted_fs("ext4") as (dev, mnt):
        # no atomic writes on ext4 over a loop device: refused, nothing left behind
        data = os.path.join(mnt, "pages")
        p = lcloudctl("torture", "run", data, "--pages", "4", "--record", data + ".record")
        assert p.returncode == 7 and "no atomic writes on the rwf_atomic path" in p.stderr, p.stderr
        assert not os.path.exists(data) and not os.path.exists(data + ".record")


def test_device_refusals():
    need_root()
    with scratch_dir() as d:
        mnt = os.path.join(d, "mnt")
        os.mkdir(mnt)
        with loop_device(os.path.join(d, "img"), 512 << 20) as dev:
            run(["mkfs.xfs", "-q", "-f", dev], check=True)
            run(["mount", dev, mnt], check=True)
            try:
                p = lcloudctl("torture", "run", dev, "--pages", "16", "--record", os.path.join(d, "r1"),
                              "--path", "plain_direct")
                assert p.returncode == 7 and "mounted" in p.stderr, (p.returncode, p.stderr)
                assert not os.path.exists(os.path.join(d, "r1")), "a refused run left a record"
            finally:
                run(["umount", mnt], check=True)
            p = lcloudctl("torture", "run", dev, "--pages", "16", "--record", os.path.join(d, "r2"),
                          "--path", "plain_direct")
            assert p.returncode == 7 and "signature" in p.stderr, (p.returncode, p.stderr)
            # forced, the device takes the pages at an offset; verify reads them back there
            out = torture_run(dev, os.path.join(d, "r3"), "--path", "plain_direct", "--force", "--offset", "1M",
                              "--writes", "50")
            assert out["offset"] == 1 << 20, out
            rc, v = verify(dev, os.path.join(d, "r3"))
            assert rc == 0 and v["offset"] == 1 << 20 and v["summary"]["intact"] == PAGES, v
            # the same pages read from the wrong place are nobody's
            rc, v = verify(dev, os.path.join(d, "r3"), "--offset", "0")
            assert rc == 9 and v["summary"]["damaged"] == PAGES, v["summary"]


def replay(*args):
    p = lcloudctl("replay", *args)
    return p.returncode, (json.loads(p.stdout) if "--format" in args and p.stdout else p.stdout), p.stderr


def test_replay_crafted_log():
    """A write log made here from a torture file's pages, in the layout QEMU's
    blklogwrites writes with log-sector-size=4096: page A in two commands,
    page B in one, pages C and C+1 merged into one 32 KiB command."""
    need_root()
    with mounted_fs("xfs", mkfs_args=("-m", "reflink=1")) as (dev, mnt):
        data, record = os.path.join(mnt, "pages"), os.path.join(mnt, "pages.record")
        out = torture_run(data, record, "--path", "rwf_atomic", "--writes", "100", "--seed", "11")
        run_id, gen = int(out["run_id"], 16), out["last_generation"] + 1
        base = os.path.join(mnt, "base")
        shutil.copy(data, base)
        a, b, c = 3, 10, 20
        ss = 4096
        page_a = stamps.page(run_id, a, gen, PAGE)
        merged = stamps.page(run_id, c, gen + 2, PAGE) + stamps.page(run_id, c + 1, gen + 3, PAGE)
        log = os.path.join(mnt, "log")
        stamps.write_log(log, [
            (a * PAGE // ss, 0, page_a[:8192]),
            (a * PAGE // ss + 2, 0, page_a[8192:]),
            (0, stamps.FLUSH, b""),
            (b * PAGE // ss, 0, stamps.page(run_id, b, gen + 1, PAGE)),
            (c * PAGE // ss, 0, merged),
            (0, stamps.FLUSH, b""),
        ], sector_size=ss)

        model = ("--lba", "4096", "--atomic-bytes", "16384")
        rc, doc, err = replay(log, "--format", "json", "--all", *model)
        assert rc == 11 and doc["schema"] == 1 and doc["result"] == "tearable", (rc, err)
        assert doc["logs"][0]["entries"] == 6 and doc["logs"][0]["sector_size"] == ss and doc["logs"][0]["flushes"] == 2
        assert doc["summary"]["page_writes"] == 4 and doc["summary"]["tearable"] == 3, doc["summary"]
        pw = {p["page"]: p for p in doc["page_writes"]}
        assert all(p["run_id"] == out["run_id"] for p in pw.values())
        assert pw[a]["verdict"] == "tearable" and pw[a]["rules"] == ["split"], pw[a]
        assert [(x["entry"], x["offset"], x["length"], x["first_block"], x["blocks"]) for x in pw[a]["commands"]] == \
            [(0, a * PAGE, 8192, 0, 16), (1, a * PAGE + 8192, 8192, 16, 16)], pw[a]["commands"]
        assert pw[a]["tearing_cut"] == {"log": 0, "cut": 1, "tear_blocks": 0, "tear_bytes": 0}, pw[a]
        assert pw[b]["verdict"] == "atomic" and pw[b]["rules"] == [] and pw[b]["tearing_cut"] is None, pw[b]
        assert pw[b]["commands"][0]["offset"] == b * PAGE and pw[b]["commands"][0]["atomic"]
        assert pw[c]["verdict"] == "tearable" and pw[c]["rules"] == ["over-unit"], pw[c]
        assert pw[c]["tearing_cut"] == {"log": 0, "cut": 4, "tear_blocks": 2, "tear_bytes": 8192}, pw[c]
        # a 32 KiB atomic unit: only the split page can tear
        rc, doc, _ = replay(log, "--format", "json", "--lba", "4096", "--atomic-bytes", "32K")
        assert rc == 11 and [p["page"] for p in doc["page_writes"]] == [a], doc["page_writes"]
        # the model from a probe: an NVMe namespace with a 32 KiB NAWUPF (the probe's own JSON shape)
        probe = os.path.join(mnt, "probe.json")
        with open(probe, "w") as f:
            json.dump({"probes": [{"path": "/dev/nvme0n1", "layers": [
                {"layer": "disk", "name": "nvme0n1", "facts": {"logical_block_size": 4096, "write_cache": "write back"}},
                {"layer": "nvme", "name": "nvme0n1", "facts": {
                    "lba_size": 4096, "atomic_write_power_fail_bytes": 32768, "atomic_boundary_power_fail_bytes": 0,
                    "atomic_boundary_offset_bytes": 0, "volatile_write_cache": True}}]}]}, f)
        rc, doc, _ = replay(log, "--format", "json", "--model-from", probe)
        assert doc["model"]["lba"] == 4096 and doc["model"]["atomic_bytes"] == 32768, doc["model"]
        assert doc["model"]["volatile_cache"] and "nvme" in doc["model"]["sources"]["atomic_bytes"], doc["model"]
        assert rc == 11 and doc["summary"]["tearable"] == 1 and doc["summary"]["not_durable"] == 0, doc["summary"]
        # ... and from the real probe of the loop device: 512-byte blocks, one of them atomic
        with open(probe, "w") as f:
            f.write(lcloudctl("probe", "--format", "json", dev).stdout)
        rc, doc, _ = replay(log, "--format", "json", "--model-from", probe)
        assert doc["model"]["lba"] == 512 and doc["model"]["atomic_bytes"] == 512, doc["model"]
        assert rc == 11 and doc["summary"]["tearable"] == 4, doc["summary"]

        # the text report a person reads
        rc, text, _ = replay(log, *model)
        assert rc == 11 and "page %d generation %d: tearable: arrived in 2 commands" % (a, gen) in text, text
        assert "summary: 4 page writes: 1 atomic, 3 tearable" in text, text

        # crash images: the cut the oracle names shows the tear to torture verify
        img = os.path.join(mnt, "img")
        rc, doc, err = replay(log, "--base", base, "--out", img, "--cut", "1", "--format", "json", *model)
        assert rc == 0 and doc["image"]["cut"] == 1 and doc["image"]["entry_in_flight"]["entry"] == 1, (rc, err)
        rc, v = verify(img, record)
        assert rc == 9 and v["summary"]["torn"] == 1, v["summary"]
        t = v["page_reports"][0]
        assert t["page"] == a and t["status"] == "torn", t
        assert t["parts"][0] == {"first_block": 0, "blocks": 16, "kind": "generation", "generation": gen,
                                 "age": "new"}, t["parts"]
        assert t["parts"][1]["first_block"] == 16 and t["parts"][1]["age"] == "old", t["parts"]
        # inside the merged command: 2 of its 8 logical blocks survive
        rc, _, err = replay(log, "--base", base, "--out", img, "--cut", "4", "--tear", "2", *model)
        assert rc == 0, err
        rc, v = verify(img, record)
        torn = {p["page"]: p for p in v["page_reports"]}
        assert rc == 9 and set(torn) == {c}, sorted(torn)
        assert [(p["first_block"], p["blocks"], p["age"]) for p in torn[c]["parts"]] == [(0, 16, "new"), (16, 16, "old")]
        # a command within the atomic unit is whole or absent: no tear inside it
        rc, _, err = replay(log, "--base", base, "--out", img, "--cut", "3", "--tear", "1", *model)
        assert rc == 2 and "whole or not at all" in err, (rc, err)
        # everything applied: nothing torn, four pages newer than the record
        rc, _, err = replay(log, "--base", base, "--out", img, "--cut", "6", *model)
        rc, v = verify(img, record)
        assert rc == 0 and v["summary"]["newer_than_record"] == 4, v["summary"]
        # --cut-all finds an image with a torn page by itself
        rc, doc, err = replay(log, "--base", base, "--out", img, "--cut-all", "--format", "json", *model)
        assert rc == 9 and doc["result"] == "torn" and doc["tries"][0]["shown"] == "torn", (rc, err, doc)
        rc, v = verify(img, record)
        assert rc == 9 and v["summary"]["torn"] == 1, v["summary"]
        # ... and with --keep-going, every tearable page write's image shows its tear; the first is kept
        rc, doc, err = replay(log, "--base", base, "--out", img, "--cut-all", "--keep-going", "--format", "json", *model)
        assert rc == 9 and (doc["tried"], doc["shown_torn"]) == (3, 3), (rc, err, doc)
        assert [(t["page"], t["shown"]) for t in doc["tries"]] == [(a, "torn"), (c, "torn"), (c + 1, "torn")], doc
        assert not os.path.exists(img + ".try")
        rc, v = verify(img, record)
        assert rc == 9 and [p["page"] for p in v["page_reports"]] == [a], v["page_reports"]

        # the same log on a block device, as dm-log-writes keeps one
        loop = run(["losetup", "-f", "--show", "-r", log], check=True).stdout.strip()
        try:
            rc, doc, err = replay(loop, "--format", "json", *model)
            assert rc == 11 and doc["logs"][0]["entries"] == 6 and doc["summary"]["tearable"] == 3, (rc, err)
        finally:
            run(["losetup", "-d", loop])

        # a damaged log: a clear error, exit 5
        with open(log, "r+b") as f:
            f.truncate(os.path.getsize(log) - 4096 * 3)
        rc, _, err = replay(log)
        assert rc == 5 and "truncated" in err, (rc, err)


if __name__ == "__main__":
    main([test_run_verify_and_simulated_crashes, test_buffered_and_plain_paths, test_device_refusals,
          test_replay_crafted_log])
