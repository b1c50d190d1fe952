# SPDX-License-Identifier: LGPL-2.1-or-later
"""A small NVMe/TCP host written from the transport and base specifications
(not from lcloud-target's code), for the tests that drive lcloud-target: a
queue's connection (ICReq, Fabrics Connect, Property Get/Set), commands with
their data by every path (in the capsule, R2T and H2CData, C2HData), and
NVMe in-band authentication with DH-HMAC-CHAP and the NULL group, as the
Base Specification's Authentication section defines its messages and
responses. Also lcloud-target itself on a scratch file, and its log."""
import base64
import contextlib
import hashlib
import hmac
import os
import struct
import subprocess
import zlib

from hostlib import scratch_dir

TARGET = os.environ.get("LCLOUD_TARGET", "lcloud-target")
NQN = "nqn.2026-12.org.liblcloud:test"
HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555"
HOSTID = bytes.fromhex("11111111222233334444555555555555")
HASHES = {1: "sha256", 2: "sha384", 3: "sha512"}


class Closed(Exception):
    pass


class Host:
    """One NVMe/TCP queue: a connection, ICReq done, Connect not yet."""

    def __init__(self, port, digests=0, maxr2t=0, hostnqn=HOSTNQN, icreq=True):
        self.s = socket_to(port)
        self.cid = 0
        self.hostnqn = hostnqn
        self.subnqn = NQN
        if not icreq:
            return
        icreq = struct.pack("<BBBBI", 0x00, 0, 128, 0, 128) + struct.pack("<HBBI", 0, 0, digests, maxr2t)
        self.s.sendall(icreq.ljust(128, b"\0"))
        t, _, hlen, _, plen, body = self.pdu()
        assert (t, hlen, plen) == (0x01, 128, 128), (t, hlen, plen)
        self.pfv, self.cpda, self.dgst, self.maxdata = struct.unpack_from("<HBBI", body, 0)

    def recv_exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise Closed()
            buf += chunk
        return buf

    def pdu(self):
        ch = self.recv_exact(8)
        t, flags, hlen, pdo, plen = struct.unpack("<BBBBI", ch)
        return t, flags, hlen, pdo, plen, self.recv_exact(plen - 8)

    def closed(self, seconds=5):
        """True when the target closes the connection (EOF) within SECONDS."""
        import socket
        self.s.settimeout(seconds)
        try:
            while True:
                if not self.s.recv(4096):
                    return True
        except (ConnectionResetError, BrokenPipeError):
            return True
        except socket.timeout:
            return False

    def capsule(self, sqe, inline=b""):
        pdo = 72 if inline else 0
        self.s.sendall(struct.pack("<BBBBI", 0x04, 0, 72, pdo, 72 + len(inline)) + sqe + inline)

    def sqe(self, opc, nsid=0, cdw=(), sgl_type=0x5A, sgl_len=0, fctype=None):
        self.cid = (self.cid + 1) & 0xFFFF
        b = bytearray(64)
        b[0] = opc
        b[1] = 0x40  # SGL
        struct.pack_into("<HI", b, 2, self.cid, nsid)
        if fctype is not None:
            b[4] = fctype
        struct.pack_into("<QI", b, 24, 0, sgl_len)
        b[39] = sgl_type
        for i, v in enumerate(cdw):
            struct.pack_into("<I", b, 40 + 4 * i, v & 0xFFFFFFFF)
        return b

    def response(self):
        """(status without phase, dw0, dw1, data from C2HData) of the next completion."""
        data = b""
        while True:
            t, flags, hlen, pdo, plen, body = self.pdu()
            if t == 0x07:
                cccid, ttag, off, ln = struct.unpack_from("<HHII", body, 0)
                assert off == len(data), (off, len(data))
                data += body[pdo - 8:pdo - 8 + ln]
                if flags & 0x08:
                    return 0, 0, 0, data
                continue
            assert t == 0x05, "PDU type 0x%02x where a response belongs" % t
            dw0, dw1, sqhd, sqid, cid, status = struct.unpack_from("<IIHHHH", body, 0)
            assert cid == self.cid, (cid, self.cid)
            return status >> 1, dw0, dw1, data

    def command(self, opc, nsid=0, cdw=(), read=0, write=None, inline=True, fctype=None):
        """Sends a command; WRITE data in the capsule (INLINE) or through R2T; READ bytes come back."""
        if write is not None and inline:
            self.capsule(self.sqe(opc, nsid, cdw, 0x01, len(write), fctype), write)
        elif write is not None:
            # the data as the R2Ts ask for it, one after the other, until the response comes
            self.capsule(self.sqe(opc, nsid, cdw, 0x5A, len(write), fctype))
            sent = 0
            while sent < len(write):
                cccid, ttag, r2to, r2tl = self.r2t()
                assert (cccid, r2to) == (self.cid, sent) and 0 < r2tl <= len(write) - sent, (cccid, r2to, r2tl)
                for off in range(r2to, r2to + r2tl, self.maxdata):
                    chunk = write[off:min(off + self.maxdata, r2to + r2tl)]
                    self.h2c_data(ttag, off, chunk, off + len(chunk) == r2to + r2tl)
                sent += r2tl
        else:
            self.capsule(self.sqe(opc, nsid, cdw, 0x5A, read, fctype))
        return self.response()

    def h2c_data(self, ttag, offset, chunk, last, cid=None):
        self.s.sendall(struct.pack("<BBBBIHHII", 0x06, 0x04 if last else 0, 24, 24, 24 + len(chunk),
                                   self.cid if cid is None else cid, ttag, offset, len(chunk)) + b"\0" * 4 + chunk)

    def r2t(self):
        """(cccid, ttag, offset, length) of the next PDU, which must be an R2T."""
        t, flags, hlen, pdo, plen, body = self.pdu()
        assert t == 0x09, "expected R2T, got type 0x%02x" % t
        return struct.unpack_from("<HHII", body, 0)

    def connect(self, qid=0, cntlid=0xFFFF, sqsize=31, nqn=NQN, cattr=0, kato=30000):
        data = bytearray(1024)
        data[0:16] = HOSTID
        struct.pack_into("<H", data, 16, cntlid)
        data[256:256 + len(nqn)] = nqn.encode()
        data[512:512 + len(self.hostnqn)] = self.hostnqn.encode()
        self.subnqn = nqn
        cdw10 = 0 | qid << 16
        cdw11 = sqsize | cattr << 16
        return self.command(0x7F, cdw=(cdw10, cdw11, kato), write=bytes(data), fctype=0x01)

    def prop_get(self, offset, eight=False):
        st, dw0, dw1, _ = self.command(0x7F, cdw=(1 if eight else 0, offset), fctype=0x04)
        assert st == 0, hex(st)
        return dw0 | dw1 << 32

    def prop_set(self, offset, value):
        st, _, _, _ = self.command(0x7F, cdw=(0, offset, value, 0), fctype=0x00)
        return st

    # NVMe in-band authentication: Authentication Send (0x05) and Receive (0x06), SECP 0xE9, SPSP0 = SPSP1 = 1
    AUTH_CDW10 = 1 << 8 | 1 << 16 | 0xE9 << 24

    def auth_send(self, msg):
        return self.command(0x7F, cdw=(self.AUTH_CDW10, len(msg)), write=msg, fctype=0x05)[0]

    def auth_receive(self, al=4096):
        st, _, _, data = self.command(0x7F, cdw=(self.AUTH_CDW10, al), read=al, fctype=0x06)
        return st, data

    def authenticate(self, secret, hashes=(1, 2, 3), dh_groups=(0,), ctrl_secret=None, tid=0x1234, tamper=None):
        """DH-HMAC-CHAP with the NULL group. Returns "authenticated", or ("failure1", reason explanation) when
        the target sends AUTH_Failure1, or "controller-mismatch" when its response to C2 is wrong (a Failure2
        is then sent). TAMPER(name, message) may change each message before it goes."""
        tamper = tamper or (lambda name, msg: msg)
        idlist = bytearray(60)
        idlist[0:len(hashes)] = bytes(hashes)
        idlist[30:30 + len(dh_groups)] = bytes(dh_groups)
        neg = struct.pack("<BBHHBB", 0x00, 0x00, 0, tid, 0, 1) + bytes([1, 0, len(hashes), len(dh_groups)]) + idlist
        assert self.auth_send(tamper("negotiate", neg)) == 0
        st, ch = self.auth_receive()
        assert st == 0, hex(st)
        if ch[0:2] == b"\x00\xf1":
            return ("failure1", ch[7])
        atype, aid, _, t, hl, _, hashid, dhgid, dhvlen, s1 = struct.unpack_from("<BBHHBBBBHI", ch, 0)
        assert (atype, aid, t, dhgid, dhvlen) == (1, 1, tid, 0, 0), ch[:16].hex()
        assert hl == hashlib.new(HASHES[hashid]).digest_size and s1 != 0, (hl, hashid, s1)
        self.chosen_hash = hashid
        c1 = ch[16:16 + hl]
        r1 = dhchap_response(secret, hashid, c1, s1, tid, b"HostHost", self.hostnqn, self.subnqn)
        if ctrl_secret:
            c2, s2, cvalid = os.urandom(hl), int.from_bytes(os.urandom(4), "little") | 1, 1
        else:
            c2, s2, cvalid = bytes(hl), 0, 0
        reply = struct.pack("<BBHHBBBBHI", 1, 2, 0, tid, hl, 0, cvalid, 0, 0, s2) + r1 + c2
        assert self.auth_send(tamper("reply", reply)) == 0
        st, s1msg = self.auth_receive()
        assert st == 0, hex(st)
        if s1msg[0:2] == b"\x00\xf1":
            return ("failure1", s1msg[7])
        atype, aid, _, t, shl, _, rvalid = struct.unpack_from("<BBHHBBB", s1msg, 0)
        assert (atype, aid, t, shl) == (1, 3, tid, hl), s1msg[:16].hex()
        if not ctrl_secret:
            assert rvalid == 0
            return "authenticated"
        want = dhchap_response(ctrl_secret, hashid, c2, s2, tid, b"Controller", self.subnqn, self.hostnqn)
        if rvalid != 1 or s1msg[16:16 + hl] != want:
            fail2 = struct.pack("<BBHHBB", 0x00, 0xF0, 0, tid, 1, 1)
            self.auth_send(fail2)
            return "controller-mismatch"
        assert self.auth_send(struct.pack("<BBHH", 1, 4, 0, tid) + bytes(10)) == 0
        return "authenticated"


