#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The readers of files lcloudctl is given, against hostile and careless
input: a saved fingerprint (diff), a probe's JSON (replay --model-from) and a
torture record (torture verify) of the wrong shape are exit status 5 with the
file and the key named, never a crash; diff of a fingerprint whose file is
gone names the path (it once printed it from freed memory); and the peak
memory of replay and torture verify follows what their input really holds,
not what it claims (each bound measured, the figure beside it)."""
import json
import os
import resource
import signal
import struct
import subprocess
import tempfile
import time

from hostlib import LCLOUDCTL, lcloudctl, main, scratch_dir
import stamps

STAMP_LOG = os.environ.get("STAMP_LOG", "stamp_log")
# AddressSanitizer's shadow and quarantine add their own memory: there the bounds are not asserted
SANITIZED = bool(os.environ.get("LCLOUD_TEST_SANITIZERS"))
RECORD_MAGIC = 0x7254434C


def assert_refused(p, file, words):
    """Exit 5, one message naming FILE and WORDS, and no signal."""
    assert p.returncode == 5, (p.returncode, p.stdout[:400], p.stderr)
    assert file in p.stderr and words in p.stderr, p.stderr


def saved_fingerprint(d):
    target = os.path.join(d, "target")
    with open(target, "wb") as f:
        f.truncate(1 << 20)
    fp = os.path.join(d, "real.fp")
    p = lcloudctl("probe", "--save", fp, target)
    assert p.returncode == 0, p.stderr
    with open(fp) as f:
        return target, fp, json.load(f)


def test_hostile_fingerprints():
    """The shapes that crashed diff (SIGSEGV, SIGABRT, a NULL strcmp): exit 5 naming the key."""
    with scratch_dir() as d:
        target, fp, real = saved_fingerprint(d)
        no_facts = json.loads(json.dumps(real))
        del no_facts["probe"]["layers"][0]["facts"]
        bad_above = json.loads(json.dumps(real))
        bad_above["probe"]["verdict"]["plain_direct"]["above_max"] = 1
        cases = [
            ('{"kind":null,"probe":{}}', '"kind" is null'),
            ('{"kind":"lcloud-fingerprint","probe":{"path":"%s","layers":{}}}' % target,
             'probe: "layers" must be an array, not an object'),
            (json.dumps(no_facts), 'probe.layers[0]: "facts" is missing'),
            (json.dumps(bad_above), 'probe.verdict.plain_direct: "above_max" must be a string, not an integer'),
            ('{"kind":"lcloud-fingerprint","probe":{"layers":[{"layer":7,"name":"x","facts":{}}]}}',
             'probe.layers[0]: "layer" must be a string'),
            ("[]", "not a fingerprint written by 'lcloudctl probe --save'"),
            (json.dumps({"kind": "lcloud-fingerprint", "probe": {"layers": [{}] * 1025}}),
             "probe: 1025 layers, more than the 1024 of any stack"),
            ('{"kind":"lcloud-fingerprint","probe":{}} trailing', "not JSON"),
        ]
        hostile = os.path.join(d, "hostile.fp")
        for text, words in cases:
            with open(hostile, "w") as f:
                f.write(text)
            assert_refused(lcloudctl("diff", hostile), hostile, words)
        # above_max missing on the saved side is a change, not a crash
        no_above = json.loads(json.dumps(real))
        del no_above["probe"]["verdict"]["rwf_atomic"]["above_max"]
        with open(hostile, "w") as f:
            json.dump(no_above, f)
        p = lcloudctl("diff", hostile)
        assert p.returncode == 12 and "rwf_atomic" in p.stdout and "above_max" in p.stdout, (p.returncode, p.stdout,
                                                                                             p.stderr)
        # the real one is unchanged, facts saved as null included
        p = lcloudctl("diff", fp)
        assert p.returncode == 0 and "nothing changed" in p.stdout, (p.returncode, p.stdout)


def test_diff_of_a_gone_path():
    """probe --save gone.fp FILE; rm FILE; diff gone.fp: the saved path in the message, from live memory."""
    with scratch_dir() as d:
        gone = os.path.join(d, "FILE")
        with open(gone, "wb") as f:
            f.truncate(1 << 20)
        saved = os.path.join(d, "gone.fp")
        p = lcloudctl("probe", "--save", saved, gone)
        assert p.returncode == 0, p.stderr
        os.unlink(gone)
        p = lcloudctl("diff", saved)
        assert p.returncode == 3, (p.returncode, p.stderr)
        assert p.stderr.startswith("lcloudctl diff: %s: No such file or directory" % gone), p.stderr


def small_log(d):
    log = os.path.join(d, "log")
    stamps.write_log(log, [(0, 0, stamps.page(0x5EED, 0, 1, 16384))])
    return log


def test_hostile_models():
    """The shapes that crashed replay --model-from: exit 5 naming the key."""
    with scratch_dir() as d:
        log, model = small_log(d), os.path.join(d, "probe.json")
        cases = [
            ('{"probes":[{"layers":[{"layer":null}]}]}', 'probes[0].layers[0]: "layer" is null'),
            ('{"probes":{}}', '"probes" must be an array, not an object'),
            ('{"probes":[{"layers":[{"layer":"disk","name":"d","facts":{"logical_block_size":-4096}}]}]}',
             'probes[0].layers[0].facts: "logical_block_size" must not be negative'),
            ('{"probes":[{"layers":[{"layer":"disk","name":"d","facts":[]}]}]}',
             'probes[0].layers[0]: "facts" must be an object, not an array'),
            ('{"probes":[1]}', "probes[0]: must be an object, not an integer"),
            ('{"probes":[{"layers":[]}]}', "names no logical block size"),
        ]
        for text, words in cases:
            with open(model, "w") as f:
                f.write(text)
            assert_refused(lcloudctl("replay", log, "--model-from", model), model, words)
        # a probe's own shape still gives its model
        with open(model, "w") as f:
            f.write('{"probes":[{"layers":[{"layer":"disk","name":"d","facts":{"logical_block_size":4096,'
                    '"write_cache":null}}]}]}')
        p = lcloudctl("replay", log, "--model-from", model, "--format", "json")
        assert p.returncode == 11 and json.loads(p.stdout)["model"]["lba"] == 4096, (p.returncode, p.stderr)


def peak_rss_mb(args, timeout):
    """Runs ARGS with its output thrown away; (exit status, its own peak RSS in MB, seconds, stderr).

    Through /usr/bin/time: a child forked from Python would count Python's pages as its own."""
    # meson's MALLOC_PERTURB_ makes glibc fill every freed remainder of the heap (megabytes per
    # small realloc here): that measures glibc's debugging aid, not lcloudctl
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}
    with tempfile.NamedTemporaryFile("r", prefix="lcloud-rss-") as out:
        start = time.monotonic()
        # a session of its own: on a timeout the command goes too, not only /usr/bin/time
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M %x", "-o", out.name] + list(args), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env=env, text=True, start_new_session=True)
        try:
            _, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise AssertionError("%s ran for more than %d s" % (" ".join(args), timeout))
        secs = time.monotonic() - start
        kb, status = out.read().split()[-2:]
    assert "signal" not in err and int(status) >= 0, "%s: %s" % (" ".join(args), err)
    return int(status), int(kb) / 1024, secs, err


