#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lcloud-target's cloud back end, driven over loopback by the NVMe/TCP host
of test_target.py with many commands in flight at once: the caps hold the
commands to the published rates (the host's own clock and the trace's
dispatch times both read the rate), the scheduler serves journal writes,
FUA and Flush before background writes and reads a reader waits for before
read-ahead reads when it uses the hints, and in arrival order when it does
not (the host sees the completions in that order, and the trace's dispatch
times agree), the device's own read-ahead fetches ahead for a stream of
reads but not for reads Linux marked as read-ahead, the extension says so
(flag bit 2), and a power cut with commands waiting in the back end leaves
exactly the writes the host saw completed, each whole, with every other
write in flight in the report. A write whose data has all come is not late
however long it waits in the back end, and the commands served last leave
half of a connection's data buffer to the others (a journal write is not
held behind background writes' buffers). SIGTERM prints the counters."""
import os
import signal
import struct
import time

from hostlib import main, scratch_dir
from test_target import Host, admin, identify, log_text, target, blocks_state
from nvme_tcp_host import pattern

TRACE_COLS = ["seq", "opcode", "nsid", "slba", "nlb", "fua", "lr", "dsm", "dtype", "dspec", "sub", "comp", "status",
              "class", "dispatched", "backend_bytes", "backend_ops"]
FDP_USES = ("--fdp", "4", "--placement-use", "0=data,1=journal,2=metadata,3=background")
JOURNAL, BACKGROUND = 1, 3  # placement handles, as FDP_USES gives them
LR, PREFETCH, FUA = 1 << 31, 0x07, 1 << 30


class Pipe(Host):
    """An I/O queue that sends commands without waiting and collects their answers in the order they come."""

    def send(self, opc, slba=0, nlb=1, cdw12=0, cdw13=0, write=None, read=False, nsid=1):
        cdw = (slba & 0xFFFFFFFF, slba >> 32, (nlb - 1) | cdw12, cdw13)
        if opc == 0x00:
            cdw = ()
        if write is not None:
            assert len(write) <= 8192, "in the capsule only"
            self.capsule(self.sqe(opc, nsid, cdw, 0x01, len(write)), write)
        else:
            self.capsule(self.sqe(opc, nsid, cdw, 0x5A, nlb * 4096 if read else 0))
        return self.cid

    def collect(self, n):
        """[(cid, status, data, host_time)] for the next N answers, as they come."""
        got, data = [], {}
        while len(got) < n:
            t, flags, hlen, pdo, plen, body = self.pdu()
            if t == 0x07:
                cccid, _, off, ln = struct.unpack_from("<HHII", body, 0)
                data[cccid] = data.get(cccid, b"") + body[pdo - 8:pdo - 8 + ln]
                continue
            assert t == 0x05, "PDU type 0x%02x where an answer belongs" % t
            _, _, _, _, cid, status = struct.unpack_from("<IIHHHH", body, 0)
            got.append((cid, status >> 1, data.pop(cid, b""), time.monotonic()))
        return got


def pipe(port, cntlid, qid=1):
    h = Pipe(port)
    st, _, _, _ = h.connect(qid=qid, cntlid=cntlid, sqsize=127)
    assert st == 0, hex(st)
    return h


def trace_rows(path):
    with open(path) as f:
        return [dict(zip(TRACE_COLS, l.split())) for l in f if not l.startswith("#")]


def trace_report(path):
    """The '# backend' lines at the end of the trace: {'totals': {...}, 'class read': {...}, ...}."""
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("# backend "):
                words = line.split()[2:]
                keys = [w for w in words if "=" not in w]
                out[" ".join(keys)] = dict(w.split("=", 1) for w in words if "=" in w)
    return out


def queued_rate(rows):
    """Commands per second while the caps held them back: the dispatches of the commands that had to wait
    (those of the first burst went at once), from the first to the last. A late wake-up of the target's
    thread is made up at once (a bucket holds 0.1 s), so this is within 0.1 s / the span of the cap."""
    d = sorted(int(r["dispatched"]) for r in rows if int(r["dispatched"]) > int(r["sub"]) + 2000)
    assert len(d) >= 20, ("too few commands waited for the caps", rows)
    return (len(d) - 1) / ((d[-1] - d[0]) / 1e6)


