#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""lcloud-target over loopback, driven by a small NVMe/TCP host written from
the transport specification (nvme_tcp_host.py, not the target's own code): the
connection set-up a Linux host does (ICReq, Fabrics Connect, Property Get/Set
of CAP, VS, CC, CSTS), the Identify data that carries the configured promise,
the admin commands Linux sends, reads and writes by every data path
(in-capsule, R2T + H2CData, C2HData), and malformed PDUs and commands: each
closes its connection with a logged reason, the target lives on, and the
backing file is byte for byte what it was."""
import hashlib
import os
import struct
import subprocess
import time

from hostlib import main, scratch_dir, need_root, loop_device, run
from nvme_tcp_host import TARGET, NQN, Closed, Host, target, pattern, log_text, admin, io_queue, identify, dhchap_secret


def u16(b, off):
    return struct.unpack_from("<H", b, off)[0]


def test_connect_and_properties():
    with target() as (port, path, p, log):
        h = Host(port)
        assert (h.pfv, h.cpda, h.dgst) == (0, 0, 0)
        assert h.maxdata >= 4096 and h.maxdata % 4 == 0  # what Linux checks in ICResp
        st, cntlid, _, _ = h.connect()
        assert st == 0 and 1 <= cntlid < 0xFFF0, (st, cntlid)
        cap = h.prop_get(0x00, eight=True)
        assert cap & 0xFFFF >= 31 and cap >> 37 & 1 == 1, hex(cap)
        assert h.prop_get(0x08) == 0x00010400
        assert h.prop_get(0x1C) & 1 == 0
        assert h.prop_set(0x14, 0x460001) == 0
        assert h.prop_get(0x1C) & 1 == 1
        assert h.prop_set(0x14, 0x464001) == 0      # CC.SHN normal shutdown
        assert h.prop_get(0x1C) >> 2 & 3 == 2       # CSTS.SHST complete
        # a second admin queue makes another controller
        st, other, _, _ = Host(port).connect()
        assert st == 0 and other != cntlid
        # the wrong subsystem is refused, naming the field (data byte 256)
        st, dw0, _, _ = Host(port).connect(nqn="nqn.2026-12.org.liblcloud:other")
        assert st & 0x7FF == 0x182 and dw0 == (1 << 16 | 256), (hex(st), hex(dw0))


def test_identify_carries_the_promise():
    with target("--lba-size", "4096", "--nawun", "16K", "--nawupf", "16K", "--nabsn", "32K", "--nabspf", "32K",
                "--awun", "8K", "--awupf", "8K", "--mdts", "6", "--volatile-write-cache", "on") as (port, path, p, log):
        h, cntlid = admin(port)
        st, ctrl = identify(h, 1)
        assert st == 0
        assert ctrl[77] == 6                                 # MDTS
        assert u16(ctrl, 78) == cntlid                       # CNTLID: Linux compares it with Connect's
        assert ctrl[111] == 1 and u16(ctrl, 320) > 0         # I/O controller, keep alive
        assert u16(ctrl, 514) > 0                            # MAXCMD
        assert ctrl[525] & 1 == 1                            # VWC
        assert (u16(ctrl, 526), u16(ctrl, 528)) == (1, 1)    # AWUN, AWUPF: 2 blocks, zero-based
        assert struct.unpack_from("<I", ctrl, 536)[0] & 1    # SGLs
        assert struct.unpack_from("<I", ctrl, 1792)[0] >= 4  # IOCCSZ
        assert u16(ctrl, 1800) == 0                          # ICDOFF
        assert ctrl[768:768 + len(NQN)].decode() == NQN and ctrl[768 + len(NQN)] == 0
        ext = ctrl[3072:3136]                                # the Linux cloud extension (lcloud-extension.7)
        assert ext[0:8] == b"LNXCLOUD" and struct.unpack_from("<HHI", ext, 8) == (1, 64, 0x3), ext[:16].hex()
        assert struct.unpack_from("<IIIH", ext, 16) == (16384, 32768, 0, 0)
        assert ext[32:] == bytes(32)
        st, ns = identify(h, 0, nsid=1)
        assert st == 0
        assert struct.unpack_from("<Q", ns, 0)[0] == 256     # 1 MiB of 4 KiB blocks
        assert ns[24] & 2 == 2                               # NSFEAT: NAWUN.. in use
        assert (u16(ns, 34), u16(ns, 36), u16(ns, 40), u16(ns, 42), u16(ns, 44)) == (3, 3, 7, 0, 7)
        assert ns[26] & 0xF == 0 and ns[128 + 2] == 12        # LBAF0: 4096 bytes
        st, active = identify(h, 2)
        assert st == 0 and struct.unpack_from("<II", active, 0) == (1, 0)
        st, desc = identify(h, 3, nsid=1)
        assert st == 0 and desc[0] == 2 and desc[1] == 16 and desc[4:20] == ns[104:120]
        assert identify(h, 0, nsid=2)[0] & 0xFF == 0x0B      # Invalid Namespace
        assert identify(h, 0x1F)[0] & 0xFF == 0x02           # unknown CNS: Invalid Field


def test_no_promise_512():
    with target("--lba-size", "512") as (port, path, p, log):
        h, _ = admin(port)
        st, ctrl = identify(h, 1)
        assert (u16(ctrl, 526), u16(ctrl, 528), ctrl[525]) == (0, 0, 0)
        ext = ctrl[3072:3136]                                # signed, versioned, and promising nothing
        assert ext[0:8] == b"LNXCLOUD" and struct.unpack_from("<HHI", ext, 8) == (1, 64, 0)
        assert ext[16:] == bytes(48)
        st, ns = identify(h, 0, nsid=1)
        assert ns[24] & 2 == 0 and ns[128 + 2] == 9
        assert struct.unpack_from("<Q", ns, 0)[0] == 2048
        assert all(u16(ns, o) == 0 for o in (34, 36, 40, 42, 44))


def test_admin_commands():
    with target("--volatile-write-cache", "on") as (port, path, p, log):
        h, cntlid = admin(port)
        st, dw0, _, _ = h.command(0x09, cdw=(0x07, 7 | 7 << 16))        # Number of Queues: 8 each
        assert st == 0 and dw0 == (7 | 7 << 16), (hex(st), hex(dw0))
        st, dw0, _, _ = h.command(0x09, cdw=(0x07, 200 | 200 << 16))
        assert st == 0 and dw0 & 0xFFFF < 200                          # capped, and says so
        assert h.command(0x09, cdw=(0x0F, 5000))[0] == 0               # Keep Alive Timer
        assert h.command(0x0A, cdw=(0x0F,))[1] == 5000
        assert h.command(0x09, cdw=(0x0B, 0x100))[0] == 0              # Asynchronous Event Configuration
        assert h.command(0x0A, cdw=(0x06,))[1] == 1                    # write cache on
        assert h.command(0x09, cdw=(0x06, 0))[0] == 0
        assert h.command(0x0A, cdw=(0x06,))[1] == 0
        assert h.command(0x0A, cdw=(0x80,))[0] & 0xFF == 0x02         # unknown feature
        assert h.command(0x18)[0] == 0                                 # Keep Alive
        st, _, _, smart = h.command(0x02, cdw=(0x02 | 127 << 16,), read=512)
        assert st == 0 and len(smart) == 512 and smart[3] == 100
        st, _, _, err = h.command(0x02, cdw=(0x01 | 15 << 16,), read=64)
        assert st == 0 and err == bytes(64)
        assert h.command(0x02, cdw=(0xC0 | 127 << 16,), read=512)[0] & 0x7FF == 0x109
        assert h.command(0x80)[0] & 0x7FF == 0x001                    # Format NVM: Invalid Opcode
        assert h.command(0x7F, cdw=(0, 0), fctype=0x05)[0] & 0x7FF == 0x001
        # an Asynchronous Event Request is held: the next command's answer comes first
        h.capsule(h.sqe(0x0C))
        aer = h.cid
        st, _, _, _ = h.command(0x18)
        assert st == 0
        assert aer != h.cid


def test_read_write_paths():
    with target("--volatile-write-cache", "on", "--mdts", "5") as (port, path, p, log):
        a, cntlid = admin(port)
        assert a.command(0x09, cdw=(0x07, 3 | 3 << 16))[0] == 0
        for cattr in (0, 0x04):  # with SQ flow control (a CapsuleResp after data), without (SUCCESS flag)
            q = io_queue(port, cntlid, qid=1 if not cattr else 2, cattr=cattr)
            small = os.urandom(4096)
            assert q.command(0x01, nsid=1, cdw=(3, 0, 0), write=small)[0] == 0                # in the capsule
            big = os.urandom(128 * 1024)
            assert q.command(0x01, nsid=1, cdw=(8, 0, 31 | 1 << 30), write=big, inline=False)[0] == 0  # R2T, FUA
            st, _, _, back = q.command(0x02, nsid=1, cdw=(3, 0, 0), read=4096)
            assert st == 0 and back == small
            st, _, _, back = q.command(0x02, nsid=1, cdw=(8, 0, 31), read=128 * 1024)
            assert st == 0 and back == big
            assert q.command(0x00, nsid=1)[0] == 0
        q = io_queue(port, cntlid, qid=3)
        assert q.command(0x08, nsid=1, cdw=(100, 0, 1))[0] == 0           # Write Zeroes, 2 blocks
        rng = struct.pack("<IIQ", 0, 1, 200)
        assert q.command(0x09, nsid=1, cdw=(0, 1 << 2), write=rng)[0] == 0  # DSM deallocate
        assert q.command(0x00, nsid=0xFFFFFFFF)[0] == 0
        # refusals with a status, and nothing written: the whole namespace read through the target before
        # and after, and the file itself once the last write is done
        before = namespace_digest(q, 256)
        assert q.command(0x01, nsid=1, cdw=(255, 0, 1), write=bytes(8192))[0] & 0x7FF == 0x080  # past the end
        assert q.command(0x01, nsid=2, cdw=(0, 0, 0), write=bytes(4096))[0] & 0x7FF == 0x00B
        assert q.command(0x01, nsid=1, cdw=(0, 0, 1), write=bytes(4096))[0] & 0x7FF == 0x00F    # length != NLB
        assert q.command(0x08, nsid=1, cdw=(250, 0, 9))[0] & 0x7FF == 0x080
        assert q.command(0x09, nsid=1, cdw=(1, 1 << 2), write=rng + struct.pack("<IIQ", 0, 8, 255))[0] & 0x7FF == 0x080
        q.capsule(q.sqe(0x01, 1, (0, 0, 63), 0x5A, 256 * 1024))  # over MDTS: refused before any R2T
        assert q.response()[0] & 0x7FF == 0x00F
        assert q.command(0x99, nsid=1)[0] & 0x7FF == 0x001
        assert namespace_digest(q, 256) == before
        with open(path, "rb") as f:
            data = f.read()
        assert data[3 * 4096:4 * 4096] == small and data[8 * 4096:40 * 4096] == big
        assert data[100 * 4096:102 * 4096] == bytes(8192)
        assert hashlib.sha256(data).digest() == before
        # an I/O queue of a controller that does not exist
        st, dw0, _, _ = Host(port).connect(qid=1, cntlid=0x7777, sqsize=127)
        assert st & 0x7FF == 0x182 and dw0 == (1 << 16 | 16), (hex(st), hex(dw0))


def namespace_digest(q, blocks, nsid=1):
    """sha256 of the first BLOCKS 4 KiB blocks of the namespace, read through the target in 128 KiB reads."""
    h = hashlib.sha256()
    for slba in range(0, blocks, 32):
        n = min(32, blocks - slba)
        st, _, _, data = q.command(0x02, nsid=nsid, cdw=(slba, 0, n - 1), read=n * 4096)
        assert st == 0, hex(st)
        h.update(data)
    return h.digest()


def hdr(t, flags, hlen, pdo, plen):
    return struct.pack("<BBBBI", t, flags, hlen, pdo, plen)


def malformed_cases(h):
    """(name, bytes) sent on a connected I/O queue; each must close it."""
    sqe = h.sqe(0x01, 1, (0, 0, 0), 0x01, 4096)
    wr_r2t = h.sqe(0x01, 1, (0, 0, 0), 0x5A, 4096)
    r2t_cid = h.cid
    return [
        ("unknown PDU type", hdr(0x0A, 0, 24, 0, 24) + bytes(16)),
        ("C2HData from a host", hdr(0x07, 0, 24, 24, 28) + bytes(20)),
        ("capsule with a wrong header length", hdr(0x04, 0, 64, 0, 64) + bytes(56)),
        ("capsule longer than any in-capsule data", hdr(0x04, 0, 72, 72, 72 + 9000) + sqe),
        ("in-capsule length differs from the descriptor", hdr(0x04, 0, 72, 72, 72 + 512) + sqe + bytes(512)),
        ("in-capsule data at a bad offset", hdr(0x04, 0, 72, 80, 72 + 4096) + sqe + bytes(4096)),
        ("digest flag without digests", hdr(0x04, 0x01, 72, 72, 72 + 4096) + sqe + bytes(4096)),
        ("unknown data descriptor", hdr(0x04, 0, 72, 0, 72) + h.sqe(0x01, 1, (0, 0, 0), 0x00, 4096)),
        ("H2CData with no R2T", hdr(0x06, 0x04, 24, 24, 24 + 4096) + struct.pack("<HHII", 7, 3, 0, 4096) + bytes(4)
         + bytes(4096)),
        ("H2CData past the R2T", hdr(0x04, 0, 72, 0, 72) + wr_r2t
         + hdr(0x06, 0x04, 24, 24, 24 + 8192) + struct.pack("<HHII", r2t_cid, 0, 0, 8192) + bytes(4) + bytes(8192)),
        ("H2CData without LAST_PDU at the end", hdr(0x04, 0, 72, 0, 72) + wr_r2t
         + hdr(0x06, 0, 24, 24, 24 + 4096) + struct.pack("<HHII", r2t_cid, 0, 0, 4096) + bytes(4) + bytes(4096)),
        ("second ICReq", hdr(0x00, 0, 128, 0, 128) + bytes(120)),
        ("plen below the header", hdr(0x04, 0, 72, 0, 16) + bytes(8)),
    ]


def test_malformed_pdus_close_and_write_nothing():
    with target("--volatile-write-cache", "on") as (port, path, p, log):
        before = hashlib.sha256(pattern()).digest()
        a, cntlid = admin(port)
        assert a.command(0x09, cdw=(0x07, 1 | 1 << 16))[0] == 0
        names = [n for n, _ in malformed_cases(Host(port))]
        for i, name in enumerate(names):
            q = io_queue(port, cntlid, qid=1 + i % 2)
            q.s.sendall(dict(malformed_cases(q))[name])
            assert q.closed(), name
            assert p.poll() is None, "the target died on: " + name
        text = log_text(log)
        assert text.count("closing:") >= len(names), text
        # a command before Connect, a digest ICReq
        h = Host(port)
        h.capsule(h.sqe(0x06, cdw=(1,), sgl_len=4096))
        assert h.closed()
        try:
            Host(port, digests=3)
            assert False, "an ICReq asking for digests was answered"
        except Closed:
            pass
        assert "digests" in log_text(log)
        # the target still serves, and the file is as it was
        st, _, _, data = io_queue(port, cntlid).command(0x02, nsid=1, cdw=(0, 0, 0), read=4096)
        assert st == 0 and data == bytes(range(256)) * 16
        assert hashlib.sha256(open(path, "rb").read()).digest() == before


def test_bad_options_are_refused():
    with scratch_dir() as d:
        path = os.path.join(d, "ns")
        with open(path, "wb") as f:
            f.truncate(1 << 20)
        for args in (["--nawupf", "1000"], ["--lba-size", "1024"], ["--mdts", "0"], ["--listen", "nowhere"],
                     ["--volatile-write-cache", "maybe"], ["--fdp", "0"], ["--fdp", "17"],
                     ["--fdp", "2", "--placement-use", "2=data"], ["--fdp", "2", "--placement-use", "0=hot"],
                     ["--placement-use", "0=data"], []):
            r = subprocess.run([TARGET] + args + (["--ns", path] if args else []), capture_output=True, text=True,
                               timeout=10)
            assert r.returncode == 2, (args, r.returncode, r.stderr)


def test_listens_on_loopback_by_default():
    """127.0.0.1 unless told; beyond loopback only with a DH-HMAC-CHAP secret, which every host must then prove."""
    with scratch_dir() as d:
        path, secret = os.path.join(d, "ns"), os.path.join(d, "secret")
        with open(path, "wb") as f:
            f.truncate(1 << 20)
        r = subprocess.run([TARGET, "--ns", path, "--listen", "0.0.0.0:0", "-q"], capture_output=True, text=True,
                           timeout=10)
        assert r.returncode == 2 and "--dhchap-secret" in r.stderr and "listening" not in r.stdout, (r.returncode,
                                                                                                   r.stderr)
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(dhchap_secret(os.urandom(32)) + "\n")
        p = subprocess.Popen([TARGET, "--ns", path, "--listen", "0.0.0.0:0", "-q", "--dhchap-secret", secret],
                             stdout=subprocess.PIPE, text=True)
        try:
            assert p.stdout.readline().startswith("listening 0.0.0.0:")
        finally:
            p.kill()
            p.wait()
        r = subprocess.run([TARGET, "--help"], capture_output=True, text=True)
        assert "default 127.0.0.1:4420" in r.stdout


def test_a_mounted_image_is_refused():
    """The write guard decides: a file that is a mounted loop device's storage is never a namespace."""
    need_root()
    with scratch_dir() as d:
        img, mnt = os.path.join(d, "img"), os.path.join(d, "mnt")
        os.mkdir(mnt)
        with loop_device(img, 64 << 20) as dev:
            run(["mkfs.ext4", "-q", "-F", dev], check=True)
            run(["mount", dev, mnt], check=True)
            try:
                before = hashlib.sha256(open(img, "rb").read()).digest()
                r = subprocess.run([TARGET, "--ns", img, "--listen", "127.0.0.1:0"], capture_output=True, text=True,
                                   timeout=30)
                assert r.returncode == 1 and "listening" not in r.stdout, (r.returncode, r.stdout, r.stderr)
                assert hashlib.sha256(open(img, "rb").read()).digest() == before
            finally:
                run(["umount", mnt])


def power_session(port, cached, durable):
    """Writes CACHED (slba, data) without flush after DURABLE ones (flushed, then FUA); reads a cached
    write back; then one more command, which the cut falls on."""
    a, cntlid = admin(port)
    assert a.command(0x09, cdw=(0x07, 0))[0] == 0
    q = io_queue(port, cntlid)
    (fslba, fdata), (uslba, udata) = durable
    assert q.command(0x01, nsid=1, cdw=(fslba, 0, len(fdata) // 4096 - 1), write=fdata, inline=False)[0] == 0
    assert q.command(0x00, nsid=1)[0] == 0
    assert q.command(0x01, nsid=1, cdw=(uslba, 0, (len(udata) // 4096 - 1) | 1 << 30), write=udata, inline=False)[0] == 0
    for slba, data in cached:
        assert q.command(0x01, nsid=1, cdw=(slba, 0, len(data) // 4096 - 1), write=data, inline=False)[0] == 0
    slba, data = cached[0]
    st, _, _, back = q.command(0x02, nsid=1, cdw=(slba, 0, len(data) // 4096 - 1), read=len(data))
    assert st == 0 and back == data  # the cache is read through
    try:
        q.command(0x00, nsid=1)
        raise AssertionError("a command after --cut-after was answered")
    except (Closed, ConnectionResetError):
        pass


def cut_once(seed, liar=False):
    """One target with a cache, a 16 KiB promise in 32 KiB boundaries, cut when the 11th I/O command arrives."""
    rnd = __import__("random").Random(seed)
    blob = lambda n: bytes(rnd.getrandbits(8) for _ in range(n))
    cached = [(0, blob(16384)), (8, blob(16384)), (14, blob(16384)), (24, blob(32768)), (40, blob(8192)),
              (60, blob(4096))]
    durable = [(100, blob(16384)), (120, blob(16384))]
    extra = ["--liar"] if liar else []
    with scratch_dir() as d:
        report = os.path.join(d, "report")
        with target("--volatile-write-cache", "on", "--nawupf", "16K", "--nawun", "16K", "--nabspf", "32K",
                    "--nabsn", "32K", "--cut-after", "10", "--seed", str(seed), "--power-report", report,
                    *extra) as (port, path, p, log):
            old = pattern()
            power_session(port, cached, durable)
            assert p.wait(10) == 0, log_text(log)
            new = open(path, "rb").read()
            with open(report) as f:
                lines = [l.split() for l in f if not l.startswith("#")]
    for slba, data in durable:  # flushed and FUA data always survive
        assert new[slba * 4096:slba * 4096 + len(data)] == data, ("durable write lost", seed, slba)
    outcomes = []
    assert len(lines) == len(cached), lines
    for (slba, data), (seq, nsid, rslba, nlb, covered, outcome, blocks, state, arrived) in zip(cached, lines):
        assert (int(rslba), int(nlb), state, int(arrived)) == (slba, len(data) // 4096, "acknowledged", int(nlb))
        got = [new[(slba + b) * 4096:(slba + b + 1) * 4096] for b in range(len(data) // 4096)]
        was = [old[(slba + b) * 4096:(slba + b + 1) * 4096] for b in range(len(data) // 4096)]
        now = [data[b * 4096:(b + 1) * 4096] for b in range(len(data) // 4096)]
        written = [g == n and g != w for g, n, w in zip(got, now, was)]
        assert all(g in (n, w) for g, n, w in zip(got, now, was)), ("a block neither old nor new", seed, slba)
        state = "whole" if all(written) else "lost" if not any(written) else "torn"
        assert state == outcome, (seed, slba, state, outcome, blocks)
        outcomes.append((slba, covered, state))
    return outcomes, lines


def test_power_cut_keeps_the_promise():
    """20 seeded cuts: covered writes (16 KiB within a 32 KiB boundary) land whole or not at all, writes
    across a boundary or past the unit tear on some seeds, flushed and FUA data survive, and the same
    seed gives the same cut."""
    torn_uncovered = 0
    for seed in range(1, 21):
        outcomes, _ = cut_once(seed)
        cov = {slba: covered for slba, covered, _ in outcomes}
        # 0..3 and 8..11 sit in one 32 KiB boundary; 14..17 crosses 16; 24..31 is past the unit
        assert (cov[0], cov[8], cov[14], cov[24], cov[40], cov[60]) == \
            ("covered", "covered", "uncovered", "uncovered", "covered", "covered"), cov
        for slba, covered, state in outcomes:
            if covered == "covered":
                assert state != "torn", (seed, slba)
            elif state == "torn":
                torn_uncovered += 1
    assert torn_uncovered > 0
    assert cut_once(7)[1] == cut_once(7)[1]


def test_liar_tears_what_it_promised():
    torn_covered = 0
    for seed in range(1, 21):
        outcomes, _ = cut_once(seed, liar=True)
        torn_covered += sum(1 for slba, covered, state in outcomes if covered == "covered" and state == "torn")
    assert torn_covered > 0


def test_sigusr1_cuts_the_power():
    with scratch_dir() as d:
        report = os.path.join(d, "report")
        with target("--volatile-write-cache", "on", "--power-report", report) as (port, path, p, log):
            a, cntlid = admin(port)
            q = io_queue(port, cntlid)
            assert q.command(0x01, nsid=1, cdw=(5, 0, 0), write=b"\x77" * 4096)[0] == 0
            assert not os.path.exists(report)  # made at start, unnamed until the cut
            p.send_signal(__import__("signal").SIGUSR1)
            assert p.wait(10) == 0
            assert q.closed()
            assert "power cut (SIGUSR1)" in log_text(log)
            with open(report) as f:
                text = f.read()
            assert "1 cached writes" in text, text
        # an existing report is replaced whole at the cut, as lcloudctl's output files are
        with open(report, "w") as f:
            f.write("keep")
        with target("--volatile-write-cache", "on", "--power-report", report) as (port, path, p, log):
            assert open(report).read() == "keep"  # nothing happens to it before the cut
            p.send_signal(__import__("signal").SIGUSR1)
            assert p.wait(10) == 0
        assert open(report).read().startswith("# lcloud-target power cut: SIGUSR1")
        assert [n for n in os.listdir(d) if n.startswith("report.")] == []  # no temporary left behind


def read_write_log(path):
    """The dm-log-writes format, read here from its definition: (sector, nr_sectors, flags, data) per entry."""
    with open(path, "rb") as f:
        log = f.read()
    magic, version, n, ss = struct.unpack_from("<QQQI", log, 0)
    assert (magic, version) == (0x6A736677736872, 1), (hex(magic), version)
    entries, pos = [], ss
    for _ in range(n):
        sector, nr, flags, data_len = struct.unpack_from("<QQQQ", log, pos)
        pos += ss
        has_data = not flags & (1 | 4)
        data = log[pos:pos + nr * ss] if has_data else b""
        pos += len(data)
        entries.append((sector, nr, flags, data))
    assert pos == len(log), (pos, len(log))
    return ss, entries


def test_write_log_and_trace():
    """The write log holds what the target accepted, in order, in the format lcloudctl replay reads,
    and the trace each I/O command's hints (FUA, Limited Retry, DSM bits, directive type and specific)."""
    with scratch_dir() as d:
        wlog, trace = os.path.join(d, "ns1.log"), os.path.join(d, "trace")
        with target("--volatile-write-cache", "on", "--write-log", wlog, "--trace", trace, "--fdp", "8") as \
                (port, path, p, log):
            a, cntlid = admin(port)
            q = io_queue(port, cntlid)
            data = os.urandom(16384)
            before_us = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
            assert q.command(0x01, nsid=1, cdw=(8, 0, 3 | 1 << 30), write=data, inline=False)[0] == 0  # FUA
            assert q.command(0x01, nsid=1, cdw=(20, 0, 0 | 2 << 20, 5 << 16), write=data[:4096])[0] == 0  # DTYPE 2
            assert q.command(0x08, nsid=1, cdw=(30, 0, 1))[0] == 0                      # Write Zeroes
            assert q.command(0x00, nsid=1)[0] == 0                                      # Flush
            assert q.command(0x09, nsid=1, cdw=(0, 1 << 2), write=struct.pack("<IIQ", 0, 2, 40))[0] == 0
            assert q.command(0x02, nsid=1, cdw=(8, 0, 0 | 1 << 31, 0x07), read=4096)[0] == 0  # LR, DSM prefetch
            assert q.command(0x01, nsid=1, cdw=(300, 0, 0), write=data[:4096])[0] & 0x7FF == 0x080
            after_us = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
            # a refused write is traced, never logged
        assert os.path.exists(wlog)
        ss, entries = read_write_log(wlog)
        assert ss == 4096
        # Write Zeroes is a DISCARD entry without data: its blocks read as zeros, which is what replay makes
        assert [(e[0], e[1], e[2]) for e in entries] == [(8, 4, 2), (20, 1, 0), (30, 2, 4), (0, 0, 1), (40, 2, 4)], \
            [(e[0], e[1], e[2]) for e in entries]
        assert entries[0][3] == data and entries[1][3] == data[:4096] and entries[2][3] == b""
        r = subprocess.run([os.environ.get("LCLOUDCTL", "lcloudctl"), "replay", "--format", "json", "--all", wlog],
                           capture_output=True, text=True)
        assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
        with open(trace) as f:
            text = f.read()
        lines = [l.split() for l in text.splitlines() if not l.startswith("#")]
        # the second comment line puts the times on this host's CLOCK_MONOTONIC
        clock = text.splitlines()[1].split()
        assert clock[:4] == ["#", "clock", "monotonic", "start_us"], text[:200]
        start_us = int(clock[4])
        cols = ["seq", "opcode", "nsid", "slba", "nlb", "fua", "lr", "dsm", "dtype", "dspec", "sub", "comp", "status"]
        rows = [dict(zip(cols, l)) for l in lines]
        assert [r["opcode"] for r in rows] == ["0x01", "0x01", "0x08", "0x00", "0x09", "0x02", "0x01"], rows
        assert (rows[0]["fua"], rows[0]["nlb"], rows[0]["slba"]) == ("1", "4", "8")
        assert (rows[1]["dtype"], rows[1]["dspec"]) == ("2", "5")
        assert (rows[5]["lr"], rows[5]["dsm"]) == ("1", "0x07")
        assert rows[6]["status"] == "0x080"
        assert all(int(r["sub"]) <= int(r["comp"]) for r in rows)
        assert before_us <= start_us + int(rows[0]["sub"]) and start_us + int(rows[-1]["comp"]) <= after_us, \
            (before_us, start_us, rows[0]["sub"], rows[-1]["comp"], after_us)
        # both are new files, never an existing one
        with open(os.path.join(d, "ns"), "wb") as f:
            f.truncate(1 << 20)
        for opt, existing in (("--write-log", wlog), ("--trace", trace)):
            size = os.path.getsize(existing)
            r = subprocess.run([TARGET, "--ns", os.path.join(d, "ns"), opt, existing, "--listen", "127.0.0.1:0"],
                               capture_output=True, text=True, timeout=10)
            assert r.returncode == 1 and "new file" in r.stderr, (opt, r.returncode, r.stderr)
            assert os.path.getsize(existing) == size


def get_log(h, lid, length, offset=0, lsi=0, lsp=0):
    """Get Log Page as Linux sends it: NUMDL/NUMDU, LSP, LSI, the offset in CDW12/13."""
    numd = length // 4 - 1
    cdw10 = lid | lsp << 8 | (numd & 0xFFFF) << 16
    cdw11 = numd >> 16 | lsi << 16
    st, _, _, data = h.command(0x02, cdw=(cdw10, cdw11, offset & 0xFFFFFFFF, offset >> 32), read=length)
    return st & 0x7FF, data


def ruh_status(q, length, mo=1):
    """I/O Management Receive (0x12), Management Operation MO: the reclaim unit handle status."""
    st, _, _, data = q.command(0x12, nsid=1, cdw=(mo, length // 4 - 1), read=length)
    return st & 0x7FF, data


FDP_RU_BLOCKS = (64 << 20) // 4096  # the target's reclaim unit, in 4 KiB blocks


def test_fdp_identify_features_and_logs():
    """With --fdp 4: CTRATT bit 19 and ENDGID lead the host on; feature 0x1D says enabled; the four FDP
    logs have their layouts and lengths and honour the offset, the length and the endurance group."""
    with target("--fdp", "4", "--placement-use", "0=data,1=journal,3=background",
                "--volatile-write-cache", "on") as (port, path, p, log):
        h, _ = admin(port)
        st, ctrl = identify(h, 1)
        ctratt = struct.unpack_from("<I", ctrl, 96)[0]
        assert st == 0 and ctratt & (1 << 19) and ctratt & (1 << 4), hex(ctratt)
        assert u16(ctrl, 340) == 1                                   # ENDGIDMAX
        ext = ctrl[3072:3136]                                        # flags bit 3, 4 handles, their uses
        assert struct.unpack_from("<I", ext, 12)[0] & 0x8 and u16(ext, 28) == 4, ext.hex()
        assert ext[32:48] == bytes([1, 3, 0, 4]) + bytes(12)
        st, ns = identify(h, 0, nsid=1)
        assert st == 0 and u16(ns, 102) == 1                         # ENDGID
        # Get Features FDP for endurance group 1: enabled, configuration 0; a Set may not change it
        st, dw0, _, _ = h.command(0x0A, cdw=(0x1D, 1))
        assert (st, dw0) == (0, 1), (hex(st), dw0)
        assert h.command(0x0A, cdw=(0x1D, 2))[0] & 0x7FF == 0x002     # no endurance group 2
        assert h.command(0x09, cdw=(0x1D, 1, 1))[0] == 0               # enable: as it is
        assert h.command(0x09, cdw=(0x1D, 1, 0))[0] & 0x7FF == 0x10E   # disable: Feature Not Changeable
        assert h.command(0x09, cdw=(0x1D, 1, 1 | 1 << 8))[0] & 0x7FF == 0x10E
        # 0x20 configurations, read as Linux does: the header, then SZE bytes
        st, hdr = get_log(h, 0x20, 16, lsi=1)
        numfdpc, ver, sze = struct.unpack_from("<HBxI", hdr, 0)
        assert st == 0 and numfdpc == 0 and sze == 16 + 64 + 4 * 4, (st, numfdpc, sze)
        st, cfg = get_log(h, 0x20, sze, lsi=1)
        assert st == 0 and cfg[:16] == hdr
        dsze, fdpa, vss, nrg, nruh, maxpids, nnss, runs, erutl = struct.unpack_from("<HBBIHHIQI", cfg, 16)
        assert (dsze, nrg, nruh, maxpids, runs, erutl) == (64 + 16, 1, 4, 3, 64 << 20, 0)
        assert fdpa & 0x80 and fdpa & 0x10 and fdpa & 0xF == 0, hex(fdpa)  # valid, volatile cache, RGIF 0
        assert [cfg[80 + 4 * i] for i in range(4)] == [1] * 4       # RUHT: initially isolated
        st, part = get_log(h, 0x20, 64, offset=16, lsi=1)            # an offset: the descriptor alone
        assert st == 0 and part == cfg[16:80]
        st, tail = get_log(h, 0x20, 64, offset=sze - 8, lsi=1)       # past the end: zeros
        assert st == 0 and tail == cfg[sze - 8:] + bytes(56)
        assert get_log(h, 0x20, 16, offset=sze + 4, lsi=1)[0] == 0x002  # beyond the page
        assert get_log(h, 0x20, 16, offset=2, lsi=1)[0] == 0x002        # not dword aligned
        assert get_log(h, 0x20, 16, lsi=2)[0] == 0x002                  # another endurance group
        assert get_log(h, 0x20, 16 << 10, lsi=1)[1][:sze] == cfg        # a long read, then zeros
        # 0x21 reclaim unit handle usage: 8 bytes and 8 per handle, each host specified
        st, usage = get_log(h, 0x21, 8 + 8 * 4, lsi=1)
        assert st == 0 and u16(usage, 0) == 4 and [usage[8 + 8 * i] for i in range(4)] == [1] * 4
        # 0x22 statistics: three 128-bit counters, nothing written yet
        st, stats = get_log(h, 0x22, 64, lsi=1)
        assert st == 0 and stats == bytes(64)
        # 0x23 events: a 64-byte header and room for 63, none yet, host (LSP 1) or controller (LSP 0)
        for lsp in (0, 1):
            st, events = get_log(h, 0x23, 4096, lsi=1, lsp=lsp)
            assert st == 0 and events == bytes(4096)
        assert get_log(h, 0x24, 64, lsi=1)[0] == 0x109


def test_fdp_writes_are_placed_and_counted():
    """A Write with DTYPE 2 is counted on its handle (statistics log, RUAMW in the handle status); a handle
    past N is placed on handle 0 and noted as an Invalid Placement Identifier event, as the specification
    says for an invalid placement identifier; other directive types are refused and write nothing."""
    with target("--fdp", "4", "--mdts", "6") as (port, path, p, log):
        a, cntlid = admin(port)
        q = io_queue(port, cntlid)
        st, status = ruh_status(q, 16 + 32 * 4)
        assert st == 0 and u16(status, 14) == 4, (st, status[:16].hex())
        descs = [struct.unpack_from("<HHIQ", status, 16 + 32 * i) for i in range(4)]
        assert descs == [(i, i, 0, FDP_RU_BLOCKS) for i in range(4)], descs
        st, short = ruh_status(q, 16)                                # a short read: the header alone
        assert st == 0 and short == status[:16]
        st, long_ = ruh_status(q, 4048)                              # the size Linux asks for
        assert st == 0 and long_[:16 + 32 * 4] == status and long_[16 + 32 * 4:] == bytes(4048 - 144)
        assert ruh_status(q, 64, mo=2)[0] == 0x002                   # no such operation
        data = os.urandom(16384)
        assert q.command(0x01, nsid=1, cdw=(16, 0, 3 | 2 << 20, 1 << 16), write=data, inline=False)[0] == 0
        assert q.command(0x01, nsid=1, cdw=(32, 0, 0 | 2 << 20, 3 << 16), write=data[:4096])[0] == 0
        assert q.command(0x01, nsid=1, cdw=(40, 0, 0), write=data[:4096])[0] == 0   # no directive: handle 0
        st, stats = get_log(a, 0x22, 64, lsi=1)
        hbmw, mbmw, mbe = (int.from_bytes(stats[i:i + 16], "little") for i in (0, 16, 32))
        assert st == 0 and (hbmw, mbmw, mbe) == (24576, 24576, 0), (hbmw, mbmw, mbe)
        ruamw = [struct.unpack_from("<Q", ruh_status(q, 144)[1], 16 + 32 * i + 8)[0] for i in range(4)]
        assert ruamw == [FDP_RU_BLOCKS - 1, FDP_RU_BLOCKS - 4, FDP_RU_BLOCKS, FDP_RU_BLOCKS - 1], ruamw
        # a placement identifier past the handles: written, placed on handle 0, and an event says so
        assert q.command(0x01, nsid=1, cdw=(48, 0, 0 | 2 << 20, 9 << 16), write=data[:4096])[0] == 0
        st, events = get_log(a, 0x23, 4096, lsi=1, lsp=1)                 # LSP bit 0: host events
        assert st == 0 and struct.unpack_from("<I", events, 0)[0] == 1, events[:8].hex()
        assert get_log(a, 0x23, 4096, lsi=1, lsp=0)[1] == bytes(4096)     # controller events: none
        etype, eflags, pid = struct.unpack_from("<BBH", events, 64)
        assert (etype, eflags, pid, struct.unpack_from("<I", events, 64 + 12)[0]) == (0x03, 0x03, 9, 1)
        assert struct.unpack_from("<Q", ruh_status(q, 144)[1], 16 + 8)[0] == FDP_RU_BLOCKS - 2
        # I/O Management Send: a reclaim unit handle update starts handle 1 on a fresh unit
        assert q.command(0x1D, nsid=1, cdw=(1, 0), write=struct.pack("<HH", 1, 0))[0] == 0
        assert struct.unpack_from("<Q", ruh_status(q, 144)[1], 16 + 32 + 8)[0] == FDP_RU_BLOCKS
        assert q.command(0x1D, nsid=1, cdw=(1, 0), write=struct.pack("<HH", 7, 0))[0] & 0x7FF == 0x002
        # the statistics count what was written, whatever unit it went to
        st, stats = get_log(a, 0x22, 64, lsi=1)
        assert int.from_bytes(stats[0:16], "little") == 28672
        # directive types it does not offer (Streams): refused, and nothing is written
        assert q.command(0x01, nsid=1, cdw=(60, 0, 0 | 1 << 20, 1 << 16), write=data[:4096])[0] & 0x7FF == 0x002
        with open(path, "rb") as f:  # the last write done: the file may be opened
            f.seek(48 * 4096)
            assert f.read(4096) == data[:4096]
            f.seek(60 * 4096)
            assert f.read(4096) == pattern()[60 * 4096:61 * 4096]


def test_fdp_off_refuses_placement():
    """Without --fdp: no CTRATT bit 19, no FDP feature, logs or I/O Management, and a Write with DTYPE 2
    is an Invalid Field that writes nothing."""
    with target() as (port, path, p, log):
        h, cntlid = admin(port)
        st, ctrl = identify(h, 1)
        assert struct.unpack_from("<I", ctrl, 96)[0] & (1 << 19) == 0
        assert struct.unpack_from("<I", ctrl, 3084)[0] & 0x8 == 0 and u16(ctrl, 3100) == 0
        st, ns = identify(h, 0, nsid=1)
        assert u16(ns, 102) == 0
        assert h.command(0x0A, cdw=(0x1D, 1))[0] & 0x7FF == 0x002
        for lid in (0x20, 0x21, 0x22, 0x23):
            assert get_log(h, lid, 64, lsi=1)[0] == 0x109, hex(lid)
        q = io_queue(port, cntlid)
        st = q.command(0x01, nsid=1, cdw=(5, 0, 0 | 2 << 20, 0), write=b"\x55" * 4096)[0]
        assert st & 0x7FF == 0x002, hex(st)
        assert namespace_digest(q, 256) == hashlib.sha256(pattern()).digest()
        assert ruh_status(q, 144)[0] == 0x001
        assert q.command(0x01, nsid=1, cdw=(5, 0, 0), write=b"\x55" * 4096)[0] == 0  # the same write, undirected
        with open(path, "rb") as f:
            assert f.read() == pattern()[:5 * 4096] + b"\x55" * 4096 + pattern()[6 * 4096:]


def blocks_state(old, new, data, slba, nlb):
    """Per block of a write at SLBA: True written, False old; asserts each is one or the other."""
    state = []
    for b in range(nlb):
        got = new[(slba + b) * 4096:(slba + b + 1) * 4096]
        was, now = old[(slba + b) * 4096:(slba + b + 1) * 4096], data[b * 4096:(b + 1) * 4096]
        assert got in (was, now), ("a block neither old nor new", slba, b)
        state.append(got == now and got != was)
    return state


def inflight_cut(seed, slba, nlb, extra=()):
    """A target without a cache, cut when its 3rd I/O command, a write of NLB blocks at SLBA sent by R2Ts of
    8 KiB, arrives: the cut falls at a seeded point of its data. Returns (old, new, data, report lines,
    the bytes the host sent, whether a completion came)."""
    rnd = __import__("random").Random(seed)
    data = bytes(rnd.getrandbits(8) for _ in range(nlb * 4096))
    with scratch_dir() as d:
        report = os.path.join(d, "report")
        with target("--nawupf", "16K", "--nawun", "16K", "--nabspf", "32K", "--nabsn", "32K", "--cut-after", "2",
                    "--seed", str(seed), "--max-r2t-bytes", "8K", "--power-report", report,
                    *extra) as (port, path, p, log):
            old = pattern()
            a, cntlid = admin(port)
            q = io_queue(port, cntlid)
            assert q.command(0x01, nsid=1, cdw=(200, 0, 0), write=b"\x11" * 4096)[0] == 0
            assert q.command(0x02, nsid=1, cdw=(200, 0, 0), read=4096)[0] == 0
            q.capsule(q.sqe(0x01, 1, (slba, 0, nlb - 1), 0x5A, len(data)))
            sent, completed = 0, False
            try:
                while True:
                    t, flags, hlen, pdo, plen, body = q.pdu()
                    if t == 0x05:
                        completed = True
                        break
                    assert t == 0x09, t
                    cccid, ttag, off, ln = struct.unpack_from("<HHII", body, 0)
                    q.h2c_data(ttag, off, data[off:off + ln], True)
                    sent = off + ln
            except (Closed, ConnectionResetError, BrokenPipeError):
                pass
            assert p.wait(10) == 0, log_text(log)
            new = open(path, "rb").read()
            with open(report) as f:
                text = f.read()
    lines = [l.split() for l in text.splitlines() if not l.startswith("#")]
    return old, new, data, lines, sent, completed, text


def test_a_cut_with_a_write_in_flight():
    """Without a cache, a write in flight is all a cut can tear: --cut-after falling on a write cuts while its
    data arrives; the report names it in flight with the blocks that had arrived, the file shows it whole,
    absent or torn (only in arrived blocks) as the report says, the host never sees it completed, and a
    write the promise covers is never torn."""
    seen = set()
    for seed in range(1, 13):
        for slba, nlb, covered in ((16, 8, "uncovered"), (4, 4, "covered")):
            old, new, data, lines, sent, completed, text = inflight_cut(seed, slba, nlb)
            assert not completed, (seed, slba)
            assert old[200 * 4096:201 * 4096] != new[200 * 4096:201 * 4096]  # the earlier write was durable
            assert len(lines) == 1, text
            seq, nsid, rslba, rnlb, cov, outcome, blocks, state, arrived = lines[0]
            assert (int(rslba), int(rnlb), cov, state) == (slba, nlb, covered, "in-flight"), lines
            assert int(arrived) * 4096 <= sent, (arrived, sent)
            written = blocks_state(old, new, data, slba, nlb)
            got = "whole" if all(written) else "lost" if not any(written) else "torn"
            assert got == outcome, (seed, slba, got, outcome, text)
            if outcome == "torn":
                assert covered == "uncovered", (seed, text)
                assert [i for i, w in enumerate(written) if w] == [int(b) for b in blocks.split(",")]
                assert all(not w for w in written[int(arrived):]), "a block that never arrived was written"
            if outcome == "whole":
                assert int(arrived) == nlb
            seen.add((covered, outcome, int(arrived) < nlb))
            assert "1 writes in flight" in text and "0 cached writes" in text, text
    assert ("uncovered", "torn", True) in seen or ("uncovered", "torn", False) in seen, seen
    assert any(c == "covered" and o == "whole" for c, o, _ in seen), seen
    assert any(partial for _, _, partial in seen), seen


def test_sigusr1_while_a_writes_data_arrives():
    """SIGUSR1 between two R2Ts: the write is in flight with the first R2T's blocks, never completed."""
    with scratch_dir() as d:
        report = os.path.join(d, "report")
        with target("--max-r2t-bytes", "8K", "--power-report", report, "--seed", "3") as (port, path, p, log):
            old = pattern()
            a, cntlid = admin(port)
            q = io_queue(port, cntlid)
            data = os.urandom(32768)
            q.capsule(q.sqe(0x01, 1, (40, 0, 7), 0x5A, len(data)))
            cccid, ttag, off, ln = q.r2t()
            assert (off, ln) == (0, 8192)
            q.h2c_data(ttag, 0, data[:8192], True)
            cccid, ttag, off, ln = q.r2t()  # the second R2T means the first one's data is in
            assert (off, ln) == (8192, 8192)
            p.send_signal(__import__("signal").SIGUSR1)
            assert p.wait(10) == 0
            assert q.closed()
            new = open(path, "rb").read()
            text = open(report).read()
    lines = [l.split() for l in text.splitlines() if not l.startswith("#")]
    assert len(lines) == 1 and lines[0][7:] == ["in-flight", "2"], text
    written = blocks_state(old, new, data, 40, 8)
    assert not any(written[2:])
    assert lines[0][5] == ("lost" if not any(written) else "torn"), (text, written)


def test_keep_alive_timeout_closes_the_controller():
    """A controller whose admin queue hears nothing for its KATO fails: its admin and I/O connections close
    with a logged reason; one that sends Keep Alive in time (or whose Set Features gave a longer KATO) lives."""
    with target() as (port, path, p, log):
        quiet = Host(port)
        st, cntlid, _, _ = quiet.connect(kato=600)
        assert st == 0
        assert quiet.prop_set(0x14, 0x460001) == 0
        assert quiet.command(0x09, cdw=(0x07, 0))[0] == 0
        io = io_queue(port, cntlid)
        alive = Host(port)
        st, alive_id, _, _ = alive.connect(kato=600)
        assert st == 0 and alive.prop_set(0x14, 0x460001) == 0
        longer = Host(port)
        st, _, _, _ = longer.connect(kato=600)
        assert st == 0 and longer.command(0x09, cdw=(0x0F, 60000))[0] == 0  # Set Features: KATO 60 s
        start, io_closed = time.monotonic(), False
        while time.monotonic() - start < 2.0:
            assert alive.command(0x18)[0] == 0  # Keep Alive
            try:  # I/O keeps no controller alive: the timer is the admin queue's
                if not io_closed:
                    assert io.command(0x02, nsid=1, cdw=(0, 0, 0), read=4096)[0] == 0
            except (Closed, ConnectionResetError):
                io_closed = time.monotonic() - start
            time.sleep(0.2)
        assert quiet.closed(2) and (io_closed or io.closed(2))
        assert not io_closed or 0.5 < io_closed < 1.4, io_closed  # KATO 600 ms, noticed within 2 x
        assert alive.command(0x18)[0] == 0 and longer.command(0x18)[0] == 0
        text = log_text(log)
        assert "controller %u: keep alive timeout" % cntlid in text, text
        assert text.count("closing: controller %u: keep alive timeout" % cntlid) == 2, text
        assert "controller %u: keep alive timeout" % alive_id not in text
        assert p.poll() is None


def write_by_r2ts(q, slba, data):
    """A write whose data goes as the R2Ts ask; returns (their (offset, length, ttag), the status)."""
    q.capsule(q.sqe(0x01, 1, (slba, 0, len(data) // 4096 - 1), 0x5A, len(data)))
    r2ts, pending = [], []
    while True:
        t, flags, hlen, pdo, plen, body = q.pdu()
        if t == 0x05:
            return r2ts, struct.unpack_from("<H", body, 14)[0] >> 1
        assert t == 0x09, t
        cccid, ttag, off, ln = struct.unpack_from("<HHII", body, 0)
        assert cccid == q.cid
        r2ts.append((off, ln, ttag))
        pending.append((off, ln, ttag))
        if len(pending) >= 1 + len(r2ts) // 100:  # answer as they come
            for off, ln, ttag in pending:
                for o in range(off, off + ln, q.maxdata):
                    q.h2c_data(ttag, o, data[o:min(o + q.maxdata, off + ln)], o + q.maxdata >= off + ln)
            pending = []


def test_several_r2ts_per_write():
    """A 128 KiB write with --max-r2t-bytes 32K is asked for by four R2Ts in order (one at a time for a host
    whose MAXR2T is 0, up to four at once for one that allows them); H2CData with the wrong offset or the
    wrong transfer tag for the R2T it answers closes the connection and writes nothing."""
    with target("--max-r2t-bytes", "32K", "--mdts", "5") as (port, path, p, log):
        a, cntlid = admin(port)
        assert a.command(0x09, cdw=(0x07, 3 | 3 << 16))[0] == 0
        data = os.urandom(128 * 1024)
        q = io_queue(port, cntlid)
        r2ts, st = write_by_r2ts(q, 16, data)
        assert st == 0 and [(o, l) for o, l, _ in r2ts] == [(i * 32768, 32768) for i in range(4)], r2ts
        assert len(set(t for _, _, t in r2ts)) == 4, r2ts  # each R2T its own tag
        # MAXR2T 3: all four R2Ts come before any data is sent
        h = Host(port, maxr2t=3)
        st, _, _, _ = h.connect(qid=2, cntlid=cntlid, sqsize=127)
        assert st == 0
        h.capsule(h.sqe(0x01, 1, (48, 0, 31), 0x5A, len(data)))
        got = [h.r2t() for _ in range(4)]
        assert [(o, l) for _, _, o, l in got] == [(i * 32768, 32768) for i in range(4)], got
        for _, ttag, o, l in got:
            for x in range(o, o + l, h.maxdata):
                h.h2c_data(ttag, x, data[x:min(x + h.maxdata, o + l)], x + h.maxdata >= o + l)
        assert h.response()[0] == 0
        with open(path, "rb") as f:  # the last write done: the file may be opened
            f.seek(16 * 4096)
            assert f.read(len(data)) == data
            f.seek(48 * 4096)
            assert f.read(len(data)) == data
        before = hashlib.sha256(open(path, "rb").read()).digest()
        for case in ("offset", "ttag", "last"):
            q = io_queue(port, cntlid, qid=3)
            q.capsule(q.sqe(0x01, 1, (100, 0, 31), 0x5A, len(data)))
            cccid, ttag, off, ln = q.r2t()
            q.h2c_data(ttag, 0, data[:32768], True)
            cccid, ttag, off, ln = q.r2t()
            assert (off, ln) == (32768, 32768)
            if case == "offset":
                q.h2c_data(ttag, off + 4096, data[off + 4096:off + ln], True)
            elif case == "ttag":
                q.h2c_data(ttag ^ 0x80, off, data[off:off + ln], True)  # the tag of R2T 0, already answered
            else:
                q.h2c_data(ttag, off, data[off:off + ln], False)  # LAST_PDU missing at the R2T's end
                q.h2c_data(ttag, off + ln, data[off:off + 4096], True)
            assert q.closed(), case
        assert hashlib.sha256(open(path, "rb").read()).digest() == before
        text = log_text(log)
        assert "expected from 32768" in text and "expected 0x" in text and "LAST_PDU missing" in text, text
        bad = subprocess.run([TARGET, "--ns", path, "--max-r2t-bytes", "1000", "--listen", "127.0.0.1:0"],
                             capture_output=True, text=True, timeout=10)
        assert bad.returncode == 2, bad.stderr


def test_write_log_per_namespace():
    """Each namespace has its own write log (--write-log with %n), holding only its own writes and the
    flushes it received; each, replayed by lcloudctl replay onto the namespace as it was, gives the
    namespace as the target left it."""
    with scratch_dir() as d:
        files = [os.path.join(d, "ns%d" % i) for i in (1, 2)]
        for i, f in enumerate(files):
            with open(f, "wb") as out:
                out.write(bytes([i + 1]) * (1 << 20))
            with open(f + ".base", "wb") as out:
                out.write(bytes([i + 1]) * (1 << 20))
        pattern = os.path.join(d, "ns%n.log")
        errlog = open(os.path.join(d, "err"), "w+")
        p = subprocess.Popen([TARGET, "--listen", "127.0.0.1:0", "--nqn", NQN, "--ns", files[0], "--ns", files[1],
                              "--volatile-write-cache", "on", "--write-log", pattern],
                             stdout=subprocess.PIPE, stderr=errlog, text=True)
        try:
            port = int(p.stdout.readline().split()[1].rsplit(":", 1)[1])
            a, cntlid = admin(port)
            q = io_queue(port, cntlid)
            one, two = os.urandom(16384), os.urandom(8192)
            assert q.command(0x01, nsid=1, cdw=(4, 0, 3), write=one, inline=False)[0] == 0
            assert q.command(0x01, nsid=2, cdw=(10, 0, 1), write=two)[0] == 0
            assert q.command(0x01, nsid=2, cdw=(20, 0, 0 | 1 << 30), write=two[:4096])[0] == 0  # FUA
            assert q.command(0x00, nsid=1)[0] == 0
            assert q.command(0x01, nsid=1, cdw=(30, 0, 1), write=two)[0] == 0
            assert q.command(0x00, nsid=0xFFFFFFFF)[0] == 0
        finally:
            p.kill()
            p.wait()
        logs = [os.path.join(d, "ns1.log"), os.path.join(d, "ns2.log")]
        got = [[(e[0], e[1], e[2]) for e in read_write_log(l)[1]] for l in logs]
        assert got[0] == [(4, 4, 0), (0, 0, 1), (30, 2, 0), (0, 0, 1)], got
        assert got[1] == [(10, 2, 0), (20, 1, 2), (0, 0, 1)], got
        for f, l in zip(files, logs):
            n = len(read_write_log(l)[1])
            out = f + ".replayed"
            r = subprocess.run([os.environ.get("LCLOUDCTL", "lcloudctl"), "replay", "--lba", "4096", l,
                                "--base", f + ".base", "--out", out, "--cut", str(n)], capture_output=True, text=True)
            assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
            assert open(out, "rb").read() == open(f, "rb").read(), f
        # with two namespaces a name without %n would be one file for both: refused before anything is made
        r = subprocess.run([TARGET, "--ns", files[0], "--ns", files[1], "--write-log", os.path.join(d, "one.log"),
                            "--listen", "127.0.0.1:0"], capture_output=True, text=True, timeout=10)
        assert r.returncode == 2 and "%n" in r.stderr and not os.path.exists(os.path.join(d, "one.log")), r.stderr


def test_a_cut_waiting_on_a_writes_data_still_comes():
    """When --cut-after falls on a write and waits for part of its data, the power still goes if a later
    command arrives on another queue first, or if the write's connection closes: never a target that runs
    on past its cut (the host's error recovery closes every queue when one closes)."""
    for how in ("another queue", "its connection closes"):
        for seed in range(1, 40):
            with scratch_dir() as d:
                report = os.path.join(d, "report")
                with target("--cut-after", "1", "--seed", str(seed), "--max-r2t-bytes", "8K",
                            "--power-report", report) as (port, path, p, log):
                    a, cntlid = admin(port)
                    assert a.command(0x09, cdw=(0x07, 1 | 1 << 16))[0] == 0
                    q1, q2 = io_queue(port, cntlid, qid=1), io_queue(port, cntlid, qid=2)
                    assert q1.command(0x02, nsid=1, cdw=(0, 0, 0), read=4096)[0] == 0
                    q1.capsule(q1.sqe(0x01, 1, (16, 0, 7), 0x5A, 32768))
                    try:
                        q1.r2t()
                    except (Closed, ConnectionResetError):
                        p.wait(10)
                        continue  # this seed cut before any data: another one waits for some
                    if how == "another queue":
                        q2.capsule(q2.sqe(0x02, 1, (0, 0, 0), 0x5A, 4096))
                    else:
                        q1.s.close()
                    assert p.wait(10) == 0, (how, log_text(log))
                    text = open(report).read()
            # cut before any of its data came: lost; aborted with its connection: no longer in flight
            want = "1 writes in flight: 0 whole, 1 lost" if how == "another queue" else "0 writes in flight"
            assert want in text, (how, text)
            break
        else:
            raise AssertionError("no seed waited for data")


if __name__ == "__main__":
    main([test_connect_and_properties, test_identify_carries_the_promise, test_no_promise_512, test_admin_commands,
          test_read_write_paths, test_malformed_pdus_close_and_write_nothing, test_bad_options_are_refused,
          test_listens_on_loopback_by_default, test_a_mounted_image_is_refused,
          test_power_cut_keeps_the_promise, test_liar_tears_what_it_promised, test_sigusr1_cuts_the_power,
          test_write_log_and_trace, test_fdp_identify_features_and_logs, test_fdp_writes_are_placed_and_counted,
          test_fdp_off_refuses_placement, test_a_cut_with_a_write_in_flight, test_sigusr1_while_a_writes_data_arrives,
          test_keep_alive_timeout_closes_the_controller, test_several_r2ts_per_write, test_write_log_per_namespace,
          test_a_cut_waiting_on_a_writes_data_still_comes])
