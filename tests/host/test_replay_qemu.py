#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lcloudctl replay on a write log written by QEMU itself: QEMU's blklogwrites
driver logs a block job that copies newer generations of a torture file's
pages onto a copy of it (no guest needed: qemu-system-x86_64 -M none). The
reader must agree with the tests' own reading of the log, the whole log
applied to the old copy must equal the disk QEMU wrote, and a cut the oracle
names must show torture verify the torn page."""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostlib import lcloudctl, main, need_tool, scratch_dir  # noqa: E402
import stamps  # noqa: E402

PAGE = 16384
PAGES = 32


def qemu_log_copy(src, data, log, sector_size=4096):
    """Copies SRC onto DATA through blklogwrites (logging into LOG) with a mirror job."""
    need_tool("qemu-system-x86_64", "qemu-system-x86")
    open(log, "wb").close()  # QEMU does not truncate a log: start from an empty file
    q = subprocess.Popen(["qemu-system-x86_64", "-M", "none", "-nodefaults", "-no-user-config", "-display", "none",
                          "-qmp", "stdio",
                          "-blockdev", "driver=file,filename=%s,node-name=src,read-only=on" % src,
                          "-blockdev", "driver=file,filename=%s,node-name=f0" % data,
                          "-blockdev", "driver=file,filename=%s,node-name=l0" % log,
                          "-blockdev", "driver=blklogwrites,file=f0,log=l0,node-name=w0,log-sector-size=%d,"
                                       "log-super-update-interval=1" % sector_size],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    try:
        for cmd in ({"execute": "qmp_capabilities"},
                    {"execute": "blockdev-mirror", "arguments": {"job-id": "copy", "device": "src", "target": "w0",
                                                                 "sync": "full", "granularity": PAGE,
                                                                 "buf-size": 4 * PAGE}}):
            q.stdin.write(json.dumps(cmd) + "\n")
        q.stdin.flush()
        # the job is READY once everything is copied; then QEMU may go
        for line in q.stdout:
            seen.append(line)
            if "BLOCK_JOB_READY" in line or '"error"' in line:
                break
        q.stdin.write(json.dumps({"execute": "quit"}) + "\n")
        q.stdin.close()
        q.wait(timeout=60)
    finally:
        if q.poll() is None:
            q.kill()
            q.wait()
    assert any("BLOCK_JOB_READY" in line for line in seen), (seen, q.stderr.read())


def test_qemu_log():
    with scratch_dir() as d:
        pages, record = os.path.join(d, "pages"), os.path.join(d, "pages.record")
        p = lcloudctl("torture", "run", pages, "--pages", str(PAGES), "--writes", "100", "--path", "buffered",
                      "--seed", "21", "--record", record, "--format", "json")
        assert p.returncode == 0, p.stderr
        run = json.loads(p.stdout)
        run_id, gen = int(run["run_id"], 16), run["last_generation"]
        base, data, src, log = (os.path.join(d, n) for n in ("base", "data", "src", "log"))
        shutil.copy(pages, base)
        shutil.copy(pages, data)
        with open(src, "wb") as f:
            f.write(b"".join(stamps.page(run_id, n, gen + 1 + n, PAGE) for n in range(PAGES)))
        qemu_log_copy(src, data, log)
        with open(data, "rb") as a, open(src, "rb") as b:
            assert a.read() == b.read(), "the mirror did not copy"

        # the reader against the tests' own reading of QEMU's log
        ss, entries = stamps.read_log(log)
        writes = [e for e in entries if e[3]]
        assert ss == 4096 and writes and any(e[2] & stamps.FLUSH for e in entries), entries[:3]
        p = lcloudctl("replay", log, "--format", "json", "--all", "--lba", "4K", "--atomic-bytes", "16K")
        doc = json.loads(p.stdout)
        assert doc["logs"][0]["entries"] == len(entries) and doc["logs"][0]["writes"] == len(writes), doc["logs"][0]
        assert doc["logs"][0]["bytes_written"] == PAGES * PAGE and doc["summary"]["page_writes"] == PAGES, doc
        assert doc["summary"]["runs"] == [run["run_id"]] and doc["summary"]["other_blocks"] == 0, doc["summary"]
        longest = max(len(e[3]) for e in writes)
        for pw in doc["page_writes"]:
            n = pw["page"]
            assert pw["generation"] == gen + 1 + n and pw["device_offset"] == n * PAGE, pw
            (cmd,) = pw["commands"]
            sector, nr, flags, payload = entries[cmd["entry"]]
            assert (cmd["offset"], cmd["length"]) == (sector * ss, nr * ss), (cmd, sector, nr)
            assert payload[n * PAGE - sector * ss:][:PAGE] == stamps.page(run_id, n, gen + 1 + n, PAGE)
            assert pw["verdict"] == ("tearable" if cmd["length"] > PAGE else "atomic"), pw
        # an atomic unit as large as QEMU's largest command: nothing can tear
        p = lcloudctl("replay", log, "--format", "json", "--lba", "4K", "--atomic-bytes", str(longest))
        assert p.returncode == 0 and json.loads(p.stdout)["summary"]["tearable"] == 0, p.stdout

        # the whole log applied to the old copy is the disk QEMU wrote
        img = os.path.join(d, "img")
        p = lcloudctl("replay", log, "--base", base, "--out", img, "--cut", str(len(entries)))
        assert p.returncode == 0, p.stderr
        with open(img, "rb") as a, open(data, "rb") as b:
            assert a.read() == b.read(), "replaying QEMU's log does not give QEMU's disk"

        # the first tearable page write's cut, on an image, as torture verify reads it; the mirror
        # copies buf-size (4 pages) at a time, so QEMU's commands carry several pages
        assert longest > PAGE, "QEMU's mirror wrote no command larger than a page: %d" % longest
        tear = [pw for pw in doc["page_writes"] if pw["verdict"] == "tearable"][0]
        cut = tear["tearing_cut"]
        p = lcloudctl("replay", log, "--base", base, "--out", img, "--lba", "4K", "--atomic-bytes", "16K",
                      "--cut", str(cut["cut"]), "--tear", str(cut["tear_blocks"]))
        assert p.returncode == 0, p.stderr
        p = lcloudctl("torture", "verify", img, "--record", record, "--format", "json")
        v = json.loads(p.stdout)
        torn = [r for r in v["page_reports"] if r["status"] == "torn"]
        assert p.returncode == 9 and [r["page"] for r in torn] == [tear["page"]], v
        assert torn[0]["parts"][0]["generation"] == tear["generation"] and torn[0]["parts"][0]["age"] == "new"
        assert torn[0]["parts"][1]["age"] == "old", torn[0]
        # and --cut-all finds a torn image by itself
        p = lcloudctl("replay", log, "--base", base, "--out", img, "--lba", "4K", "--atomic-bytes", "16K", "--cut-all")
        assert p.returncode == 9 and "result: TORN" in p.stdout, (p.returncode, p.stdout, p.stderr)


if __name__ == "__main__":
    main([test_qemu_log])