def within(measured, cap, what):
    assert 0.9 <= measured / cap <= 1.1, "%s: %.1f per second against a cap of %.1f" % (what, measured, cap)


def test_caps_hold_the_rates():
    """--iops 50: 120 writes sent at once run at 50 per second after the 0.1 s burst by the trace's dispatch
    times, and the host's own clock never sees them faster; --iops 200 --iops-size 16K: a 64 KiB read counts
    as 4 operations; --bandwidth 2M: 32 KiB reads at 64 per second."""
    for args, n, size, cap in ((("--iops", "50"), 120, 1, 50.0), (("--iops", "200", "--iops-size", "16K"), 100, 16, 50.0),
                               (("--bandwidth", "2M"), 120, 8, 64.0)):
        with scratch_dir() as d:
            trace = os.path.join(d, "trace")
            with target("--trace", trace, *args, size=8 << 20) as (port, path, p, log):
                a, cntlid = admin(port)
                q = pipe(port, cntlid)
                start = time.monotonic()
                for i in range(n):
                    if size == 1:
                        q.send(0x01, slba=i, write=bytes([i]) * 4096)
                    else:
                        q.send(0x02, slba=i * size, nlb=size, read=True)
                got = q.collect(n)
                assert all(st == 0 for _, st, _, _ in got), [st for _, st, _, _ in got]
                burst = int(cap * 0.1) + 1
                # the host's clock: the last answer cannot come before the caps let the rest through
                elapsed = max(t for _, _, _, t in got) - start
                assert elapsed >= (n - burst) / cap * 0.95, ("host", args, elapsed, (n - burst) / cap)
            rows = trace_rows(trace)
            assert len(rows) == n
            assert all(int(r["backend_ops"]) == (4 if "16K" in args else 1) for r in rows), rows
            within(queued_rate(rows), cap, "trace, %s" % " ".join(args))


def order_run(hints, first, then, extra=()):
    """FIRST commands (send arguments), then THEN, sent at once to a target of 20 IOPS with --hints HINTS:
    the answers' order by the index of what was sent, and the trace's rows in the same numbering."""
    with scratch_dir() as d:
        trace = os.path.join(d, "trace")
        with target("--trace", trace, "--iops", "20", "--hints", hints, *FDP_USES, *extra,
                    size=4 << 20) as (port, path, p, log):
            a, cntlid = admin(port)
            q = pipe(port, cntlid)
            cids = [q.send(*c[0], **c[1]) for c in first + then]
            got = q.collect(len(cids))
            assert all(st == 0 for _, st, _, _ in got), [st for _, st, _, _ in got]
            order = [cids.index(cid) for cid, _, _, _ in got]
        rows = trace_rows(trace)
    return order, rows


def test_placement_hint_orders_writes():
    """(b) 12 background writes, then a journal write, a FUA write and a Flush, at 20 IOPS: hint-aware the
    three go before the background writes still waiting (the host sees them answered after at most the 3
    that the caps' burst let through; the trace dispatched them first); hint-blind they come last."""
    background = [((0x01,), dict(slba=i, cdw12=2 << 20, cdw13=BACKGROUND << 16, write=b"b" * 4096))
                  for i in range(12)]
    urgent = [((0x01,), dict(slba=100, cdw12=2 << 20, cdw13=JOURNAL << 16, write=b"j" * 4096)),
              ((0x01,), dict(slba=101, cdw12=FUA, write=b"f" * 4096)),
              ((0x00,), dict())]
    order, rows = order_run("use", background, urgent)
    for k in (12, 13, 14):
        assert order.index(k) <= 5, (k, order)
    classes = [r["class"] for r in sorted(rows, key=lambda r: int(r["dispatched"]))]
    assert classes[:6].count("write-background") <= 3 and {"write-journal", "write-fua", "flush"} <= set(classes[:6]), \
        classes
    order, rows = order_run("ignore", background, urgent)
    assert order == list(range(15)), order
    assert [r["class"] for r in sorted(rows, key=lambda r: int(r["dispatched"]))][12:] == \
        ["write-journal", "write-fua", "flush"], rows
    # the read-ahead hint alone leaves writes in arrival order
    order, _ = order_run("read-ahead", background, urgent)
    assert order == list(range(15)), order


