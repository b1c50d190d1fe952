#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""InnoDB page writes in a device's write log (QEMU blklogwrites / dm-log-writes
format), judged with the log oracle's rules (lib/lab/oracle.h) under a
power-fail model given here: could a power cut tear any of them?

A page write is found by its content: at a logical-block-aligned position of a
logged write, a FIL header (page number at byte 4, LSN at 16, page type at 24,
space id at 34) whose LSN's low 32 bits appear again in the page's trailer
(full_crc32: PAGE-8; the older format: PAGE-4). The trailer may come in a later
command (the page was split): the page's bytes are then looked for in the
entries that follow. A page write is

  - split:     its bytes arrived in more than one command;
  - over-unit: one command larger than the atomic unit carried it;
  - boundary:  one command crossing an atomic boundary carried it;
  - atomic:    none of these.

The page is assumed contiguous on the device (a file's 16 KiB page in one
extent): a page whose trailer is nowhere in the log is counted as incomplete,
never as atomic.

Only pages whose full_crc32 checksum (CRC32C at PAGE-4, MariaDB's default
since 10.5) verifies are counted: a header that does not lead to a whole,
valid page (the redo log, free space, a page whose rest is not in the log) is
counted as an unverified head and judged not at all. Prints JSON: counts, and each tearable page write with the
cut that shows it (`lcloudctl replay --cut K --tear BLOCKS`)."""
import argparse
import json
import mmap
import struct
import sys

FLUSH, FUA, DISCARD, MARK = 1, 2, 4, 8
MAGIC = 0x6a736677736872
PAGE_TYPES = set(range(0, 13)) | {18, 17853, 17854, 17855}


def read_log(path):
    """[(index, byte offset on the device, length, flags, data position in the file)]."""
    f = open(path, "rb")
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    magic, version, n, ss = struct.unpack_from("<QQQI", m, 0)
    if magic != MAGIC:
        raise SystemExit("%s: not a write log" % path)
    entries, pos, i = [], ss, 0
    while pos + ss <= len(m):
        sector, nr, flags, data_len = struct.unpack_from("<QQQQ", m, pos)
        if sector == nr == flags == data_len == 0 and i >= n:
            break  # the end (a log cut short by a power cut ends in zeros)
        data = pos + ss
        size = 0 if flags & (FLUSH | DISCARD) and not data_len else nr * ss
        if data + size > len(m):
            break
        entries.append((i, sector * ss, size, flags, data))
        pos = data + size
        i += 1
    return m, ss, entries


def _crc32c_table():
    t = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


CRC32C = _crc32c_table()


def crc32c(buf):
    c = 0xffffffff
    t = CRC32C
    for b in buf:
        c = t[(c ^ b) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff


def full_crc32_ok(page, lsn):
    """MariaDB's full_crc32 page: LSN's low 32 bits at PAGE-8, CRC32C of all but the last 4 bytes at PAGE-4."""
    n = len(page)
    low, crc = struct.unpack_from(">II", page, n - 8)
    return low == lsn & 0xffffffff and crc == crc32c(memoryview(page)[:n - 4])


def assemble(m, writes, k, dev, ps, lba, window):
    """The page at device offset DEV whose head is in writes[K]: its other
    blocks from the writes that follow, each from the first that writes it.
    Returns (bytes, [(entry, offset, length)]) or (None, None)."""
    i, off, length, _, data = writes[k]
    page = bytearray(ps)
    have = min(ps, off + length - dev)
    page[:have] = m[data + dev - off:data + dev - off + have]
    missing = set(range(have // lba, ps // lba))
    parts = [(i, off, length)]
    for (j, o2, l2, f2, d2) in writes[k + 1:k + 1 + window]:
        got = [b for b in missing if o2 <= dev + b * lba and dev + (b + 1) * lba <= o2 + l2]
        if not got:
            continue
        for b in got:
            s = d2 + dev + b * lba - o2
            page[b * lba:(b + 1) * lba] = m[s:s + lba]
            missing.discard(b)
        parts.append((j, o2, l2))
        if not missing:
            return bytes(page), parts
    return None, None


def unverified(out, dev, entry, why):
    """A FIL-header-like block that did not lead to a valid page: listed, so
    that a caller can tell whose blocks they are (a redo log, a data file)."""
    out["unverified_heads"] += 1
    out["unverified"].append({"device_offset": dev, "entry": entry, "why": why})


def command_atomic(off, length, unit, boundary, boundary_offset):
    if length > unit:
        return False
    if not boundary:
        return True
    if off < boundary_offset:
        nxt = boundary_offset
    else:
        nxt = boundary_offset + ((off - boundary_offset) // boundary + 1) * boundary
    return nxt >= off + length


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("log")
    ap.add_argument("--page-size", type=int, default=16384)
    ap.add_argument("--lba", type=int, required=True)
    ap.add_argument("--atomic-bytes", type=int, required=True)
    ap.add_argument("--boundary", type=int, default=0)
    ap.add_argument("--boundary-offset", type=int, default=0)
    ap.add_argument("--window", type=int, default=4096, help="entries after a page's head to look for its rest")
    a = ap.parse_args()
    ps, lba = a.page_size, a.lba
    m, ss, entries = read_log(a.log)
    writes = [e for e in entries if not e[3] & (FLUSH | DISCARD) and e[2]]
    out = {"log": a.log, "log_sector_size": ss, "entries": len(entries), "write_entries": len(writes),
           "flush_entries": sum(1 for e in entries if e[3] & FLUSH),
           "bytes_written": sum(e[2] for e in writes),
           "model": {"lba": lba, "atomic_bytes": a.atomic_bytes, "boundary": a.boundary,
                     "boundary_offset": a.boundary_offset, "page_size": ps},
           "page_writes": 0, "atomic": 0, "tearable": 0, "unverified_heads": 0,
           "rules": {"split": 0, "over_unit": 0, "boundary": 0}, "largest_page_command": 0,
           "spaces": {}, "tearable_writes": [], "unverified": []}
    for k, (i, off, length, flags, data) in enumerate(writes):
        for rel in range(0, length, lba):
            h = data + rel
            if rel + 38 > length:
                break
            lsn, = struct.unpack_from(">Q", m, h + 16)
            ptype, = struct.unpack_from(">H", m, h + 24)
            if not lsn or ptype not in PAGE_TYPES:
                continue
            dev = off + rel
            if rel + ps <= length:
                t = data + rel + ps - 8
                if struct.unpack_from(">I", m, t)[0] != lsn & 0xffffffff:
                    unverified(out, dev, i, "trailer")
                    continue
                page = m[h:h + ps]
                parts = [(i, off, length)]
            else:
                page, parts = assemble(m, writes, k, dev, ps, lba, a.window)
                if page is None:
                    unverified(out, dev, i, "rest not in the log")
                    continue
            if not full_crc32_ok(page, lsn):
                unverified(out, dev, i, "checksum")
                continue
            page_no, = struct.unpack_from(">I", page, 4)
            space, = struct.unpack_from(">I", page, 34)
            out["page_writes"] += 1
            out["spaces"][str(space)] = out["spaces"].get(str(space), 0) + 1
            out["largest_page_command"] = max(out["largest_page_command"], max(p[2] for p in parts))
            rules = []
            if len(parts) > 1:
                rules.append("split")
            for (j, o2, l2) in parts:
                if not command_atomic(o2, l2, a.atomic_bytes, a.boundary, a.boundary_offset):
                    rules.append("over_unit" if l2 > a.atomic_bytes else "boundary")
            if not rules:
                out["atomic"] += 1
                continue
            out["tearable"] += 1
            for r in set(rules):
                out["rules"][r] += 1
            if len(parts) > 1:
                cut = {"cut": parts[-1][0], "tear_blocks": 0}
            else:
                # a logical block boundary near the middle of the page, inside the command
                c = (dev + ps // 2) // lba * lba
                cut = {"cut": i, "tear_blocks": (c - off) // lba}
            if len(out["tearable_writes"]) < 50:
                out["tearable_writes"].append({"space_id": space, "page_no": page_no, "lsn": lsn, "page_type": ptype,
                                               "device_offset": dev, "entry": i, "commands": [p[0] for p in parts],
                                               "command_bytes": [p[2] for p in parts], "rules": sorted(set(rules)),
                                               "tearing_cut": cut})
    json.dump(out, sys.stdout, indent=1)
    print()
    return 11 if out["tearable"] else 0


if __name__ == "__main__":
    sys.exit(main())