def test_replay_memory_by_what_the_log_holds():
    """A 256 MiB log in which every block is a new 1 MiB page's stamp: 524,288 page writes.

    Before: one page's worth of flags per page write, 1.23 GB; with --format json 16.8 GB (the whole document)."""
    with scratch_dir() as d:
        log = os.path.join(d, "hostile.log")
        subprocess.run([STAMP_LOG, log, str(1 << 19), str(1 << 20)], check=True)
        rc, rss, secs, err = peak_rss_mb([LCLOUDCTL, "replay", log], 300)
        assert rc == 0, (rc, err)
        assert SANITIZED or rss < 160, "replay of a 256 MiB log peaked at %.0f MB" % rss  # measured: 125 MB (1.23 GB before)
        rc, rss, secs, err = peak_rss_mb([LCLOUDCTL, "replay", log, "--format", "json"], 300)
        assert rc == 0, (rc, err)
        assert SANITIZED or rss < 160, "replay --format json of a 256 MiB log peaked at %.0f MB" % rss  # measured: 125 MB


def record(kind, run_id, page, generation, page_size, pages, offset=0, path=2):
    head = struct.pack("<IBBHQQQQQQI", RECORD_MAGIC, kind, 1, path, run_id, page, generation, page_size, pages, offset,
                       7)
    return head + struct.pack("<I", stamps.crc32c(head + bytes(4)))


def test_record_that_claims_more_than_the_target():
    """128 bytes claiming 2^24 pages of 1 MiB against a 1 MiB file: refused at once, in little memory.

    Before: minutes of reading past the end, and --format json past 2.7 GB."""
    with scratch_dir() as d:
        target, rec = os.path.join(d, "target"), os.path.join(d, "claims.rec")
        with open(target, "wb") as f:
            f.truncate(1 << 20)
        with open(rec, "wb") as f:
            f.write(record(1, 0x5EED, 0, 0, 1 << 20, 1 << 24) + record(2, 0x5EED, 0, 0, 1 << 20, 1 << 24))
        assert os.path.getsize(rec) == 128
        for fmt in ("normal", "json"):
            rc, rss, secs, err = peak_rss_mb([LCLOUDCTL, "torture", "verify", target, "--record", rec, "-o", fmt], 60)
            assert rc == 5 and "claims 16777216 pages of 1048576 bytes" in err and "holds 1048576 bytes" in err, \
                (rc, err)
            assert SANITIZED or rss < 8, "verify of a 128-byte record peaked at %.0f MB" % rss  # measured: 2.6 MB
            assert secs < 10, secs


def test_verify_all_json_streams():
    """--all --format json over 131,072 pages of 4 KiB (a sparse target, one report per page).

    Before: the whole document in memory, 514 MB."""
    with scratch_dir() as d:
        target, rec = os.path.join(d, "target"), os.path.join(d, "run.rec")
        pages = 131072
        with open(target, "wb") as f:
            f.truncate(pages * 4096)
        with open(rec, "wb") as f:
            f.write(record(1, 0x5EED, 0, 0, 4096, pages) + record(2, 0x5EED, 0, 0, 4096, pages))
        rc, rss, secs, err = peak_rss_mb([LCLOUDCTL, "torture", "verify", target, "--record", rec, "--all", "-o",
                                          "json"], 300)
        assert rc == 9, (rc, err)  # every filled page reads as zeroes: damaged, its acknowledged write lost
        assert SANITIZED or rss < 16, "verify --all --format json of 131072 pages peaked at %.0f MB" % rss  # measured: 2.6 MB
        # and the stream is one JSON document with every page in it
        p = lcloudctl("torture", "verify", target, "--record", rec, "--all", "--format", "json")
        doc = json.loads(p.stdout)
        assert len(doc["page_reports"]) == pages and doc["summary"]["lost_acknowledged_writes"] == pages, \
            doc["summary"]
        assert doc["result"] == "damaged"


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    main([test_hostile_fingerprints, test_diff_of_a_gone_path, test_hostile_models,
          test_replay_memory_by_what_the_log_holds, test_record_that_claims_more_than_the_target,
          test_verify_all_json_streams])