def test_namespace_use_is_a_journal():
    """Without FDP, --namespace-use 2=journal makes namespace 2's writes journal writes: they go before
    namespace 1's writes when namespace 1 is background."""
    with scratch_dir() as d:
        other = os.path.join(d, "ns2")
        with open(other, "wb") as f:
            f.truncate(1 << 20)
        trace = os.path.join(d, "trace")
        with target("--ns", other, "--namespace-use", "1=background,2=journal", "--iops", "20", "--hints", "placement",
                    "--trace", trace) as (port, path, p, log):
            a, cntlid = admin(port)
            q = pipe(port, cntlid)
            cids = [q.send(0x01, slba=i, write=b"d" * 4096) for i in range(10)]
            cids.append(q.send(0x01, slba=0, write=b"j" * 4096, nsid=2))
            order = [cids.index(cid) for cid, _, _, _ in q.collect(11)]
        assert order.index(10) <= 3, order
        assert {r["class"] for r in trace_rows(trace)} == {"write-background", "write-journal"}
        bad = __import__("subprocess").run([os.environ.get("LCLOUD_TARGET", "lcloud-target"), "--ns", other,
                                            "--namespace-use", "2=journal"], capture_output=True, text=True, timeout=10)
        assert bad.returncode == 2 and "namespace 2" in bad.stderr, bad.stderr


def test_read_ahead_hint_orders_reads():
    """(a) 8 reads marked read-ahead (Limited Retry, DSM prefetch), then a read without the marks, at
    20 IOPS: hint-aware the unmarked read goes before the marked ones still waiting; hint-blind last."""
    marked = [((0x02,), dict(slba=64 * i, nlb=1, cdw12=LR, cdw13=PREFETCH, read=True)) for i in range(8)]
    plain = [((0x02,), dict(slba=700, nlb=1, read=True))]
    order, rows = order_run("read-ahead", marked, plain)
    assert order.index(8) <= 3, order
    assert sorted(rows, key=lambda r: int(r["dispatched"]))[order.index(8)]["class"] == "read", rows
    order, _ = order_run("ignore", marked, plain)
    assert order == list(range(9)), order


def read_ahead_run(hints, cdw12, cdw13, extra=()):
    """32 sequential 16 KiB reads, one at a time, with the device's read-ahead up to 256 KiB: the trace's
    rows and the '# backend' report."""
    with scratch_dir() as d:
        trace = os.path.join(d, "trace")
        with target("--trace", trace, "--device-read-ahead", "256K", "--hints", hints, *extra,
                    size=4 << 20) as (port, path, p, log):
            a, cntlid = admin(port)
            ext_flags = struct.unpack_from("<I", identify(a, 1)[1], 3084)[0]
            q = pipe(port, cntlid)
            data = b""
            for i in range(32):
                q.send(0x02, slba=4 * i, nlb=4, cdw12=cdw12, cdw13=cdw13, read=True)
                (cid, st, got, _), = q.collect(1)
                assert st == 0
                data += got
            # what the cache said it held is what the file holds (opening the file while the target runs
            # would be a new user of its storage: target() wrote a known pattern)
            assert data == pattern(4 << 20)[:len(data)]
            p.send_signal(signal.SIGTERM)
            assert p.wait(10) == 0
            assert "backend: totals" in log_text(log), log_text(log)
        return trace_rows(trace), trace_report(trace), ext_flags


