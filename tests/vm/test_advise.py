#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Database advice end to end on a Google-Persistent-Disk-shaped SCSI disk
(16 KiB physical blocks) in a QEMU guest, formatted on the host the way
Google's MySQL recipe says (ext4, bigalloc, 16 KiB clusters) and, for
contrast, a second such disk with plain 4 KiB ext4: only the first lets
InnoDB drop its doublewrite buffer, and the advice for the second names the
layout that would; PostgreSQL keeps full_page_writes on. With the kernel's
default merging (queue/nomerges 0) neighbouring page writes can reach the
disk as one command larger than 16 KiB, but Google's promise is per aligned
16 KiB block and such a command is made of whole blocks where it carries a
page, so the doublewrite buffer can still go. The InnoDB
data files already in a directory are read: a FIFO named like one, a database
directory behind a symbolic link, a data file on a mount inside or a .isl file
leaves the answer unknown; a file with a page across a hole keeps the buffer on,
and its name (a newline, an escape, a byte that is not UTF-8) reaches neither
the terminal nor the JSON raw."""
import os
import subprocess
import tempfile

from vmlib import run_guest
from hostlib import main

GUEST = r'''
set -u
mkdir -p /mnt/a /mnt/b
for d in /sys/block/sd*; do
    n=${d##*/}
    m=/mnt/a
    [ "$(cat $d/size)" = 262144 ] && m=/mnt/b  # the 128 MiB disk carries plain ext4
    mount -t ext4 /dev/$n $m || echo "mount $n failed" >&2
done
mkdir -p /mnt/a/mysql /mnt/b/mysql
"$LCLOUDCTL" advise --db mysql --format json /mnt/a/mysql > /out/a-mysql-merges.json
for d in /sys/block/sd*; do echo 2 > $d/queue/nomerges; done
"$LCLOUDCTL" advise --db mysql --format json /mnt/a/mysql > /out/a-mysql.json
"$LCLOUDCTL" advise --db mysql --format json /mnt/b/mysql > /out/b-mysql.json
"$LCLOUDCTL" advise --db postgresql --format json /mnt/a/mysql > /out/a-pg.json
"$LCLOUDCTL" check --size 16K --path plain_direct /mnt/a/mysql > /out/a-check.txt; echo $? > /out/a-check.rc
"$LCLOUDCTL" check --size 16K --path plain_direct /mnt/b/mysql > /out/b-check.txt; echo $? > /out/b-check.rc
# the data files already there: any that could not be read keeps the answer unknown
mkdir -p /mnt/a/whole/db
dd if=/dev/urandom of=/mnt/a/whole/db/t.ibd bs=64k count=1 2>/dev/null
for kind in fifo link mount isl; do mkdir -p /mnt/a/$kind/db; cp /mnt/a/whole/db/t.ibd /mnt/a/$kind/db/; done
mkfifo /mnt/a/fifo/db/x.ibd
ln -s /mnt/a/whole/db /mnt/a/link/far
mkdir /mnt/a/mount/sub && mount -t tmpfs -o size=1m tmpfs /mnt/a/mount/sub && cp /mnt/a/whole/db/t.ibd /mnt/a/mount/sub/
echo /elsewhere/db/t.ibd > /mnt/a/isl/db/far.isl
# a page across a hole, in a file whose name holds a newline, an escape and a byte that is not UTF-8
n=$(printf '/mnt/a/names/db\nx\033[31m\377')
mkdir -p "$n"
dd if=/dev/urandom of="$n/t.ibd" bs=4k count=1 2>/dev/null
dd if=/dev/urandom of="$n/t.ibd" bs=4k seek=2 count=6 conv=notrunc 2>/dev/null
sync
for kind in whole fifo link mount isl names; do
    timeout 60 "$LCLOUDCTL" advise --db mysql --format json /mnt/a/$kind > /out/$kind.json; echo $? > /out/$kind.rc
done
timeout 60 "$LCLOUDCTL" advise --db mysql /mnt/a/names > /out/names.txt
umount /mnt/a/mount/sub
'''


def make_image(path, size, *mkfs_args):
    with open(path, "wb") as f:
        f.truncate(size)
    subprocess.run(["mkfs.ext4", "-q", "-F", *mkfs_args, path], check=True, capture_output=True)


def test_innodb_advice_follows_the_layout():
    tmp = tempfile.mkdtemp(prefix="lcloud-vm-advise-")
    bigalloc, plain = os.path.join(tmp, "bigalloc.img"), os.path.join(tmp, "plain.img")
    make_image(bigalloc, 256 << 20, "-b", "4096", "-O", "bigalloc", "-C", "16384")
    make_image(plain, 128 << 20, "-b", "4096")
    try:
        run = run_guest(GUEST, [
            "--scsi", "image=%s,lbs=512,pbs=16384,vendor=Google,product=PersistentDisk" % bigalloc,
            "--scsi", "image=%s,lbs=512,pbs=16384,vendor=Google,product=PersistentDisk" % plain,
        ])
    finally:
        for f in (bigalloc, plain):
            os.unlink(f)
        os.rmdir(tmp)
    merges = run.json("a-mysql-merges.json")
    assert merges["settings"]["innodb_doublewrite"] == "OFF", merges
    assert "cloud:gcp-pd-16k" in merges["advice"][0], merges
    a = run.json("a-mysql.json")
    assert a["settings"] == {"innodb_doublewrite": "OFF", "innodb_flush_method": "O_DIRECT"}, a
    assert run.text("a-check.rc").strip() == "0", run.text("a-check.txt")
    assert "cloud:gcp-pd-16k" in run.text("a-check.txt")
    # the same disk with plain 4 KiB ext4: a page may span two extents, so the doublewrite stays,
    # and the advice names the layout that would fix it
    b = run.json("b-mysql.json")
    assert b["settings"]["innodb_doublewrite"] == "ON", b
    assert any("bigalloc -C 16384" in line for line in b["advice"]), b["advice"]
    assert run.text("b-check.rc").strip() == "6"
    assert "4096-byte units" in run.text("b-check.txt"), run.text("b-check.txt")
    # the data files already in a directory: read, or the answer is unknown (exit 8), never a wait
    whole = run.json("whole.json")
    assert run.text("whole.rc").strip() == "0" and whole["settings"]["innodb_doublewrite"] == "OFF", whole
    assert any("InnoDB data files already in" in line for line in whole["advice"]), whole["advice"]
    for kind, why in (("fifo", "not a regular file"), ("link", "symbolic link"), ("mount", "another file system"),
                      ("isl", "DATA DIRECTORY")):
        doc = run.json(kind + ".json")
        assert run.text(kind + ".rc").strip() == "8" and doc["settings"] == {}, (kind, doc)
        assert doc["answer"] == "unknown" and why in doc["advice"][0], (kind, doc)
    names = run.json("names.json")  # json.load: the document is valid UTF-8
    assert names["settings"]["innodb_doublewrite"] == "ON", names
    assert "db\nx\x1b[31m\xff/t.ibd" in names["advice"][0] and "at byte 4096" in names["advice"][0], names
    text = run.text("names.txt")
    assert "\x1b" not in text and "db\\x0ax\\x1b[31m\\xff/t.ibd" in text, text
    pg = run.json("a-pg.json")
    assert pg["settings"] == {"full_page_writes": "on"}
    assert any("page cache" in line for line in pg["advice"])


if __name__ == "__main__":
    main([test_innodb_advice_follows_the_layout])
