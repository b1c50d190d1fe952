#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the fuzz harnesses' seed corpora into OUT/HARNESS/ from the captured
data in tests/vm/captures and tests/unit/fixtures, in each harness's input
format (see the harnesses' opening comments and fuzz_common.h)."""
import base64
import hashlib
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, '..', 'unit', 'fixtures')
CAPTURES = os.path.join(HERE, '..', 'vm', 'captures')
# real files: 'probe --save' and 'probe --format json' of the nvme-qemu and scsi fixtures (--sysroot),
# and the record of 'torture run --path plain_direct --pages 8 --page-size 4K --writes 12 --seed 3'
SEEDS = os.path.join(HERE, 'seeds')


def record(kind, name, data=b''):
    if isinstance(data, str):
        data = data.encode()
    assert len(data) < 65536
    return kind.encode() + name.encode() + b'\0' + struct.pack('<H', len(data)) + data


def folder_archive(folder):
    """The files directly in FOLDER, as 'f' records."""
    out = b''
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, 'rb') as f:
                out += record('f', name, f.read())
    return out


def tree_archive(root):
    """Every folder, file and symlink under ROOT, parents first."""
    out = b''
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, root)
        for name in dirnames + sorted(filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            if os.path.islink(path):
                out += record('l', rel, os.readlink(path))
            elif os.path.isdir(path):
                out += record('d', rel)
            elif os.path.isfile(path):
                with open(path, 'rb') as f:
                    out += record('f', rel, f.read())
    return out


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def trees():
    return sorted(d for d in os.listdir(FIXTURES) if os.path.isdir(os.path.join(FIXTURES, d, 'sys')))


def capture_folders(kind):
    """(tree, NAME, folder) for every FIXTURES/TREE/KIND/NAME."""
    for tree in trees():
        base = os.path.join(FIXTURES, tree, kind)
        if os.path.isdir(base):
            for name in sorted(os.listdir(base)):
                yield tree, name, os.path.join(base, name)


def seeds_nvme_identify():
    for tree, name, folder in capture_folders('nvme-data'):
        ctrl = os.path.join(folder, 'id-ctrl.bin')
        ns = os.path.join(folder, 'id-ns.bin')
        c = read(ctrl) if os.path.isfile(ctrl) else b''
        n = read(ns) if os.path.isfile(ns) else b''
        yield struct.pack('<H', len(c)) + c + n
    for lbs in (512, 4096):
        c = read(os.path.join(CAPTURES, 'qemu-nvme-lbs%d-id-ctrl.bin' % lbs))
        n = read(os.path.join(CAPTURES, 'qemu-nvme-lbs%d-id-ns.bin' % lbs))
        yield struct.pack('<H', len(c)) + c + n
    # the Linux cloud extension (man/lcloud-extension.7) in the vendor area, as lcloud-target fills it
    c = bytearray(read(os.path.join(CAPTURES, 'qemu-nvme-lbs4096-id-ctrl.bin')))
    ext = b'LNXCLOUD' + struct.pack('<HHIIIIH', 1, 64, 0xF, 16384, 32768, 0, 2) + bytes(2) + bytes([1, 3])
    c[3072:3072 + len(ext)] = ext
    yield struct.pack('<H', len(c)) + bytes(c) + n


def seeds_nvme_hints():
    for tree, name, folder in capture_folders('nvme-data'):
        yield folder_archive(folder)


def seeds_scsi_pages():
    for tree, name, folder in capture_folders('scsi-data'):
        yield folder_archive(folder)
    for prefix in ('qemu-scsihd-gpd', 'scsidebug-4k'):
        out = record('f', 'inquiry.bin', read(os.path.join(CAPTURES, prefix + '-inquiry.bin')))
        for page in ('00', '83', 'b0', 'b1'):
            out += record('f', 'vpd-%s.bin' % page, read(os.path.join(CAPTURES, '%s-vpd-%s.bin' % (prefix, page))))
        yield out


def seeds_mountinfo():
    yield (b'22 27 0:21 / /proc rw,relatime - proc proc rw\n'
           b'36 35 98:0 /mnt1 /mnt/my\\040data rw,noatime master:1 shared:7 - ext3 /dev/root rw,errors=continue\n'
           b'29 1 259:2 / / rw,relatime shared:1 - xfs /dev/nvme0n1p2 rw,attr2,inode64,logbufs=8\n'
           b'40 29 7:0 / /mnt/scratch rw,relatime - ext4 /dev/loop0 rw\n'
           b'41 29 252:0 / /srv/db rw,noatime - xfs /dev/mapper/vg-data rw,sunit=1024,swidth=4096\n')
    if os.path.isfile('/proc/self/mountinfo'):
        yield read('/proc/self/mountinfo')


def seeds_overlay_options():
    # as Linux 6.18 writes them (mountinfo's octal escapes undone): several lowers, escapes, data-only layers
    yield (b'rw,lowerdir=/tmp/gx/ov/l1:/tmp/gx/ov/l2,upperdir=/tmp/gx/ov/u,workdir=/tmp/gx/ov/w,uuid=on\n'
           b'rw,lowerdir=/a\\:b:/c\\\\d,upperdir=/tmp/gx/ov/u p\\,x\\:y,workdir=/w\n'
           b'rw,lowerdir=/tmp/gx/ov/l1::/tmp/gx/ov/d,upperdir=/u,workdir=/w,redirect_dir=on,metacopy=on\n'
           b'ro,lowerdir=l:m,userxattr\n')
    if os.path.isfile('/proc/self/mountinfo'):
        lines = [l.split(b' - ', 1)[1].split(b' ', 2)[2] for l in read('/proc/self/mountinfo').splitlines()
                 if b' - overlay ' in l]
        if lines:
            yield b'\n'.join(lines) + b'\n'
def seeds_proc_lines():
    yield b'\0pos:\t0\nflags:\t0100002\nmnt_id:\t26\nino:\t10960972\n'
    yield b'\0pos:\t0\nflags:\t02\nmnt_id:\t16\nino:\t1057\ntfd:        5 events:       19 data: 5\n'
    yield (b'\1' + b'55d0c000-55d0d000 r--p 00000000 fd:01 1310731 /usr/sbin/mariadbd\n'
           b'7f1c2a000000-7f1c2a021000 rw-s 00004000 fd:01 10960972   /var/lib/mysql/ib_logfile0\n'
           b'7ffd1000-7ffd2000 rw-p 00000000 00:00 0 [stack]\n')
    if os.path.isfile('/proc/self/maps'):
        yield b'\1' + read('/proc/self/maps')
    yield (b'\2' + b'change@/devices/virtual/block/loop7\0ACTION=change\0DEVPATH=/devices/virtual/block/loop7\0'
           b'SUBSYSTEM=block\0DISK_MEDIA_CHANGE=1\0MAJOR=7\0MINOR=448\0DEVNAME=loop7\0DEVTYPE=disk\0SEQNUM=5120\0')
    yield b'\2' + b'add@/devices/virtual/net/veth0\0ACTION=add\0SUBSYSTEM=net\0INTERFACE=veth0\0'


def seeds_dm_table():
    # tree 0: dm-stack (dm-0 over sdb1, sdc1); tree 1: stacks (dm-0 over nvme4n1)
    yield b'\0' + b'0 1048576 linear 8:17 0\n1048576 1048576 linear 8:33 3\n'
    yield b'\1' + b'0 2048 linear 259:4 0\n2048 2048 linear 259:4 8200\n'
    yield b'\1' + b'0 8192 striped 2 128 259:4 0 259:4 4096\n'
    yield b'\0' + b'0 2097152 striped 2 32 8:17 0 8:33 2048\n'
    yield b'\0' + b'0 2097152 linear 8:17 2048\n'
    # crypt lines as Linux 7.3 prints them (the key in hex, or named in the keyring), with and without options
    yield b'\1' + (b'0 8192 crypt aes-xts-plain64 ' + b'0123456789abcdef' * 4 + b' 0 259:4 4096\n')
    yield b'\1' + b'0 8192 crypt aes-xts-plain64 :64:logon:cryptsetup:x 0 259:4 0 3 allow_discards sector_size:4096 ' \
                   b'no_write_workqueue\n'
    yield b'\1' + b'0 8192 crypt capi:authenc(hmac(sha256),xts(aes))-random - 0 259:4 0 1 integrity:28:aead\n'
    yield b'\0' + b'0 1048576 integrity 8:17 0 28 J 2 internal_hash:sha256:00112233 journal_crypt:ctr(aes):aabb\n'
    yield b'\1' + b'error'


def seeds_sysroot():
    for tree in trees():
        yield tree_archive(os.path.join(FIXTURES, tree))


def log_entry(sector, nr_sectors, flags, data=b'', ss=512, mark=b''):
    """One dm-log-writes entry: a header sector (mark text after the 32-byte header), then the data."""
    head = struct.pack('<QQQQ', sector, nr_sectors, flags, len(mark)) + mark
    return head + b'\0' * (ss - len(head)) + data


def seeds_writelog():
    """Crafted logs of each entry kind, with stamped-looking and plain data, in 512 and 4096-byte sectors."""
    for ss in (512, 4096):
        entries = [log_entry(8, 2, 0, b'\xa5' * 2 * ss, ss), log_entry(0, 0, 1, ss=ss),
                   log_entry(16, 4, 2, b'\x5a' * 4 * ss, ss), log_entry(32, 8, 4, ss=ss),
                   log_entry(0, 0, 8, ss=ss, mark=b'fuzz-mark')]
        for n in (0, 1, len(entries)):
            sb = struct.pack('<QQQI', 0x6a736677736872, 1, n, ss)
            yield bytes([n % 4]) + sb + b'\0' * (ss - len(sb)) + b''.join(entries[:n])
            yield bytes([0x80 | (n % 4)]) + sb + b'\0' * (ss - len(sb)) + b''.join(entries)
    # as lcloud-target writes one: a write, Write Zeroes of a whole 64 GiB namespace (DISCARD and FUA, one
    # sector), deallocated ranges (DISCARD), a flush, and a DISCARD whose range runs to 2^64 bytes
    ss = 4096
    entries = [log_entry(8, 4, 0, b'\x5a' * 4 * ss, ss), log_entry(0, 1 << 24, 4 | 2, ss=ss),
               log_entry(100, 2, 4, ss=ss), log_entry(300, 65536, 4, ss=ss), log_entry(0, 0, 1, ss=ss),
               log_entry((1 << 52) - 1, 1, 4, ss=ss)]
    sb = struct.pack('<QQQI', 0x6a736677736872, 1, len(entries), ss)
    yield bytes([1]) + sb + b'\0' * (ss - len(sb)) + b''.join(entries)


def seeds_torture_record():
    """The real record, cut short, with a torn tail, and with its geometry claiming 2^24 pages of 1 MiB."""
    rec = read(os.path.join(SEEDS, 'plain-direct-8x4k.rec'))
    yield rec
    yield rec[:64]
    yield rec + rec[64:94]
    yield rec[:len(rec) // 2] + b'\xff' * 64 + rec[len(rec) // 2:]
    head = bytearray(rec[:64])
    struct.pack_into('<QQ', head, 32, 1 << 20, 1 << 24)
    struct.pack_into('<I', head, 60, 0)
    struct.pack_into('<I', head, 60, crc32c(bytes(head)))
    yield bytes(head)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def seeds_fingerprint():
    """The real fingerprint alone, against itself changed, and the shapes that once crashed diff."""
    fp = read(os.path.join(SEEDS, 'nvme-qemu.fp'))
    yield fp
    yield fp + b'\0' + fp.replace(b'"rwf_atomic"', b'"rwf_atomic_old"', 1)
    yield fp + b'\0' + fp.replace(b'"no"', b'"unknown"', 1)
    for hostile in (b'{"kind":null,"probe":{}}', b'{"kind":"lcloud-fingerprint","probe":{"layers":{}}}',
                    b'{"kind":"lcloud-fingerprint","probe":{"layers":[{"layer":"disk","name":"x"}]}}',
                    b'{"kind":"lcloud-fingerprint","probe":{"verdict":{"buffered":{"above_max":1}}}}'):
        yield hostile
        yield fp + b'\0' + hostile


def seeds_probe_model():
    """The real probes of an NVMe namespace and a SCSI disk, and the shapes that once crashed --model-from."""
    for name in ('nvme-qemu-probe.json', 'scsi-sda-probe.json'):
        yield read(os.path.join(SEEDS, name))
    yield b'{"probes":[{"layers":[{"layer":null}]}]}'
    yield b'{"probes":{}}'
    yield (b'{"probes":[{"layers":[{"layer":"cloud","name":"c","facts":{"promise_untorn_max_bytes":16384,'
           b'"promise_boundary_bytes":65536}},{"layer":"disk","name":"d","facts":{"logical_block_size":4096,'
           b'"write_cache":"write back"}}]}]}')


def tcp_capsule(opc, cid, cdw=(), nsid=0, fctype=0, data=b'', via_r2t=0):
    """An NVMe/TCP command capsule as the Linux host sends it: in-capsule DATA, or a transport SGL of VIA_R2T bytes."""
    sqe = bytearray(64)
    sqe[0], sqe[1] = opc, 0x40
    struct.pack_into('<HI', sqe, 2, cid, nsid)
    sqe[4] = fctype if opc == 0x7F else sqe[4]
    struct.pack_into('<I', sqe, 32, len(data) or via_r2t)
    sqe[39] = 0x01 if data else 0x5A
    for i, v in enumerate(cdw):
        struct.pack_into('<I', sqe, 40 + 4 * i, v)
    return struct.pack('<BBBBI', 0x04, 0, 72, 72 if data else 0, 72 + len(data)) + bytes(sqe) + data


def tcp_h2c(cid, ttag, offset, data, last):
    return struct.pack('<BBBBIHHII', 0x06, 0x04 if last else 0, 24, 24, 24 + len(data), cid, ttag, offset,
                       len(data)) + bytes(4) + data


def tcp_connect(cid, qid, cntlid):
    d = bytearray(1024)
    d[0:16] = b'\x11' * 16
    struct.pack_into('<H', d, 16, cntlid)
    d[256:256 + 30] = b'nqn.2026-12.org.liblcloud:fuzz'
    d[512:512 + 13] = b'nqn.fuzz-host'
    return tcp_capsule(0x7F, cid, (qid << 16, 31), fctype=0x01, data=bytes(d))


def seeds_target_pdu():
    """Sessions the way Linux opens them: an admin queue from ICReq on, and I/O on queue 1 of controller 1."""
    icreq = struct.pack('<BBBBI', 0, 0, 128, 0, 128) + bytes(120)
    admin = (icreq + tcp_connect(1, 0, 0xFFFF) + tcp_capsule(0x7F, 2, (1, 0x00), fctype=0x04)
             + tcp_capsule(0x7F, 3, (0, 0x14, 0x460001), fctype=0x00) + tcp_capsule(0x7F, 4, (0, 0x1C), fctype=0x04)
             + tcp_capsule(0x06, 5, (1,), via_r2t=4096) + tcp_capsule(0x06, 6, (2,), via_r2t=4096)
             + tcp_capsule(0x06, 7, (0,), nsid=1, via_r2t=4096) + tcp_capsule(0x06, 8, (3,), nsid=1, via_r2t=4096)
             + tcp_capsule(0x09, 9, (0x07, 1 | 1 << 16)) + tcp_capsule(0x0A, 10, (0x06,))
             + tcp_capsule(0x02, 11, (0x02 | 127 << 16,), via_r2t=512) + tcp_capsule(0x0C, 12)
             + tcp_capsule(0x18, 13) + tcp_capsule(0x80, 14))
    for flags in (0x00, 0x01, 0x02):
        yield bytes([flags, 0]) + admin
    yield bytes([0, 7]) + admin
    block = 4096
    io = (tcp_capsule(0x01, 2, (3, 0, 0), nsid=1, data=bytes(range(256)) * 16)
          + tcp_capsule(0x01, 3, (8, 0, 31 | 1 << 30), nsid=1, via_r2t=32 * block)
          + tcp_h2c(3, 0, 0, b'\xab' * 65536, False) + tcp_h2c(3, 0, 65536, b'\xcd' * 65536, True)
          + tcp_capsule(0x02, 4, (8, 0, 31), nsid=1, via_r2t=32 * block)
          + tcp_capsule(0x00, 5, nsid=1) + tcp_capsule(0x08, 6, (40, 0, 3), nsid=1)
          + tcp_capsule(0x09, 7, (0, 4), nsid=1, data=struct.pack('<IIQ', 0, 2, 50)))
    yield bytes([0x04, 0]) + io
    yield bytes([0x0C, 0]) + io
    # the session that once overflowed auth.c's transform(): DH-HMAC-CHAP with a host NQN of 256 bytes
    yield zlib.decompress(base64.b64decode(
        "eNpzYGBgaADCgQMsDB4eHiwMDPUOjAyM+BWCAFiJPBZpQTTw/z/DiAJ5hXl6RgZGZrqGRnr5Rel6OZlJOck5+aUpVmmlVVXYw2gUjAKqgwEsRyYwgMoRJgZWPOo8GKDlCCPjSw8catiB8owMzGyMTMz4rARKs7DicQ/YrnoHZgY2fKYIgMkokHugbAx/zQCbw4LXXwFI/grA6liQvxTABaiJEMz1bOwcnFzcPLx8/AKCQsIiomLiEpJS0jKycvIKikrKKqpq6hqaWto6unr6BoZGxiamZuYWFlbWNrZ29gj/sVLsvwiwOWx4/SeA5D8BbP5jAccbHAAA1yhQtA=="))
    yield bytes([0x06, 100]) + io
    # FDP (byte 0 bit 4): its feature and four logs on an admin queue of its own, then I/O Management and
    # placed writes, a valid handle, one past the four, and a directive type it does not offer
    fdp_admin = (icreq + tcp_connect(1, 0, 0xFFFF) + tcp_capsule(0x7F, 2, (0, 0x14, 0x460001), fctype=0x00)
                 + tcp_capsule(0x06, 3, (1,), via_r2t=4096) + tcp_capsule(0x0A, 4, (0x1D, 1))
                 + tcp_capsule(0x09, 5, (0x1D, 1, 0))
                 + tcp_capsule(0x02, 6, (0x20 | 3 << 16, 1 << 16), via_r2t=16)
                 + tcp_capsule(0x02, 7, (0x20 | 35 << 16, 1 << 16), via_r2t=144)
                 + tcp_capsule(0x02, 8, (0x20 | 15 << 16, 1 << 16, 16), via_r2t=64)
                 + tcp_capsule(0x02, 9, (0x21 | 9 << 16, 1 << 16), via_r2t=40)
                 + tcp_capsule(0x02, 10, (0x22 | 15 << 16, 1 << 16), via_r2t=64)
                 + tcp_capsule(0x02, 11, (0x23 | 1 << 8 | 1023 << 16, 1 << 16), via_r2t=4096))
    yield bytes([0x10, 0]) + fdp_admin
    fdp_io = (tcp_capsule(0x12, 2, (1, 35), nsid=1, via_r2t=144)
              + tcp_capsule(0x01, 3, (16, 0, 1 | 2 << 20, 1 << 16), nsid=1, data=bytes(range(256)) * 32)
              + tcp_capsule(0x01, 4, (24, 0, 0 | 2 << 20, 9 << 16), nsid=1, data=bytes(4096))
              + tcp_capsule(0x01, 5, (28, 0, 0 | 1 << 20, 1 << 16), nsid=1, data=bytes(4096))
              + tcp_capsule(0x1D, 6, (1, 0), nsid=1, data=struct.pack('<HH', 2, 0))
              + tcp_capsule(0x12, 7, (1, 3), nsid=1, via_r2t=16))
    yield bytes([0x14, 0]) + fdp_io
    yield bytes([0x04, 0]) + fdp_io
    # 8 KiB R2Ts (byte 0 bit 5): the 128 KiB write's data answers sixteen, each tag its slot and R2T number
    pieces = b''.join(tcp_h2c(3, k << 7, k * 8192, bytes([k]) * 8192, True) for k in range(16))
    yield bytes([0x24, 0]) + io[:72 + 4096] + tcp_capsule(0x01, 3, (8, 0, 31), nsid=1, via_r2t=32 * block) + pieces
    # the same I/O from nothing: ICReq and Connect of queue 1 in the input
    yield bytes([0, 0]) + icreq + tcp_connect(1, 1, 1)[:] + io[0:72 + 4096]
    # data buffers of 8 KiB (byte 0 bit 7): R2T writes and reads wait, held, and go as buffers come back
    held = (tcp_capsule(0x01, 2, (0, 0, 3), nsid=1, via_r2t=4 * block) + tcp_capsule(0x01, 3, (8, 0, 3), nsid=1,
            via_r2t=4 * block) + tcp_capsule(0x02, 4, (0, 0, 1), nsid=1, via_r2t=2 * block)
            + tcp_h2c(2, 0, 0, b'\x11' * 16384, True) + tcp_h2c(3, 1, 0, b'\x22' * 16384, True))
    yield bytes([0x84, 0]) + held
    yield bytes([0xA4, 0]) + held
    # DH-HMAC-CHAP (byte 0 bit 6), its messages as Linux sends them: Negotiate, the Challenge's Receive, a
    # Reply (whose response cannot match the target's random challenge), Success2, Failure2
    for msg in auth_messages():
        yield bytes([0x40, 0]) + icreq + tcp_connect(1, 0, 0xFFFF) + msg
        yield bytes([0x44, 0]) + msg


def auth_messages():
    """Authentication sessions: (Send, Receive) commands carrying DH-HMAC-CHAP messages."""
    cdw10 = 1 << 8 | 1 << 16 | 0xE9 << 24

    def send(cid, msg):
        return tcp_capsule(0x7F, cid, (cdw10, len(msg)), fctype=0x05, data=msg)

    def receive(cid, al=4096):
        return tcp_capsule(0x7F, cid, (cdw10, al), fctype=0x06, via_r2t=al)

    idlist = bytes([1, 2, 3]) + bytes(27) + bytes([0, 1, 2, 3, 4, 5]) + bytes(24)
    negotiate = struct.pack('<BBHHBB', 0, 0, 0, 7, 0, 1) + bytes([1, 0, 3, 6]) + idlist
    reply = struct.pack('<BBHHBBBBHI', 1, 2, 0, 7, 32, 0, 1, 0, 0, 0x1234) + bytes(range(64))
    success2 = struct.pack('<BBHH', 1, 4, 0, 7) + bytes(10)
    failure2 = struct.pack('<BBHHBB', 0, 0xF0, 0, 7, 1, 1)
    yield send(2, negotiate) + receive(3) + send(4, reply) + receive(5) + send(6, success2)
    yield send(2, negotiate) + receive(3) + send(4, failure2)
    yield send(2, negotiate[:40]) + receive(3)
    yield receive(2) + tcp_capsule(0x06, 3, (1,), via_r2t=4096)


def seeds_dhchap_secret():
    """Secrets as nvme gen-dhchap-key prints them (each key length and transform hash), and near misses."""
    import base64
    import zlib
    for n, xx in ((32, 0), (32, 1), (48, 2), (64, 3)):
        key = bytes(range(n))
        yield ('DHHC-1:%02d:%s:' % (xx, base64.b64encode(key + zlib.crc32(key).to_bytes(4, 'little')).decode())).encode()
    yield b'DHHC-1:01:QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB:'
    yield b'DHHC-1:04:AAAA:'
    yield b'DHHC-1:00:AAAA'


HARNESSES = {
    'fuzz_nvme_identify': seeds_nvme_identify,
    'fuzz_nvme_hints': seeds_nvme_hints,
    'fuzz_scsi_pages': seeds_scsi_pages,
    'fuzz_mountinfo': seeds_mountinfo,
    'fuzz_overlay_options': seeds_overlay_options,
    'fuzz_proc_lines': seeds_proc_lines,
    'fuzz_dm_table': seeds_dm_table,
    'fuzz_sysroot': seeds_sysroot,
    'fuzz_writelog': seeds_writelog,
    'fuzz_torture_record': seeds_torture_record,
    'fuzz_fingerprint': seeds_fingerprint,
    'fuzz_probe_model': seeds_probe_model,
    'fuzz_target_pdu': seeds_target_pdu,
    'fuzz_dhchap_secret': seeds_dhchap_secret,
}


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: make-seeds.py OUT')
    for harness, make in HARNESSES.items():
        out = os.path.join(sys.argv[1], harness)
        os.makedirs(out, exist_ok=True)
        n = 0
        for seed in make():
            name = hashlib.sha1(seed).hexdigest()
            with open(os.path.join(out, name), 'wb') as f:
                f.write(seed)
            n += 1
        print('%s: %d seeds' % (harness, n))


if __name__ == '__main__':
    main()