def test_device_read_ahead_and_the_hint():
    """Unmarked sequential reads set off the device's read-ahead: from the second read on it fetches ahead
    (128 KiB, then up to 256 KiB) and later reads cost the back end nothing; over the whole stream the back
    end reads what was delivered plus at most the last window. Reads marked read-ahead, hint-aware: no fetch
    ahead, the back end reads exactly what was delivered, and the extension's flag bit 2 is set. The same
    marked reads hint-blind: fetched ahead like any, bit 2 clear."""
    rows, report, flags = read_ahead_run("use", 0, 0)
    moved = [int(r["backend_bytes"]) for r in rows]
    assert moved[0] == 16384 and moved[1] > 16384, moved[:4]
    assert moved.count(0) >= 20, moved
    totals = report["totals"]
    delivered, backend = int(totals["delivered_bytes"]), int(totals["backend_read_bytes"])
    assert delivered == 32 * 16384 and sum(moved) == backend, (totals, sum(moved))
    assert delivered < backend <= delivered + 256 * 1024, totals
    # the first two reads came from the back end; from the second on, every read was fetched ahead
    assert int(totals["read_ahead_hit_bytes"]) == delivered - 2 * 16384, totals
    assert flags & 0x4, hex(flags)
    rows, report, flags = read_ahead_run("use", LR, PREFETCH)
    assert [int(r["backend_bytes"]) for r in rows] == [16384] * 32, rows
    assert report["totals"]["backend_read_bytes"] == report["totals"]["delivered_bytes"], report
    assert report["class read-ahead"]["commands"] == "32", report
    assert flags & 0x4, hex(flags)
    rows, report, flags = read_ahead_run("ignore", LR, PREFETCH)
    assert int(report["totals"]["backend_read_bytes"]) > int(report["totals"]["delivered_bytes"]), report
    assert not flags & 0x4, hex(flags)
    rows, report, flags = read_ahead_run("placement", 0, 0)
    assert not flags & 0x4, hex(flags)  # placement alone: the device does not act on the read-ahead hint


def cut_with_a_queue(vwc):
    """A target of 10 IOPS whose power goes when I/O command 25 arrives; 24 writes (journal and background,
    hint-aware, so they are served out of order) go at once, and the host keeps what comes back until the
    25th goes. The host saw completed exactly the writes the report does not list in flight; each is whole
    in the file (or, with a cache, acknowledged in the report); every write in flight is as the report says."""
    rnd = __import__("random").Random(vwc)
    writes = [(i * 2, JOURNAL if i % 5 == 4 else BACKGROUND, bytes(rnd.getrandbits(8) for _ in range(8192)))
              for i in range(24)]
    with scratch_dir() as d:
        report = os.path.join(d, "report")
        with target("--iops", "10", "--hints", "use", "--cut-after", "24", "--power-report", report,
                    "--volatile-write-cache", "on" if vwc else "off", *FDP_USES, size=4 << 20) as (port, path, p, log):
            old = pattern(4 << 20)  # what target() wrote; opening the file now would write protect it
            a, cntlid = admin(port)
            q = pipe(port, cntlid)
            cids = [q.send(0x01, slba=s, nlb=2, cdw12=2 << 20, cdw13=h << 16, write=data) for s, h, data in writes]
            got = q.collect(6)
            assert all(st == 0 for _, st, _, _ in got), [hex(st) for _, st, _, _ in got]
            done = [cids.index(cid) for cid, st, _, _ in got]
            assert len(done) == 6 and done != list(range(6)), done  # the journal writes went first
            q.send(0x00)  # the 25th command: the power goes
            assert p.wait(10) == 0, log_text(log)
            try:
                while True:
                    done += [cids.index(cid) for cid, st, _, _ in q.collect(1) if cid in cids]
            except Exception:
                pass
            new = open(path, "rb").read()
            lines = [l.split() for l in open(report) if not l.startswith("#")]
    flight = {int(l[2]): l for l in lines if l[7] == "in-flight"}
    acked = {int(l[2]): l for l in lines if l[7] == "acknowledged"}
    unanswered = 0
    for i, (slba, h, data) in enumerate(writes):
        state = blocks_state(old, new, data, slba, 2)
        outcome = "whole" if all(state) else "lost" if not any(state) else "torn"
        if slba in flight:
            assert i not in done, ("a write the host saw completed is in flight", i)
            assert flight[slba][5] == outcome, (flight[slba], outcome)
            continue
        # applied: completed, or answered too late for the host to hear of it (the cut fell between)
        unanswered += i not in done
        if vwc:
            assert slba in acked and acked[slba][5] == outcome, (i, acked.get(slba), outcome)
        else:
            assert all(state), ("an applied write is not whole in the file", i)
    assert unanswered <= 1, (unanswered, sorted(done), sorted(flight))
    return len(flight)


def test_a_cut_with_writes_waiting_in_the_back_end():
    for vwc in (False, True):
        assert cut_with_a_queue(vwc) >= 12


