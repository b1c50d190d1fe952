#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Who may connect to lcloud-target, by its own NVMe/TCP host (nvme_tcp_host.py,
written from the specifications): on loopback without a secret only root
(as Linux's kernel host is) and the target's own user, so the same host run
as `nobody` is refused before its ICReq is answered; --allow-host's host NQN
list refuses any other NQN at Connect, admin and I/O queue alike, with the
status Linux's nvmet gives (Connect Invalid Host, naming the host NQN's
bytes); and with --dhchap-secret every queue authenticates by DH-HMAC-CHAP
before anything else (Authentication Required until then): the right secret
is let in, under each hash the host offers and with the controller proven
too (--dhchap-ctrl-secret), a wrong one or a tampered message gets
AUTH_Failure1 and the connection closes, and a secret given on the command
line or in a file others can read is refused at start."""
import os
import pwd
import struct
import subprocess
import sys

from hostlib import main, scratch_dir, need_root
from nvme_tcp_host import TARGET, HOSTNQN, Host, target, log_text, admin, io_queue, dhchap_secret

HERE = os.path.dirname(os.path.abspath(__file__))
OTHER_HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:99999999-2222-3333-4444-555555555555"

# The host as another user: ICReq and Connect, then one line saying how far it got.
AS_USER = r'''
import sys
sys.path.insert(0, sys.argv[1])
from nvme_tcp_host import Host, Closed
try:
    h = Host(int(sys.argv[2]))
except (Closed, ConnectionResetError, OSError) as e:
    print("refused", type(e).__name__)
    sys.exit(0)
st, dw0, _, _ = h.connect()
if len(sys.argv) > 3 and st == 0:
    print("authenticated" if h.authenticate(sys.argv[3]) == "authenticated" else "auth-failed")
else:
    print("connected" if st == 0 else "status 0x%x" % st)
'''


def secret_file(d, name, secret, mode=0o600):
    path = os.path.join(d, name)
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode), "w") as f:
        f.write(secret + "\n")
    os.chmod(path, mode)
    return path


def as_user(user, port, secret=None):
    pw = pwd.getpwnam(user)
    args = ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid, "--clear-groups", "--",
            sys.executable, "-c", AS_USER, HERE, str(port)] + ([secret] if secret else [])
    r = subprocess.run(args, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_loopback_lets_in_root_only():
    """The same host code: as root it connects; as nobody the target closes the socket unanswered and says
    whose it was. A secret replaces the check: nobody with it is let in."""
    need_root()
    with target() as (port, path, p, log):
        assert as_user("root", port) == "connected"
        assert as_user("nobody", port).startswith("refused"), log_text(log)
        assert "belongs to uid %d (nobody)" % pwd.getpwnam("nobody").pw_uid in log_text(log), log_text(log)
        a, cntlid = admin(port)  # root, again: it still serves
        assert a.command(0x18)[0] == 0
    with scratch_dir() as d:
        secret = dhchap_secret(os.urandom(32))
        with target("--dhchap-secret", secret_file(d, "key", secret)) as (port, path, p, log):
            assert as_user("nobody", port, secret) == "authenticated", log_text(log)
            assert as_user("nobody", port, dhchap_secret(os.urandom(32))) == "auth-failed"


def test_allowed_host_nqns():
    """--allow-host: another NQN is refused at Connect with Connect Invalid Host (0x184, DNR), the response
    naming byte 512 of Connect's data (the host NQN), on the admin queue and on an I/O queue alike."""
    with target("--allow-host", HOSTNQN, "--allow-host", "nqn.2014-08.org.example:spare") as (port, path, p, log):
        a, cntlid = admin(port)
        assert a.command(0x09, cdw=(0x07, 1 | 1 << 16))[0] == 0
        st, dw0, _, _ = Host(port, hostnqn=OTHER_HOSTNQN).connect()
        assert (st & 0x7FF, st & 0x4000, dw0) == (0x184, 0x4000, 1 << 16 | 512), (hex(st), hex(dw0))
        st, dw0, _, _ = Host(port, hostnqn=OTHER_HOSTNQN).connect(qid=1, cntlid=cntlid, sqsize=127)
        assert (st & 0x7FF, dw0) == (0x184, 1 << 16 | 512), (hex(st), hex(dw0))
        q = io_queue(port, cntlid)
        assert q.command(0x02, nsid=1, cdw=(0, 0, 0), read=4096)[0] == 0
        assert log_text(log).count("is not on the --allow-host list") == 2, log_text(log)


