# SPDX-License-Identifier: LGPL-2.1-or-later
"""The torture page format, written again from its description in
lib/lab/torture_page.h and the write log format from dm-log-writes, so the
tests read and make pages and logs without the C code under test."""
import struct

BLOCK = 512
MAGIC = 0x7453434C
M64 = (1 << 64) - 1


def _crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _finalise(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def block(run_id, page, generation, index, page_size):
    """One 512-byte stamp block."""
    state = _finalise(_finalise(_finalise(_finalise(run_id) ^ page) ^ generation) ^ index)
    words = []
    for _ in range((BLOCK - 64) // 8):
        state = (state + 0x9E3779B97F4A7C15) & M64
        words.append(_finalise(state))
    head = struct.pack("<IHHQQQII", MAGIC, 1, index, run_id, page, generation, page_size, 0) + bytes(24)
    body = head + struct.pack("<%dQ" % len(words), *words)
    crc = crc32c(body)
    return body[:36] + struct.pack("<I", crc) + body[40:]


def page(run_id, number, generation, page_size):
    return b"".join(block(run_id, number, generation, i, page_size) for i in range(page_size // BLOCK))


def decode(blk):
    """(run_id, page, generation, index, page_size) of a valid stamp block, else None."""
    if len(blk) != BLOCK:
        return None
    magic, version, index, run_id, number, generation, page_size, crc = struct.unpack_from("<IHHQQQII", blk)
    if magic != MAGIC or version != 1:
        return None
    if crc32c(blk[:36] + bytes(4) + blk[40:]) != crc:
        return None
    if blk != block(run_id, number, generation, index, page_size):
        return None
    return run_id, number, generation, index, page_size


# dm-log-writes / QEMU blklogwrites, little-endian
LOG_MAGIC = 0x6A736677736872
FLUSH, FUA, DISCARD, MARK = 1, 2, 4, 8


def write_log(path, entries, sector_size=512):
    """ENTRIES: (sector, flags, data bytes) in log sectors; data a multiple of SECTOR_SIZE."""
    out = bytearray(struct.pack("<QQQI", LOG_MAGIC, 1, len(entries), sector_size).ljust(sector_size, b"\0"))
    for sector, flags, data in entries:
        assert len(data) % sector_size == 0
        out += struct.pack("<QQQQ", sector, len(data) // sector_size, flags, 0).ljust(sector_size, b"\0")
        out += data
    with open(path, "wb") as f:
        f.write(out)


def read_log(path):
    """(sector_size, [(sector, nr_sectors, flags, data)]) of a log, by the format's description."""
    with open(path, "rb") as f:
        raw = f.read()
    magic, version, count, ss = struct.unpack_from("<QQQI", raw)
    assert magic == LOG_MAGIC and version == 1, (hex(magic), version)
    entries, pos = [], ss
    for _ in range(count):
        sector, nr, flags, data_len = struct.unpack_from("<QQQQ", raw, pos)
        pos += ss
        size = 0 if flags & (DISCARD | MARK) else nr * ss
        entries.append((sector, nr, flags, raw[pos:pos + size]))
        pos += size
    return ss, entries