def test_a_command_id_is_free_once_answered():
    """The back end answers from its own thread: a host that sends a command with the same ID as soon as the
    answer is in (Linux reuses a tag's ID after 16 generations) must find the ID free, 2000 times over,
    with the connection still open after."""
    with target("--hints", "use", "--latency", "0") as (port, path, p, log):
        a, cntlid = admin(port)
        q = pipe(port, cntlid)
        for i in range(2000):
            q.cid = 6  # the next command is ID 7, every time
            q.send(0x02, slba=i % 64, read=True)
            (cid, st, data, _), = q.collect(1)
            assert (cid, st, len(data)) == (7, 0, 4096), (i, cid, st)
        assert "closing" not in log_text(log), log_text(log)


def test_a_connection_closing_while_answers_go():
    """A host that closes its connection while the back end answers its commands: the back end lets go of
    them before the connection is freed (under the sanitizers a use after free would end the target), 300
    times, and the target serves on."""
    with target("--hints", "use", size=8 << 20) as (port, path, p, log):
        a, cntlid = admin(port)
        for i in range(300):
            q = pipe(port, cntlid)
            for k in range(48):
                q.send(0x02, slba=16 * k, nlb=16, read=True)
            if i % 2:
                q.collect(1 + i % 7)  # some answers in, the rest on their way
            q.s.close()
            assert p.poll() is None, "the target ended at round %d:\n%s" % (i, log_text(log)[-2000:])
        q = pipe(port, cntlid)
        q.send(0x02, slba=0, read=True)
        assert q.collect(1)[0][1] == 0


def test_the_back_end_holds_a_bounded_queue():
    """9 I/O queues of 128 commands each, all sent at once to a back end whose latency is 1.5 s: at most 1024
    are held at once (queued or in service; a queue with one more waits before it reads on), by the trace's
    submission and completion times, and every command is answered."""
    with scratch_dir() as d:
        trace = os.path.join(d, "trace")
        with target("--trace", trace, "--latency", "1500000", size=4 << 20) as (port, path, p, log):
            a, cntlid = admin(port)
            assert a.command(0x09, cdw=(0x07, 8 | 8 << 16))[0] == 0  # 9 I/O queues
            queues = [pipe(port, cntlid, qid=i + 1) for i in range(9)]
            for q in queues:
                for k in range(128):
                    q.send(0x02, slba=k, read=True)
            for q in queues:
                got = q.collect(128)
                assert all(st == 0 for _, st, _, _ in got), [st for _, st, _, _ in got]
        rows = trace_rows(trace)
    assert len(rows) == 9 * 128, len(rows)
    events = sorted([(int(r["sub"]), 1) for r in rows] + [(int(r["comp"]), -1) for r in rows])
    held = most = 0
    for _, change in events:
        held += change
        most = max(most, held)
    assert 1000 <= most <= 1024, most  # it filled up to the bound, and no further


def test_a_write_waiting_longer_than_the_data_timeout():
    """8 writes of 16 KiB (their data asked for with R2Ts) at 4 IOPS and a --data-timeout of 1 s: the last
    waits in the back end about 1.7 s after its data came, and the connection stays: a command with all its
    data is not late however long the scheduler keeps it (a background write waits up to --max-wait)."""
    with scratch_dir() as d:
        trace = os.path.join(d, "trace")
        with target("--trace", trace, "--iops", "4", "--data-timeout", "1", size=4 << 20) as (port, path, p, log):
            a, cntlid = admin(port)
            q = pipe(port, cntlid)
            cids = []
            for k in range(8):
                q.capsule(q.sqe(0x01, 1, (4 * k, 0, 3), 0x5A, 16384))
                cids.append(q.cid)
            answer_r2ts(q, cids, lambda cid: bytes([cids.index(cid) + 1]))  # each answered, successfully
            assert "stopped arriving" not in log_text(log), log_text(log)
            with open(path, "rb") as f:  # after the last write: the target may write protect it now
                data = f.read(8 * 16384)
        rows = trace_rows(trace)
    waited = max(int(r["dispatched"]) - int(r["sub"]) for r in rows)
    assert waited > 1200000, ("no write waited past the data timeout: the test proves nothing", rows)
    assert all(data[k * 16384:(k + 1) * 16384] == bytes([k + 1]) * 16384 for k in range(8))