def socket_to(port):
    import socket
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def dhchap_secret(key, transform=1):
    """A secret as nvme gen-dhchap-key prints it: DHHC-1:XX:base64(key and its CRC-32, little-endian):"""
    return "DHHC-1:%02d:%s:" % (transform, base64.b64encode(key + zlib.crc32(key).to_bytes(4, "little")).decode())


def dhchap_key(secret):
    """(key, transform hash) of a DHHC-1 secret."""
    _, xx, b64, _ = secret.split(":")
    raw = base64.b64decode(b64)
    assert zlib.crc32(raw[:-4]).to_bytes(4, "little") == raw[-4:]
    return raw[:-4], int(xx)


def dhchap_response(secret, hashid, challenge, seq, tid, role, first, second):
    """HMAC(K', C | S | T | 0 | ROLE | FIRST | 0 | SECOND), K' the key transformed for FIRST (the NQN of who
    proves itself) with the secret's own hash, unless that is 00."""
    key, xx = dhchap_key(secret)
    if xx:
        key = hmac.new(key, first.encode() + b"NVMe-over-Fabrics", HASHES[xx]).digest()
    msg = challenge + struct.pack("<IHB", seq, tid, 0) + role + first.encode() + b"\0" + second.encode()
    return hmac.new(key, msg, HASHES[hashid]).digest()


