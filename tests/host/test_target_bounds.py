#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What peers can make lcloud-target hold, and that it keeps serving a
well-behaved host (its own NVMe/TCP host, nvme_tcp_host.py) through it, with
its resident memory under the bound lcloud-target(8) states (BOUNDS):
  - 2,000 idle TCP connections (no ICReq): at most --max-connections stay
    open, the oldest unfinished handshake giving way to a new connection;
  - the same at RLIMIT_NOFILE 1024, where the limit follows the descriptors
    it has; and accept() failing with EMFILE (the limit lowered under it with
    prlimit) is waited out, never fatal;
  - stalled PDUs (half an ICReq, half a Connect, half an H2CData PDU) and
    R2Ts never answered are closed after --data-timeout, with the reason;
  - 100 connections of writes whose R2T data never completes: their buffers
    come out of --connection-data-buffer and --data-buffer, writes past them
    wait with no R2T sent, and a host with nothing buffered is still served."""
import os
import resource
import socket
import struct
import subprocess
import time

from hostlib import main, need_root
from nvme_tcp_host import Host, target, log_text, admin, io_queue, rss_kib

MIB = 1024


def bound_kib(connections, data_buffer_mib=64, transfer_kib=128, cache_mib=0):
    """lcloud-target(8)'s bound: 32 MiB, the data buffer, the cache, and per open connection 192 KiB and one
    largest transfer."""
    return 32 * MIB + data_buffer_mib * MIB + cache_mib * MIB + connections * (192 + transfer_kib)


def open_idle(port, n):
    """N TCP connections, each established (the kernel's handshake done), that never send a byte."""
    socks = []
    for _ in range(n):
        socks.append(socket.create_connection(("127.0.0.1", port), timeout=10))
    return socks


def close_all(socks):
    for s in socks:
        s.close()


def served(port):
    """A well-behaved host's admin and I/O queue, a 128 KiB write by R2T and its read back (each answer within
    the host's 10 s, or it fails); the seconds it took, for the log."""
    start = time.monotonic()
    a, cntlid = admin(port)
    assert a.command(0x09, cdw=(0x07, 0))[0] == 0
    q = io_queue(port, cntlid)
    data = os.urandom(128 << 10)
    assert q.command(0x01, nsid=1, cdw=(64, 0, 31), write=data, inline=False)[0] == 0
    st, _, _, back = q.command(0x02, nsid=1, cdw=(64, 0, 31), read=128 << 10)
    assert st == 0 and back == data
    return time.monotonic() - start


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(n, soft), max(n, hard)))


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def settled(pid, seconds=60):
    """Waits until the target has taken in what the kernel queued: its descriptors the same for half a second."""
    end, last, same_since = time.monotonic() + seconds, -1, time.monotonic()
    while time.monotonic() < end:
        n = open_fds(pid)
        if n != last:
            last, same_since = n, time.monotonic()
        elif time.monotonic() - same_since > 0.5:
            return
        time.sleep(0.1)


def test_two_thousand_idle_connections():
    need_root()
    raise_nofile(8192)
    with target("--handshake-timeout", "60") as (port, path, p, log):
        idle = open_idle(port, 2000)
        try:
            settled(p.pid)
            took = served(port)
            rss = rss_kib(p.pid)
            print("    2000 idle: served in %.2f s, RSS %d KiB, %d descriptors" % (took, rss, open_fds(p.pid)))
            assert p.poll() is None
            assert open_fds(p.pid) <= 256 + 64, open_fds(p.pid)
            assert rss < bound_kib(256), (rss, bound_kib(256))
            assert "the connection limit is reached, and it had not finished its handshake" in log_text(log)
        finally:
            close_all(idle)


def test_idle_connections_at_nofile_1024_and_emfile():
    need_root()
    raise_nofile(8192)
    limit = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))  # noqa: E731
    with target("--handshake-timeout", "60", "--max-connections", "4096", preexec_fn=limit) as (port, path, p, log):
        assert "at most 480 connections, not 4096: RLIMIT_NOFILE is 1024" in log_text(log), log_text(log)
        idle = open_idle(port, 2000)
        try:
            settled(p.pid)
            served(port)
            assert p.poll() is None and open_fds(p.pid) <= 1024
            # the limit lowered under it: accept() fails with EMFILE, which it waits out
            close_all(idle)
            idle = open_idle(port, 300)
            settled(p.pid)
            subprocess.run(["prlimit", "--pid", str(p.pid), "--nofile=200:200"], check=True)
            idle += open_idle(port, 50)
            took = served(port)
            assert p.poll() is None, log_text(log)
            text = log_text(log)
            assert "accept: Too many open files: waiting" in text, text[-3000:]
            print("    EMFILE: served in %.2f s with %d descriptors open" % (took, open_fds(p.pid)))
        finally:
            close_all(idle)