def answer_r2ts(q, cids, fill):
    """Answers R2Ts with FILL(cid) bytes until every command of CIDS is answered: the cids in the order of
    their answers, each checked successful."""
    order = []
    q.s.settimeout(20)
    while len(order) < len(cids):
        t, flags, hlen, pdo, plen, body = q.pdu()
        if t == 0x09:  # R2T: the data, in one H2CData PDU with LAST_PDU
            cccid, ttag, off, ln = struct.unpack_from("<HHII", body, 0)
            q.s.sendall(struct.pack("<BBBBIHHII", 0x06, 0x04, 24, 24, 24 + ln, cccid, ttag, off, ln) + bytes(4)
                        + fill(cccid) * ln)
            continue
        assert t == 0x05, "PDU type 0x%02x" % t
        _, _, _, _, cid, status = struct.unpack_from("<IIHHHH", body, 0)
        assert status >> 1 == 0, (cid, hex(status >> 1))
        order.append(cid)
    return order


def test_background_writes_leave_buffers_for_a_journal_write():
    """A connection's data buffer (64 KiB here) is shared by every command on it. 20 writes of data wait for
    the caps (20 IOPS), then 4 background writes of 16 KiB and a journal write of 16 KiB come, all through
    R2Ts. Hint-aware, the background writes, served last, may hold at most half of the buffer, so the journal
    write gets its buffer at once and goes first; were they to hold all of it, the journal write would wait
    for the first of them to complete, after every write of data. Hint-blind, arrival order."""
    def run(hints):
        with target("--iops", "20", "--hints", hints, "--connection-data-buffer", "64K", *FDP_USES,
                    size=4 << 20) as (port, path, p, log):
            a, cntlid = admin(port)
            q = pipe(port, cntlid)
            data = [q.send(0x01, slba=200 + i, write=b"d" * 4096) for i in range(20)]
            background = []
            for k in range(4):
                q.capsule(q.sqe(0x01, 1, (8 * k, 0, 3 | 2 << 20, BACKGROUND << 16), 0x5A, 16384))
                background.append(q.cid)
            q.capsule(q.sqe(0x01, 1, (100, 0, 3 | 2 << 20, JOURNAL << 16), 0x5A, 16384))
            journal = q.cid
            return answer_r2ts(q, data + background + [journal], lambda cid: b"x"), data, background, journal
    order, data, background, journal = run("use")
    # the caps' burst lets the first 2 or 3 writes of data go before it arrives
    assert order.index(journal) <= 4, order
    assert all(order.index(b) > order.index(d) for b in background for d in data), order
    order, data, background, journal = run("ignore")
    assert order == data + background + [journal], order


def test_bad_back_end_options():
    with scratch_dir() as d:
        path = os.path.join(d, "ns")
        with open(path, "wb") as f:
            f.truncate(1 << 20)
        for args in (["--disk-model", "gp4"], ["--disk-model-scale", "0"], ["--disk-model-scale", "x"],
                     ["--iops", "-1"], ["--hints", "maybe"], ["--hints", "read-ahead,"], ["--device-read-ahead", "1G"],
                     ["--disk-model", "gp3", "--disk-model-scale", "0.0000001"], ["--namespace-use", "0=journal"],
                     ["--iops-size", "100"]):
            r = __import__("subprocess").run([os.environ.get("LCLOUD_TARGET", "lcloud-target"), "--ns", path] + args,
                                             capture_output=True, text=True, timeout=10)
            assert r.returncode == 2 and args[0] in r.stderr, (args, r.returncode, r.stderr)


if __name__ == "__main__":
    main([test_caps_hold_the_rates, test_placement_hint_orders_writes, test_namespace_use_is_a_journal,
          test_read_ahead_hint_orders_reads, test_device_read_ahead_and_the_hint,
          test_a_cut_with_writes_waiting_in_the_back_end, test_a_command_id_is_free_once_answered,
          test_a_connection_closing_while_answers_go, test_the_back_end_holds_a_bounded_queue,
          test_a_write_waiting_longer_than_the_data_timeout, test_background_writes_leave_buffers_for_a_journal_write,
          test_bad_back_end_options])