def pattern(size=1 << 20):
    """What target() writes into a namespace's file before the target starts."""
    return bytes(range(256)) * (size // 256)


@contextlib.contextmanager
def target(*args, size=1 << 20, listen="127.0.0.1:0", folder=None, preexec_fn=None, user=None):
    """lcloud-target on an ephemeral loopback port over a SIZE-byte file of a known pattern (pattern()), in
    FOLDER (a scratch folder by default), run as USER (setpriv) when given. While it runs, opening the file
    is a new user of its storage: the target write-protects the namespace (test_held.py), so a test reads
    the file only after its last write, and knows what was there before."""
    with contextlib.ExitStack() as stack:
        d = folder or stack.enter_context(scratch_dir())
        path = os.path.join(d, "ns1")
        with open(path, "wb") as f:
            f.write(pattern(size))
        log = open(os.path.join(d, "log"), "w+")
        cmd = [TARGET, "--listen", listen, "--nqn", NQN, "--ns", path] + list(args)
        if user:
            import pwd
            pw = pwd.getpwnam(user)
            os.chown(path, pw.pw_uid, pw.pw_gid)
            cmd = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid, "--clear-groups", "--"] + cmd
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, preexec_fn=preexec_fn)
        try:
            line = p.stdout.readline()
            assert line.startswith("listening "), (line, open(log.name).read())
            port = int(line.split()[1].rsplit(":", 1)[1])
            yield port, path, p, log
        finally:
            p.kill()
            p.wait()
            log.close()


def log_text(log):
    log.flush()
    with open(log.name) as f:
        return f.read()


def admin(port, secret=None, **kw):
    h = Host(port, **{k: v for k, v in kw.items() if k == "hostnqn"})
    st, cntlid, _, _ = h.connect()
    assert st == 0, hex(st)
    cntlid &= 0xFFFF
    if secret:
        assert h.authenticate(secret, **{k: v for k, v in kw.items() if k != "hostnqn"}) == "authenticated"
    assert h.prop_set(0x14, 0x460001) == 0  # CC: EN, IOSQES 6, IOCQES 4
    assert h.prop_get(0x1C) & 1 == 1        # CSTS.RDY
    return h, cntlid


def io_queue(port, cntlid, qid=1, cattr=0, secret=None, maxr2t=0, **kw):
    h = Host(port, maxr2t=maxr2t, **{k: v for k, v in kw.items() if k == "hostnqn"})
    st, dw0, _, _ = h.connect(qid=qid, cntlid=cntlid, sqsize=127, cattr=cattr)
    assert st == 0, hex(st)
    if secret:
        assert h.authenticate(secret, **{k: v for k, v in kw.items() if k != "hostnqn"}) == "authenticated"
    return h


def identify(h, cns, nsid=0):
    st, _, _, data = h.command(0x06, nsid=nsid, cdw=(cns,), read=4096)
    return st, data


def rss_kib(pid):
    """The process's resident set, from /proc/PID/status."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS for %d" % pid)