def test_dhchap_right_and_wrong_secrets():
    """With --dhchap-secret: Connect says authentication is required (ATR, bit 17 of its result); anything but
    Authentication Send/Receive gets Authentication Required (0x191); a wrong secret gets AUTH_Failure1
    (reason explanation 1, failed) and the connection closes; the right one, transformed with SHA-256 as
    its "DHHC-1:01:" says, opens the admin queue and each I/O queue, which authenticates on its own."""
    with scratch_dir() as d:
        secret = dhchap_secret(os.urandom(32), transform=1)
        with target("--dhchap-secret", secret_file(d, "key", secret)) as (port, path, p, log):
            h = Host(port)
            st, dw0, _, _ = h.connect()
            assert st == 0 and dw0 & (1 << 17), hex(dw0)
            assert h.prop_set(0x14, 0x460001) & 0x7FF == 0x191
            assert h.command(0x06, cdw=(1,), read=4096)[0] & 0x7FF == 0x191
            assert h.authenticate(dhchap_secret(os.urandom(32), transform=1)) == ("failure1", 1)
            assert h.closed(), "a failed authentication leaves the connection open"
            assert "closing: authentication failed: the host's response does not match the secret" in \
                log_text(log), log_text(log)
            a, cntlid = admin(port, secret=secret)
            assert a.chosen_hash == 1  # SHA-256, Linux's nvmet's default, when offered
            assert a.command(0x09, cdw=(0x07, 1 | 1 << 16))[0] == 0
            q = Host(port)
            st, dw0, _, _ = q.connect(qid=1, cntlid=cntlid, sqsize=127)
            assert st == 0 and dw0 & (1 << 17), hex(dw0)
            assert q.command(0x02, nsid=1, cdw=(0, 0, 0), read=4096)[0] & 0x7FF == 0x191
            assert q.authenticate(secret) == "authenticated"
            st, _, _, data = q.command(0x02, nsid=1, cdw=(0, 0, 0), read=4096)
            assert st == 0 and data == bytes(range(256)) * 16
            # the hash the host offers: SHA-384 or SHA-512 alone
            for hashid in (2, 3):
                h = Host(port)
                assert h.connect()[0] == 0
                assert h.authenticate(secret, hashes=(hashid,)) == "authenticated" and h.chosen_hash == hashid
            assert "authenticated (DH-HMAC-CHAP, hmac(sha256), NULL group)" in log_text(log)
            assert p.poll() is None


def test_dhchap_both_ways():
    """With --dhchap-ctrl-secret the target proves itself to a host that asks (C2, S2): its response is the
    HMAC the specification defines, under the controller secret transformed for the subsystem NQN; a host
    holding another controller secret sees the mismatch and says so (AUTH_Failure2), and the target closes.
    Without a controller secret a host that asks is refused."""
    with scratch_dir() as d:
        host, ctrl = dhchap_secret(os.urandom(48), transform=2), dhchap_secret(os.urandom(64), transform=3)
        with target("--dhchap-secret", secret_file(d, "host", host), "--dhchap-ctrl-secret",
                    secret_file(d, "ctrl", ctrl)) as (port, path, p, log):
            a, cntlid = admin(port, secret=host, ctrl_secret=ctrl)
            assert a.command(0x18)[0] == 0
            h = Host(port)
            assert h.connect()[0] == 0
            assert h.authenticate(host, ctrl_secret=dhchap_secret(os.urandom(64))) == "controller-mismatch"
            assert h.closed(), log_text(log)
            assert "the host gave up (AUTH_Failure2" in log_text(log), log_text(log)
            assert "the controller too" in log_text(log)
        with target("--dhchap-secret", secret_file(d, "host", host)) as (port, path, p, log):
            h = Host(port)
            assert h.connect()[0] == 0
            assert h.authenticate(host, ctrl_secret=ctrl) == ("failure1", 1)
            assert h.closed()
            assert "no --dhchap-ctrl-secret" in log_text(log), log_text(log)


