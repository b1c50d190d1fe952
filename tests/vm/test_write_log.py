#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Lanes: current, then debian12. lcvm's write log (log=1: the disk behind
QEMU's blklogwrites) read by a small parser written here, independent of the
project's own reader:
  1. current lane, fresh image in --image-dir: one 16 KiB O_DIRECT write to a
     4 KiB-LBA NVMe namespace is one log entry {sector 12, 4 sectors} whose
     data is the page the guest wrote; replaying the log onto zeros gives the
     image QEMU left. A Google-PD-shaped scsi-hd (512-byte LBAs, 512-byte log
     sectors) logs the same kind of write as one 32-sector entry.
  2. debian12 lane (QEMU 7.2 has blklogwrites too), same image directory,
     QEMU killed 5 s after an 8 KiB write (a power cut): lcvm keeps the reused
     image as the log's starting image and writes the log's superblock QEMU
     never closed; replaying the log onto the start gives the final image."""
import json
import os
import shutil
import struct
import tempfile

from vmlib import run_guest
from hostlib import main

MAGIC = 0x6a736677736872
FLUSH, FUA, DISCARD, MARK = 1, 2, 4, 8

GUEST_1 = r'''
set -eu
dd if=/dev/urandom of=/tmp/page bs=16384 count=1 2>/dev/null
cp /tmp/page /out/page
dd if=/tmp/page of=$LCVM_NVME0'n1' bs=16384 seek=3 oflag=direct conv=notrunc 2>/dev/null
dd if=/dev/urandom of=/tmp/spage bs=16384 count=1 2>/dev/null
cp /tmp/spage /out/spage
dd if=/tmp/spage of=$LCVM_SCSI0 bs=16384 seek=5 oflag=direct conv=notrunc 2>/dev/null
'''

GUEST_2 = r'''
set -eu
dd if=/dev/urandom of=$LCVM_NVME0'n1' bs=8192 count=1 seek=50 oflag=direct conv=notrunc 2>/dev/null
sleep 120
'''


def read_log(path):
    """(sector size, [(sector, nr_sectors, flags, data)]): the dm-log-writes
    format, little-endian; entries are read to the end of the file and must
    agree with the superblock's count (QEMU closed the log cleanly)."""
    with open(path, "rb") as f:
        d = f.read()
    magic, version, count, ss = struct.unpack_from("<QQQI", d, 0)
    assert magic == MAGIC and version == 1, (hex(magic), version)
    assert ss >= 512 and ss & (ss - 1) == 0, ss
    entries, off = [], ss
    while off + ss <= len(d):
        sector, nr, flags, _ = struct.unpack_from("<QQQQ", d, off)
        off += ss
        data = b""
        if nr and not flags & DISCARD:
            data = d[off:off + nr * ss]
            assert len(data) == nr * ss, "entry %d past the end of the log" % len(entries)
            off += nr * ss
        entries.append((sector, nr, flags, data))
    assert len(entries) == count, (len(entries), count)
    return ss, entries


def replay(ss, entries, start, size):
    img = bytearray(size) if start is None else bytearray(open(start, "rb").read())
    for sector, nr, flags, data in entries:
        if flags & DISCARD:
            img[sector * ss:(sector + nr) * ss] = bytes(nr * ss)
        elif data:
            img[sector * ss:sector * ss + len(data)] = data
    return bytes(img)


def writes(entries):
    return [e for e in entries if e[1] and not e[2] & (DISCARD | MARK)]


def check_replay(logs, name, start_expected):
    desc = json.load(open(os.path.join(logs, name + ".json")))
    assert desc["log"] == name + ".log"
    ss, entries = read_log(os.path.join(logs, desc["log"]))
    assert ss == desc["log_sector_size"]
    start = desc["start_image"] and os.path.join(logs, desc["start_image"])
    assert bool(start) == start_expected, desc
    final = open(os.path.join(logs, desc["final_image"]), "rb").read()
    assert len(final) == desc["image_size"]
    assert replay(ss, entries, start, desc["image_size"]) == final, "replay of %s differs from the final image" % name
    return ss, entries, start


def test_log_entries_replay_and_lanes():
    tmp = tempfile.mkdtemp(prefix="lcloud-vm-log-")
    try:
        imgs = os.path.join(tmp, "img")
        nvme = "lbs=4096,size=16M,serial=lcL,log=1,atomic.nawun=3,atomic.nawupf=3"
        run = run_guest(GUEST_1, ["--image-dir", imgs, "--nvme", nvme,
                                  "--scsi", "lbs=512,pbs=16384,size=16M,vendor=Google,product=PersistentDisk,log=1"],
                        lane="current")
        logs = os.path.join(run.outdir, "logs")
        ss, entries, _ = check_replay(logs, "nvme0-n1", False)
        assert ss == 4096
        w = writes(entries)
        assert [(s, n, f & ~FUA) for s, n, f, _ in w] == [(12, 4, 0)], [(s, n, f) for s, n, f, _ in entries]
        page = open(os.path.join(run.files, "page"), "rb").read()
        assert w[0][3] == page
        ss, entries, _ = check_replay(logs, "scsi0", False)
        assert ss == 512
        w = writes(entries)
        assert [(s, n) for s, n, _, _ in w] == [(5 * 32, 32)], [(s, n, f) for s, n, f, _ in entries]
        assert w[0][3] == open(os.path.join(run.files, "spage"), "rb").read()
        first_final = open(os.path.join(logs, "nvme0-n1.final.img"), "rb").read()
        shutil.rmtree(os.path.dirname(run.outdir))

        # QEMU 7.2, the same image: its starting state is kept with the log.
        run = run_guest(GUEST_2, ["--image-dir", imgs, "--kill-after", "5",
                                  "--nvme", nvme.replace(",atomic.nawun=3,atomic.nawupf=3", "")], lane="debian12")
        assert open(os.path.join(run.outdir, "status")).read().strip() == "killed"
        logs = os.path.join(run.outdir, "logs")
        ss, entries, start = check_replay(logs, "nvme0-n1", True)
        desc = json.load(open(os.path.join(logs, "nvme0-n1.json")))
        assert desc["superblock_rewritten"]["complete_entries"] == len(entries), desc
        assert open(start, "rb").read() == first_final
        w = writes(entries)
        assert [(s, n) for s, n, _, _ in w] == [(100, 2)]
        assert w[0][3] == open(os.path.join(imgs, "nvme-lcL-n1.img"), "rb").read()[100 * 4096:102 * 4096] != bytes(8192)
        shutil.rmtree(os.path.dirname(run.outdir))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main([test_log_entries_replay_and_lanes])