def test_stalled_pdus_are_closed():
    """Half an ICReq, half a Connect, half an H2CData PDU, and an R2T never answered: each closed after
    --data-timeout (1 s here) with its reason; the well-behaved host meanwhile served."""
    with target("--data-timeout", "1", "--handshake-timeout", "5", "--max-r2t-bytes", "64K") as (port, path, p, log):
        stalled = []
        for _ in range(20):
            h = Host(port, icreq=False)
            h.s.sendall((struct.pack("<BBBBI", 0, 0, 128, 0, 128) + bytes(120))[:64])
            stalled.append(("icreq", h))
        for _ in range(20):
            h = Host(port)
            h.s.sendall(struct.pack("<BBBBI", 0x04, 0, 72, 72, 72 + 1024) + bytes(300))
            stalled.append(("connect", h))
        a, cntlid = admin(port)
        assert a.command(0x09, cdw=(0x07, 15 | 15 << 16))[0] == 0
        for i in range(8):
            q = io_queue(port, cntlid, qid=1 + i)
            q.capsule(q.sqe(0x01, 1, (16 * i, 0, 15), 0x5A, 65536))
            cccid, ttag, off, ln = q.r2t()
            if i % 2:
                q.s.sendall(struct.pack("<BBBBIHHII", 0x06, 0x04, 24, 24, 24 + ln, cccid, ttag, 0, ln) + bytes(4)
                            + bytes(1000))
                stalled.append(("h2c", q))
            else:
                stalled.append(("r2t", q))
        served(port)
        for kind, h in stalled:
            assert h.closed(10), kind  # --data-timeout is 1 s: closed by it, as the log says next
        text = log_text(log)
        # a half H2CData PDU also leaves its R2T unanswered: closed for whichever ran out first
        pdus, r2ts = text.count("a PDU stopped arriving"), text.count("the data its R2Ts asked for stopped arriving")
        assert pdus >= 20 + 20 and pdus + r2ts == 20 + 20 + 8, text[-4000:]
        assert "64 of its 128 bytes came" in text and "(--data-timeout)" in text
        served(port)
        assert p.poll() is None


def test_unfinished_r2t_writes():
    """100 I/O queues, each with 32 writes of 128 KiB asked for by R2T whose data stops half way: the target
    asks for no more than its buffers hold (2 MiB a connection, 64 MiB in all, and one write for a
    connection holding none), its RSS stays under the bound, and a well-behaved host is served at once."""
    raise_nofile(8192)
    with target("--data-timeout", "60", "--mdts", "5") as (port, path, p, log):
        queues = []
        for c in range(2):
            a, cntlid = admin(port)
            assert a.command(0x09, cdw=(0x07, 49 | 49 << 16))[0] == 0
            queues += [(a, io_queue(port, cntlid, qid=1 + i, maxr2t=3)) for i in range(50)]
        for _, q in queues:
            for k in range(32):
                q.capsule(q.sqe(0x01, 1, (k * 32, 0, 31), 0x5A, 128 << 10))
        # every R2T the target sends is answered with half its data; passes until one finds no new R2T
        time.sleep(0.5)
        r2ts = [0] * len(queues)
        more = True
        while more:
            more = False
            for n, (_, q) in enumerate(queues):
                q.s.settimeout(0.02)
                try:
                    while True:
                        cccid, ttag, off, ln = q.r2t()
                        q.s.sendall(struct.pack("<BBBBIHHII", 0x06, 0, 24, 24, 24 + ln // 2, cccid, ttag, off,
                                                ln // 2) + bytes(4) + os.urandom(ln // 2))
                        r2ts[n] += 1
                        more = True
                except socket.timeout:
                    pass
                q.s.settimeout(10)
        time.sleep(0.5)
        rss = rss_kib(p.pid)
        took = served(port)
        print("    100 stalled connections: %d R2Ts (per connection %d..%d), RSS %d KiB, served in %.2f s"
              % (sum(r2ts), min(r2ts), max(r2ts), rss, took))
        assert max(r2ts) <= 16 and min(r2ts) >= 1, r2ts          # 2 MiB a connection; one at least
        assert sum(r2ts) * 128 <= 64 * MIB + 100 * 128, sum(r2ts)  # 64 MiB in all, and one each
        assert rss < bound_kib(104), (rss, bound_kib(104))
        assert p.poll() is None


if __name__ == "__main__":
    main([test_two_thousand_idle_connections, test_idle_connections_at_nofile_1024_and_emfile,
          test_stalled_pdus_are_closed, test_unfinished_r2t_writes])