def test_dhchap_hostile_messages():
    """Authentication messages are a stranger's: each broken one gets AUTH_Failure1 with the reason the
    specification names (or a status for a broken command), the connection closes, and the target lives."""
    def short_negotiate(name, msg):
        return msg[:40] if name == "negotiate" else msg

    def no_null_group(name, msg):
        return msg[:8 + 4 + 30] + b"\x01" + msg[8 + 4 + 31:] if name == "negotiate" else msg

    def other_transaction(name, msg):
        return msg[:4] + b"\x99\x99" + msg[6:] if name == "reply" else msg

    def wrong_hash_length(name, msg):
        return msg[:6] + b"\x10" + msg[7:] if name == "reply" else msg

    def secure_channel(name, msg):
        return msg[:6] + b"\x01" + msg[7:] if name == "negotiate" else msg

    def dh_value(name, msg):
        return msg[:10] + struct.pack("<H", 8) + msg[12:] + bytes(8) if name == "reply" else msg

    cases = [(short_negotiate, 6), (no_null_group, 5), (other_transaction, 6), (wrong_hash_length, 6),
             (secure_channel, 3), (dh_value, 6)]
    with scratch_dir() as d:
        secret = dhchap_secret(os.urandom(32), transform=0)
        with target("--dhchap-secret", secret_file(d, "key", secret)) as (port, path, p, log):
            for tamper, reason in cases:
                h = Host(port)
                assert h.connect()[0] == 0
                assert h.authenticate(secret, tamper=tamper) == ("failure1", reason), tamper.__name__
                assert h.closed(), tamper.__name__
            # broken commands: the wrong security protocol, a length that is not the data's, a huge one
            h = Host(port)
            assert h.connect()[0] == 0
            assert h.command(0x7F, cdw=(1 << 8 | 1 << 16 | 0xEA << 24, 72), write=bytes(72), fctype=0x05)[0] \
                & 0x7FF == 0x002
            assert h.command(0x7F, cdw=(Host.AUTH_CDW10, 80), write=bytes(72), fctype=0x05)[0] & 0x7FF == 0x00F
            assert h.command(0x7F, cdw=(Host.AUTH_CDW10, 1 << 20), read=4096, fctype=0x06)[0] & 0x7FF == 0x002
            # a Receive with nothing to answer: a Failure1, and the connection closes
            st, msg = h.auth_receive()
            assert st == 0 and msg[0:2] == b"\x00\xf1" and msg[7] == 7, msg[:8].hex()
            assert h.closed()
            a, _ = admin(port, secret=secret)  # still serving, and the right secret still works
            assert p.poll() is None


def test_secrets_are_checked_at_start():
    """A secret on the command line (every local user can read it there), a secret file others may read,
    a damaged secret, and a controller secret without a host one are refused before listening."""
    with scratch_dir() as d:
        ns = os.path.join(d, "ns")
        with open(ns, "wb") as f:
            f.truncate(1 << 20)
        good = dhchap_secret(os.urandom(32))
        raw = good[:20] + ("A" if good[20] != "A" else "B") + good[21:]
        cases = [(["--dhchap-secret", good], "not the secret itself"),
                 (["--dhchap-secret", secret_file(d, "open", good, 0o644)], "chmod 600"),
                 (["--dhchap-secret", secret_file(d, "bad", raw)], "CRC-32"),
                 (["--dhchap-secret", secret_file(d, "len", "DHHC-1:01:" + "QUFB" * 3 + ":")], "32, 48 or 64"),
                 (["--dhchap-secret", secret_file(d, "hash", good.replace(":01:", ":07:"))], "DHHC-1:XX"),
                 (["--dhchap-ctrl-secret", secret_file(d, "ctrl", good)], "needs --dhchap-secret")]
        for args, words in cases:
            r = subprocess.run([TARGET, "--ns", ns, "--listen", "127.0.0.1:0"] + args, capture_output=True,
                               text=True, timeout=10)
            assert r.returncode == 2 and words in r.stderr and "listening" not in r.stdout, (args, r.stderr)


if __name__ == "__main__":
    main([test_loopback_lets_in_root_only, test_allowed_host_nqns, test_dhchap_right_and_wrong_secrets,
          test_dhchap_both_ways, test_dhchap_hostile_messages, test_secrets_are_checked_at_start])
