#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The proof matrix (lane: current): for each device configuration and each I/O
path that applies, the guest runs `lcloudctl probe` and `check --size 16K
--path P` on the target, then a short `lcloudctl torture run` while QEMU logs
every write the device receives. On the host, `lcloudctl replay` (the oracle)
judges every page write in the log under the device's power-fail model, makes
the crash image of each tearable one (--cut-all) and of a few plain cuts, and
`torture verify` reads them (for file systems: the file on the mounted image).

A third boot runs lcloud-target, the project's user-space NVMe/TCP device,
in the guest, the guest's nvme-tcp connected to it over loopback: the same
check, torture run and oracle, over the write log the target itself keeps,
and then real power cuts of the target during `torture run`, with `torture
verify` on the backing file each cut left. Its liar row is the negative
control: the log shows nothing tearable, the cut files show torn pages.

The verdict and the oracle are then compared row by row (see RULE below).
`tests/vm/matrix.py --write` runs it and rewrites matrix.md and matrix.json
beside this file; test_matrix.py runs it and enforces the rule."""
import concurrent.futures
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from vmlib import keep, run_guest  # noqa: E402

PAGE = "16K"
PAGE_BYTES = 16384
PAGES = 64
WRITES = 192
DEPTH = 8
REGION = 2 << 20  # each path of a raw device writes its own 2 MiB
STATX_READER = os.environ.get("STATX_READER")
LCLOUD_TARGET = os.environ.get("LCLOUD_TARGET")
TARGET_SIZE = 16 << 20  # each target's backing file, in a tmpfs in the guest
# power cuts of the target per row and path: the committed run (--write) and the CI test
CUTS_FULL = 8
CUTS_CI = 3
# the paths the target is cut under: not buffered, whose run, once the target's power was cut, did
# not end (its flush of the page cache to the dead namespace had not returned minutes later)
CUT_PATHS = ("rwf_atomic", "passthrough", "plain_direct")

RULE = """\
untorn (check exit 0): zero page writes the oracle calls tearable (for a file
system: those written over the blocks of the page's previous generation; a
page written to new blocks, relocated or first, is judged by the file on the
mounted crash image) and zero torn pages on every crash image. not untorn (exit 6): refused before
writing on an atomic path, or the oracle finds a tearable page write, or the
row is conservative (the reason says why). unknown (exit 8): reported.
lcloud-target rows: zero torn pages also in every file its own power cuts
left, except on its liar row, the negative control, which must show them
(it breaks its promise where the oracle, reading its commands, sees none)."""

ATOMIC16 = "atomic.nawun=3,atomic.nawupf=3"
B32 = ",atomic.nabsn=7,atomic.nabspf=7"
LOG4K = ",log=1,log.sector=4096,log.update=1"
LOG512 = ",log=1,log.sector=512,log.update=1"
PD = "lbs=512,pbs=16384,vendor=Google,product=PersistentDisk"
NVME_PATHS = ["rwf_atomic", "passthrough", "plain_direct", "buffered"]
DEV_PATHS = ["rwf_atomic", "plain_direct", "buffered"]
CAP16 = "echo 16 > /sys/block/{0}/queue/max_sectors_kb; echo 0 > /sys/block/{0}/queue/nomerges"
MERGES_ON = "echo 0 > /sys/block/{0}/queue/nomerges"


def sysname(dev):
    """The shell for DEV's name in /sys/block: DEV is a shell word, "${N0}n1" or "$TDEV"."""
    if dev.startswith("${"):
        var, rest = dev[2:].split("}", 1)
        return "${%s##*/}%s" % (var, rest)
    return "${%s##*/}" % dev[1:]


def striped_on_two(chunk_sectors, name, dev0="${N0}n1", dev1="${N1}n1"):
    """Setup shell: namespaces DEV0 and DEV1 merging up to 16 KiB, dm-striped over both with chunks
    of CHUNK_SECTORS, as /dev/mapper/NAME."""
    return (CAP16.format(sysname(dev0)) + "; " + CAP16.format(sysname(dev1)) + "; "
            'echo "0 32768 striped 2 %d %s 0 %s 0" | dmsetup create --noudevsync %s '
            '>/out/@ROW@/setup.log 2>&1; dmsetup mknodes %s' % (chunk_sectors, dev0, dev1, name, name))


def crypt_nomerges(name, dev="${N0}n1"):
    """Setup shell: DEV with queue/nomerges 2, dm-crypt with the null cipher over it as
    /dev/mapper/NAME."""
    return ("echo 2 > /sys/block/%s/queue/nomerges; " % sysname(dev) +
            'echo "0 32768 crypt cipher_null-ecb - 0 %s 0" | dmsetup create --noudevsync %s '
            '>/out/@ROW@/setup.log 2>&1; dmsetup mknodes %s' % (dev, name, name))


def loop_on_xfs(direct_io, dev="${N0}n1"):
    """Setup shell: XFS on DEV (merges on), an 8 MiB file on it, a loop device over the file with
    direct I/O "on" or "off" in $LOOPDEV, and what the kernel says it does in loop-dio."""
    return (MERGES_ON.format(sysname(dev)) + "; /usr/sbin/mkfs.xfs -q -f " + dev +
            " >/out/@ROW@/setup.log 2>&1; "
            "modprobe loop; mkdir -p /mnt/@ROW@; mount -t xfs " + dev + " /mnt/@ROW@; "
            "dd if=/dev/zero of=/mnt/@ROW@/img bs=1M count=8 2>/dev/null; sync; "
            "LOOPDEV=$(/usr/sbin/losetup --find --show --direct-io=" + direct_io + " /mnt/@ROW@/img); "
            "cat /sys/block/${LOOPDEV##*/}/loop/dio > /out/@ROW@/loop-dio")

# Each row: what it is, the lcvm device options, shell that sets $T (the
# target, for files a directory), $M (the device probed for replay's model)
# and $L (the write logs, space separated names in OUTDIR/logs).
#   kind raw: the paths write regions of one block device at REGION offsets
#   kind file: the paths write one file each in directory $T
# page: its page size (16 KiB without it); ci False: only in the committed run
# (matrix.py --write), not in the CI test, which keeps a few rows of each
# rule; control: a negative control, where the answer must be no and the
# oracle must find tearable page writes; fs and file on a raw row: its
# device's pages live in that file of that file system (a loop device's
# backing file), which the crash images are read through; teardown: shell
# run after its paths.
TARGET_PROMISE = "--lba-size 4096 --nawun 16K --nawupf 16K"
BOOTS = {
    "devices": {
        "extra": [],
        "rows": [
            dict(name="nvme-4k-nawupf16k", what="NVMe 4 KiB LBA, NAWUPF 16 KiB, no boundary", kind="raw",
                 nvme=["lbs=4096,size=16M," + ATOMIC16 + LOG4K], target="${N0}n1", logs=["N0"],
                 paths=NVME_PATHS),
            dict(name="nvme-4k-nawupf16k-nomerges", what="NVMe 4 KiB LBA, NAWUPF 16 KiB, queue/nomerges 2 (no merges)",
                 kind="raw", nvme=["lbs=4096,size=16M," + ATOMIC16 + LOG4K],
                 setup="echo 2 > /sys/block/${N0##*/}n1/queue/nomerges", target="${N0}n1", logs=["N0"],
                 paths=["plain_direct"]),
            dict(name="nvme-4k-nawupf16k-b32k", what="NVMe 4 KiB LBA, NAWUPF 16 KiB, 32 KiB boundary", kind="raw",
                 nvme=["lbs=4096,size=16M," + ATOMIC16 + B32 + LOG4K], target="${N0}n1", logs=["N0"],
                 paths=NVME_PATHS),
            dict(name="nvme-4k-nawupf16k-nabo", what="NVMe 4 KiB LBA, NAWUPF 16 KiB, 32 KiB boundary, NABO 2",
                 kind="raw", nvme=["lbs=4096,size=16M," + ATOMIC16 + B32 + ",atomic.nabo=2" + LOG4K],
                 target="${N0}n1", logs=["N0"], paths=NVME_PATHS),
            dict(name="nvme-512-nawupf16k", what="NVMe 512 B LBA, NAWUPF 16 KiB", kind="raw",
                 nvme=["lbs=512,size=16M,atomic.nawun=31,atomic.nawupf=31" + LOG512], target="${N0}n1",
                 logs=["N0"], paths=NVME_PATHS),
            dict(name="nvme-4k-awupf16k", what="NVMe 4 KiB LBA, controller AWUPF 16 KiB only", kind="raw",
                 nvme=["lbs=4096,size=16M,ctrl.atomic.awun=3,ctrl.atomic.awupf=3" + LOG4K], target="${N0}n1",
                 logs=["N0"], paths=NVME_PATHS),
            dict(name="nvme-4k-plain", what="NVMe 4 KiB LBA, no atomic parameters (one block)", kind="raw",
                 nvme=["lbs=4096,size=16M" + LOG4K], target="${N0}n1", logs=["N0"], paths=NVME_PATHS),
            dict(name="pd-whole", what="Google PD scsi-hd (512 B LBA, 16 KiB physical), whole disk", kind="raw",
                 scsi=[PD + ",size=16M" + LOG512], target="$S0", logs=["S0"], paths=DEV_PATHS),
            dict(name="pd-whole-nomerges", what="Google PD scsi-hd, whole disk, queue/nomerges 2 (no merges)",
                 kind="raw", scsi=[PD + ",size=16M" + LOG512],
                 setup="echo 2 > /sys/block/${S0##*/}/queue/nomerges", target="$S0", logs=["S0"],
                 paths=["plain_direct"]),
            dict(name="pd-partition-20488", what="Google PD scsi-hd, partition at sector 20488 (4 KiB past 16 KiB)",
                 kind="raw", scsi=[PD + ",image=@PARTIMG@" + LOG512], target="${S0}1", model="$S0",
                 logs=["S0"], part_start=20488 * 512, paths=DEV_PATHS),
            dict(name="pd-maxio-8k", what="Google PD scsi-hd, 8 KiB maximum transfer", kind="raw",
                 scsi=[PD + ",size=16M,max_io_size=8192" + LOG512], target="$S0", logs=["S0"], paths=DEV_PATHS),
            dict(name="pd-virtqueue-4", what="Google PD scsi-hd on virtio-scsi with virtqueue_size=4", kind="raw",
                 scsi=[PD + ",size=16M,hba=1,hba.virtqueue_size=4" + LOG512], target="$S0", logs=["S0"],
                 paths=DEV_PATHS),
            dict(name="scsi-debug-atomic", what="scsi_debug 4 KiB LBA, WRITE ATOMIC up to 16 KiB", kind="raw",
                 scsi_debug="dev_size_mb=16 sector_size=4096 atomic_wr=1 atomic_wr_max_length=4 "
                            "atomic_wr_gran=1 atomic_wr_align=1",
                 target="$LCVM_SCSI_DEBUG0", logs=[], paths=["rwf_atomic", "plain_direct"]),
        ],
    },
    "stacks": {
        "extra": ["--module", "xfs", "--module", "overlay", "--copy", "/usr/sbin/mkfs.xfs",
                  "--copy", "/usr/sbin/mke2fs"],
        "rows": [
            dict(name="md-raid0-16k", what="md raid0, 16 KiB chunks, over two NAWUPF-16K namespaces", kind="raw",
                 nvme=["lbs=4096,size=16M," + ATOMIC16 + LOG4K] * 2,
                 setup="mdadm --create /dev/md0 --run --level=0 --chunk=16 --raid-devices=2 ${N0}n1 ${N1}n1 "
                       ">/out/@ROW@/setup.log 2>&1",
                 target="/dev/md0", model="${N0}n1", logs=["N0", "N1"], paths=DEV_PATHS),
            dict(name="md-raid0-8k", what="md raid0, 8 KiB chunks, over two NAWUPF-16K namespaces", kind="raw",
                 nvme=["lbs=4096,size=16M," + ATOMIC16 + LOG4K] * 2,
                 setup="mdadm --create /dev/md1 --run --level=0 --chunk=8 --raid-devices=2 ${N0}n1 ${N1}n1 "
                       ">/out/@ROW@/setup.log 2>&1",
                 target="/dev/md1", model="${N0}n1", logs=["N0", "N1"], paths=DEV_PATHS),
            dict(name="dm-linear-shifted", what="dm-linear starting 4 KiB into a NAWUPF-16K, 32 KiB-boundary namespace",
                 kind="raw", nvme=["lbs=4096,size=16M," + ATOMIC16 + B32 + LOG4K],
                 setup='echo "0 32760 linear ${N0}n1 8" | dmsetup create --noudevsync shifted '
                       '>/out/@ROW@/setup.log 2>&1',
                 target="/dev/dm-0", model="${N0}n1", logs=["N0"], dev_shift=4096, paths=DEV_PATHS),
            dict(name="xfs", what="XFS on the NAWUPF-16K, 32 KiB-boundary namespace", kind="file", fs="xfs",
                 nvme=["lbs=4096,size=320M," + ATOMIC16 + B32 + LOG4K],
                 setup="/usr/sbin/mkfs.xfs -q -f ${N0}n1 >/out/@ROW@/setup.log 2>&1; mkdir -p /mnt/@ROW@; "
                       "mount -t xfs ${N0}n1 /mnt/@ROW@",
                 target="/mnt/@ROW@", model="${N0}n1", logs=["N0"], paths=DEV_PATHS, subdir=""),
            dict(name="xfs-64k-software", what="XFS on the NAWUPF-16K namespace, 64 KiB pages: RWF_ATOMIC "
                 "above the device's 16 KiB, by copy on write", kind="file", fs="xfs", page=65536,
                 nvme=["lbs=4096,size=320M," + ATOMIC16 + B32 + LOG4K],
                 setup="/usr/sbin/mkfs.xfs -q -f ${N0}n1 >/out/@ROW@/setup.log 2>&1; mkdir -p /mnt/@ROW@; "
                       "mount -t xfs ${N0}n1 /mnt/@ROW@",
                 target="/mnt/@ROW@", model="${N0}n1", logs=["N0"], paths=["rwf_atomic"], subdir=""),
            dict(name="xfs-16k-nomerges", what="XFS with 16 KiB blocks on the NAWUPF-16K, 32 KiB-boundary "
                 "namespace, queue/nomerges 2 (no merges)", kind="file", fs="xfs",
                 nvme=["lbs=4096,size=320M," + ATOMIC16 + B32 + LOG4K],
                 setup="echo 2 > /sys/block/${N0##*/}n1/queue/nomerges; "
                       "/usr/sbin/mkfs.xfs -q -f -b size=16384 ${N0}n1 >/out/@ROW@/setup.log 2>&1; "
                       "mkdir -p /mnt/@ROW@; mount -t xfs ${N0}n1 /mnt/@ROW@",
                 target="/mnt/@ROW@", model="${N0}n1", logs=["N0"], paths=["plain_direct"], subdir=""),
            dict(name="ext4-bigalloc-16k", what="ext4, bigalloc 16 KiB clusters, on the NAWUPF-16K namespace",
                 kind="file", fs="ext4", nvme=["lbs=4096,size=64M," + ATOMIC16 + B32 + LOG4K],
                 setup="/usr/sbin/mke2fs -q -F -t ext4 -O bigalloc -C 16384 ${N0}n1 >/out/@ROW@/setup.log 2>&1; "
                       "mkdir -p /mnt/@ROW@; mount -t ext4 ${N0}n1 /mnt/@ROW@",
                 target="/mnt/@ROW@", model="${N0}n1", logs=["N0"], paths=DEV_PATHS, subdir=""),
            dict(name="ext4-bigalloc-16k-nomerges", what="ext4 bigalloc 16 KiB on the NAWUPF-16K namespace, "
                 "queue/nomerges 2 (no merges)", kind="file", fs="ext4",
                 nvme=["lbs=4096,size=64M," + ATOMIC16 + B32 + LOG4K],
                 setup="echo 2 > /sys/block/${N0##*/}n1/queue/nomerges; "
                       "/usr/sbin/mke2fs -q -F -t ext4 -O bigalloc -C 16384 ${N0}n1 >/out/@ROW@/setup.log 2>&1; "
                       "mkdir -p /mnt/@ROW@; mount -t ext4 ${N0}n1 /mnt/@ROW@",
                 target="/mnt/@ROW@", model="${N0}n1", logs=["N0"], paths=["plain_direct"], subdir=""),
            dict(name="overlayfs-ext4", what="overlayfs, upper layer on ext4 bigalloc 16 KiB, NAWUPF-16K namespace",
                 kind="file", fs="ext4", nvme=["lbs=4096,size=64M," + ATOMIC16 + B32 + LOG4K],
                 setup="/usr/sbin/mke2fs -q -F -t ext4 -O bigalloc -C 16384 ${N0}n1 >/out/@ROW@/setup.log 2>&1; "
                       "mkdir -p /mnt/@ROW@-low; mount -t ext4 ${N0}n1 /mnt/@ROW@-low; "
                       "mkdir -p /mnt/@ROW@-low/lower /mnt/@ROW@-low/upper /mnt/@ROW@-low/work /mnt/@ROW@; "
                       "mount -t overlay overlay -o lowerdir=/mnt/@ROW@-low/lower,upperdir=/mnt/@ROW@-low/upper,"
                       "workdir=/mnt/@ROW@-low/work /mnt/@ROW@ >>/out/@ROW@/setup.log 2>&1",
                 target="/mnt/@ROW@", model="${N0}n1", logs=["N0"], paths=DEV_PATHS, subdir="upper"),
        ],
    },
    "merges": {
        # what the block layer can merge (a write of max_sectors_kb never is), dm-striped and
        # dm-crypt as Linux 7.3 runs them, a loop device's direct writes to its backing file,
        # Google's per-block promise under merges; each beside its negative control
        "extra": ["--module", "xfs", "--module", "dm_crypt", "--module", "crypto_null", "--module", "loop",
                  "--copy", "/usr/sbin/mkfs.xfs", "--copy", "/usr/sbin/losetup"],
        "rows": [
            dict(name="nvme-b32k-cap16", what="NVMe NAWUPF 16 KiB, 32 KiB boundary, merges on, max_sectors_kb 16: "
                 "a 16 KiB write is max_sectors_kb itself and is never merged", kind="raw",
                 nvme=["lbs=4096,size=16M," + ATOMIC16 + B32 + LOG4K], setup=CAP16.format("${N0##*/}n1"),
                 target="${N0}n1", logs=["N0"], paths=["plain_direct"]),
            dict(name="nvme-b32k-cap16-8k", what="the same with 8 KiB pages: two on either side of a boundary merge "
                 "into one 16 KiB command across it (negative control)", kind="raw", page=8192, control=True,
                 nvme=["lbs=4096,size=16M," + ATOMIC16 + B32 + LOG4K], setup=CAP16.format("${N0##*/}n1"),
                 target="${N0}n1", logs=["N0"], paths=["plain_direct"]),
            dict(name="nvme-b32k-cap8", what="NVMe NAWUPF 16 KiB, 32 KiB boundary, merges on, max_sectors_kb 8, "
                 "8 KiB pages: each is max_sectors_kb itself", kind="raw", page=8192, ci=False,
                 nvme=["lbs=4096,size=16M," + ATOMIC16 + B32 + LOG4K],
                 setup=CAP16.format("${N0##*/}n1").replace("echo 16", "echo 8"),
                 target="${N0}n1", logs=["N0"], paths=["plain_direct"]),
            dict(name="dm-striped-16k", what="dm-striped, 16 KiB chunks, over two NAWUPF-16K, 32 KiB-boundary "
                 "namespaces with merges on and max_sectors_kb 16", kind="raw",
                 nvme=["lbs=4096,size=16M," + ATOMIC16 + B32 + LOG4K] * 2,
                 setup=striped_on_two(32, "mxst16"),
                 target="/dev/mapper/mxst16", model="${N0}n1", logs=["N0", "N1"], paths=["plain_direct"]),
            dict(name="dm-striped-8k", what="dm-striped, 8 KiB chunks, over the same namespaces: a 16 KiB page "
                 "reaches two members (negative control)", kind="raw", control=True, ci=False,
                 nvme=["lbs=4096,size=16M," + ATOMIC16 + B32 + LOG4K] * 2,
                 setup=striped_on_two(16, "mxst8"),
                 target="/dev/mapper/mxst8", model="${N0}n1", logs=["N0", "N1"], paths=["plain_direct"]),
            # the null cipher keeps the torture stamps readable in the namespace's log: dm-crypt's write
            # path (one clone per write, split above max_write_size) is the same for every cipher
            dict(name="dm-crypt-nomerges", what="dm-crypt (cipher_null-ecb, 512-byte sectors) over a NAWUPF-16K, "
                 "32 KiB-boundary namespace with queue/nomerges 2", kind="raw",
                 nvme=["lbs=4096,size=16M," + ATOMIC16 + B32 + LOG4K],
                 setup=crypt_nomerges("mxcr"),
                 target="/dev/mapper/mxcr", model="${N0}n1", logs=["N0"], paths=["plain_direct"]),
            dict(name="loop-dio-xfs", what="loop device with direct I/O over a file on XFS (4 KiB blocks) on a "
                 "NAWUPF-16K, 32 KiB-boundary namespace with merges on, 4 KiB pages", kind="raw", page=4096,
                 fs="xfs", file="img", nvme=["lbs=4096,size=320M," + ATOMIC16 + B32 + LOG4K],
                 setup=loop_on_xfs("on"),
                 target="$LOOPDEV", model="${N0}n1", logs=["N0"], paths=["plain_direct"],
                 teardown="/usr/sbin/losetup -d $LOOPDEV; sync"),
            dict(name="loop-buffered-xfs", what="the same loop device without direct I/O, 16 KiB pages: writes go "
                 "through the file's page cache (negative control)", kind="raw", control=True,
                 fs="xfs", file="img", nvme=["lbs=4096,size=320M," + ATOMIC16 + B32 + LOG4K],
                 setup=loop_on_xfs("off"),
                 target="$LOOPDEV", model="${N0}n1", logs=["N0"], paths=["plain_direct"], ci=False,
                 teardown="/usr/sbin/losetup -d $LOOPDEV; sync"),
            dict(name="pd-maxio-8k-8k", what="Google PD scsi-hd, 8 KiB maximum transfer (max_sectors_kb 8), merges "
                 "on, 8 KiB pages: each is max_sectors_kb itself, inside one physical block", kind="raw", page=8192,
                 ci=False, scsi=[PD + ",size=16M,max_io_size=8192" + LOG512], target="$S0", logs=["S0"],
                 paths=["plain_direct"]),
            dict(name="pd-whole-8k", what="Google PD scsi-hd, whole disk, merges on, 8 KiB pages: two share a "
                 "physical block with a neighbour's part in a merged command across one (negative control)",
                 kind="raw", page=8192, control=True, ci=False, scsi=[PD + ",size=16M" + LOG512], target="$S0",
                 logs=["S0"], paths=["plain_direct"]),
        ],
    },
    "target": {
        # kind target: lcloud-target on a file in the guest, connected over nvme-tcp loopback; the
        # paths write regions of its namespace at REGION offsets, its own --write-log is the log; a row
        # with tsetup may stack a device above the namespace ($TT, the device the paths write) and with
        # namespaces 2 serves a second ($TDEV2), tteardown undoes tsetup before the target stops; cuts
        # False: no power cuts where the files they leave would have to be read through the stack (torture
        # verify reads the backing file as it is): the oracle and its crash images judge
        "extra": ["--module", "nvme-tcp", "--mem", "1536", "--out-size", "512M", "--module", "xfs",
                  "--module", "dm_crypt", "--module", "crypto_null", "--module", "loop",
                  "--copy", "/usr/sbin/mkfs.xfs", "--copy", "/usr/sbin/losetup"],
        "rows": [
            dict(name="target-honest", what="lcloud-target 4 KiB LBA, NAWUN=NAWUPF 16 KiB, volatile cache on",
                 kind="target", target_opts=TARGET_PROMISE + " --volatile-write-cache on", paths=NVME_PATHS),
            dict(name="target-honest-nocache", what="lcloud-target 4 KiB LBA, NAWUN=NAWUPF 16 KiB, no volatile "
                 "cache (every write durable when it completes: a cut decides only the writes in flight)",
                 kind="target", target_opts=TARGET_PROMISE + " --volatile-write-cache off", paths=NVME_PATHS),
            dict(name="target-liar", what="lcloud-target 4 KiB LBA, NAWUN=NAWUPF 16 KiB, volatile cache on, "
                 "--liar: the promise advertised and not kept (negative control)", kind="target", liar=True,
                 target_opts=TARGET_PROMISE + " --volatile-write-cache on --liar", paths=NVME_PATHS),
            dict(name="target-nopromise", what="lcloud-target 512 B LBA, no atomic parameters, volatile cache on",
                 kind="target", target_opts="--lba-size 512 --volatile-write-cache on", paths=NVME_PATHS),
            dict(name="target-b32k-cap16", what="lcloud-target NAWUN=NAWUPF 16 KiB, 32 KiB boundary, volatile cache "
                 "on, the host's merges on and max_sectors_kb 16", kind="target", ci=False,
                 target_opts=TARGET_PROMISE + " --nabspf 32K --volatile-write-cache on",
                 tsetup=CAP16.format("${TDEV##*/}"), paths=["plain_direct"]),
            dict(name="target-b32k-cap16-8k", what="the same with 8 KiB pages (negative control)", kind="target",
                 ci=False, page=8192, control=True,
                 target_opts=TARGET_PROMISE + " --nabspf 32K --volatile-write-cache on",
                 tsetup=CAP16.format("${TDEV##*/}"), paths=["plain_direct"]),
            dict(name="target-b32k-cap8", what="lcloud-target NAWUN=NAWUPF 16 KiB, 32 KiB boundary, volatile cache "
                 "on, the host's merges on and max_sectors_kb 8, 8 KiB pages: each is max_sectors_kb itself",
                 kind="target", ci=False, page=8192,
                 target_opts=TARGET_PROMISE + " --nabspf 32K --volatile-write-cache on",
                 tsetup=CAP16.format("${TDEV##*/}").replace("echo 16", "echo 8"), paths=["plain_direct"]),
            dict(name="target-dm-striped-16k", what="dm-striped, 16 KiB chunks, over the two namespaces of one "
                 "lcloud-target (NAWUN=NAWUPF 16 KiB, 32 KiB boundary, volatile cache on), each with merges on "
                 "and max_sectors_kb 16", kind="target", ci=False, namespaces=2, cuts=False,
                 target_opts=TARGET_PROMISE + " --nabspf 32K --volatile-write-cache on",
                 tsetup=striped_on_two(32, "tgst16", "$TDEV", "$TDEV2") + "; TT=/dev/mapper/tgst16",
                 tteardown="dmsetup remove tgst16", paths=["plain_direct"]),
            dict(name="target-dm-striped-8k", what="the same with 8 KiB chunks: a 16 KiB page reaches two members "
                 "(negative control)", kind="target", ci=False, namespaces=2, cuts=False, control=True,
                 target_opts=TARGET_PROMISE + " --nabspf 32K --volatile-write-cache on",
                 tsetup=striped_on_two(16, "tgst8", "$TDEV", "$TDEV2") + "; TT=/dev/mapper/tgst8",
                 tteardown="dmsetup remove tgst8", paths=["plain_direct"]),
            # its power cuts' files are read as they are: the null cipher and no offset keep the bytes; the
            # kernel's look at the new dm device (its partition scan) reads some 40 commands more before the
            # run writes, so the cuts come that much later (the first one still in the fill)
            dict(name="target-dm-crypt-nomerges", what="dm-crypt (cipher_null-ecb, 512-byte sectors) over "
                 "lcloud-target (NAWUN=NAWUPF 16 KiB, 32 KiB boundary, volatile cache on) with queue/nomerges 2",
                 kind="target", ci=False, cut_later=40,
                 target_opts=TARGET_PROMISE + " --nabspf 32K --volatile-write-cache on",
                 tsetup=crypt_nomerges("tgcr", "$TDEV") + "; TT=/dev/mapper/tgcr",
                 tteardown="dmsetup remove tgcr", paths=["plain_direct"]),
            dict(name="target-loop-dio-xfs", what="loop device with direct I/O over a file on XFS (4 KiB blocks) "
                 "on lcloud-target (NAWUN=NAWUPF 16 KiB, 32 KiB boundary, volatile cache on) with merges on, "
                 "4 KiB pages", kind="target", ci=False, cuts=False, page=4096, fs="xfs", file="img",
                 target_size=320 << 20, target_opts=TARGET_PROMISE + " --nabspf 32K --volatile-write-cache on",
                 tsetup=loop_on_xfs("on", "$TDEV") + "; TT=$LOOPDEV",
                 tteardown="/usr/sbin/losetup -d $LOOPDEV; umount /mnt/@ROW@; sync", paths=["plain_direct"]),
            dict(name="target-loop-buffered-xfs", what="the same loop device without direct I/O, 16 KiB pages: "
                 "writes go through the file's page cache (negative control)", kind="target", ci=False,
                 cuts=False, control=True, fs="xfs", file="img",
                 target_size=320 << 20, target_opts=TARGET_PROMISE + " --nabspf 32K --volatile-write-cache on",
                 tsetup=loop_on_xfs("off", "$TDEV") + "; TT=$LOOPDEV",
                 tteardown="/usr/sbin/losetup -d $LOOPDEV; umount /mnt/@ROW@; sync", paths=["plain_direct"]),
        ],
    },
}


TARGET_SHELL = r'''
ip link set lo up
modprobe nvme-tcp || echo "modprobe nvme-tcp failed" >&2
mkdir -p /srv && mount -t tmpfs -o size=256M tmpfs /srv
HOSTID=4d5e6f70-8192-43a4-b5c6-d7e8f90a1b2c
stamp() { echo "$(cut -d' ' -f1 /proc/uptime) $*" | tee -a /out/times; }  # where the guest's time goes
tstart() { # serial port lcloud-target options... : starts the target on /srv/SERIAL.img, sets TPID and TDEV
    s=$1; port=$2; shift 2
    rm -f /tmp/listen-$s
    "$LCLOUD_TARGET" --ns /srv/$s.img --nqn nqn.2026-12.org.liblcloud:$s --listen 127.0.0.1:$port \
        --serial $s "$@" > /tmp/listen-$s 2>> /out/target-$s.log &
    TPID=$!
    i=0; until grep -q '^listening' /tmp/listen-$s 2>/dev/null; do i=$((i+1)); [ $i -gt 100 ] && break; sleep 0.05; done
    # the host gives up on a dead target at once, so a run ends when the target's power does
    nvme connect -t tcp -a 127.0.0.1 -s $port -n nqn.2026-12.org.liblcloud:$s --ctrl-loss-tmo=0 \
        --reconnect-delay=1 --hostnqn=nqn.2014-08.org.nvmexpress:uuid:$HOSTID --hostid=$HOSTID > /dev/null 2>&1
    TDEV=
    i=0; while [ -z "$TDEV" ] && [ $i -lt 100 ]; do
        for d in /sys/block/nvme*n1; do
            # quoted: a namespace appearing between the glob and the read must not match by a glob
            [ -e "$d" ] || continue
            case ${d##*/} in *c*) continue ;; esac
            [ "$(cat "$d/device/serial" 2>/dev/null | tr -d ' ')" = "$s" ] && TDEV=/dev/${d##*/}
        done
        i=$((i+1)); sleep 0.05
    done
    TDEV2=${TDEV%n1}n2 TT=$TDEV  # a second namespace's device, if served; the device the paths write
}
tstop() { # serial: disconnect, then stop the target (at once, if no cut stopped it)
    nvme disconnect -n nqn.2026-12.org.liblcloud:$1 > /dev/null 2>&1
    kill $TPID 2>/dev/null; wait $TPID
}
tcut() { # row serial path n seed cut-after options... : one power cut of a fresh target during torture run
    r=$1; s=$2; p=$3; n=$4; seed=$5; after=$6; shift 6
    rm -f /srv/$s.img; truncate -s ''' + str(TARGET_SIZE) + r''' /srv/$s.img
    tstart $s 4499 --seed $seed --cut-after $after --power-report /out/$r/cut-$p-$n.report "$@"
    eval "$TSETUP" # the row's host side, once the namespace is there (TPAGE: its page size; TT: the device)
    "$LCLOUDCTL" torture run "$TT" --page-size $TPAGE --pages $PAGES --path $p --depth $DEPTH --writes 1000000 \
        --seed $seed --force --record /out/$r/cut-$p-$n.rec > /dev/null 2>> /out/$r/cut-run.log
    echo "$p $n run $?" >> /out/$r/cut.rcs
    # a run that ended before the count was reached (it failed) leaves the power on: cut it here
    if kill -0 $TPID 2>/dev/null; then kill -USR1 $TPID; echo "$p $n cut-by-signal" >> /out/$r/cut.rcs; fi
    wait $TPID; echo "$p $n target $?" >> /out/$r/cut.rcs
    eval "$TTEARDOWN"
    tstop $s
    "$LCLOUDCTL" torture verify /srv/$s.img --record /out/$r/cut-$p-$n.rec --format json \
        > /out/$r/cut-$p-$n.verify.json 2>> /out/$r/cut-verify.log
    echo "$p $n verify $?" >> /out/$r/cut.rcs
    rm -f /srv/$s.img
    stamp cut $r $p $n
}'''


def cut_points(cuts):
    """(seed, cut-after) of each power cut: the first during the fill (every page written so far is
    cached, none flushed), the others spread over the random writes (at most one batch cached). The
    count includes the reads of connecting (the kernel's partition scan) and of torture run's own
    look at the device, some 30 commands; the later ones step by 4 more than an even spread, as a
    batch and its flush are 9 commands and a cut on a batch's first write finds nothing cached."""
    return [(100 + i, 60 + i * 240 // max(cuts - 1, 1) + 4 * i) for i in range(cuts)]


def target_rows_script(rows, cuts):
    """The shell for the lcloud-target rows: per row one target with its write log for the paths,
    then CUTS fresh targets per path that ran, each cut during torture run."""
    sh = [TARGET_SHELL]
    for i, row in enumerate(rows):
        r, serial = row["name"], "mx-t%d" % i
        sh.append("mkdir -p /out/%s" % r)
        size, ns = row.get("target_size", TARGET_SIZE), row.get("namespaces", 1)
        files = ["/srv/%s%s.img" % (serial, "-%d" % n if n else "") for n in range(ns)]
        sh.append("truncate -s %d %s" % (size, " ".join(files)))
        log = "ns%n.log" if ns > 1 else "ns1.log"
        sh.append("tstart %s %d --write-log /out/%s/%s %s %s" % (serial, 4440 + i, r, log, row["target_opts"],
                                                              " ".join("--ns " + f for f in files[1:])))
        if ns > 1:  # the second namespace appears after the first
            sh.append("i=0; while [ ! -b $TDEV2 ] && [ $i -lt 100 ]; do i=$((i+1)); sleep 0.05; done")
        sh.append("TSETUP='%s'; TTEARDOWN='%s'; TPAGE=%d; eval \"$TSETUP\"" % (
            row.get("tsetup", "").replace("@ROW@", r), row.get("tteardown", "").replace("@ROW@", r),
            row.get("page", PAGE_BYTES)))
        sh.append('echo "$TDEV" > /out/%s/dev' % r)
        sh.append('ls /dev/ng* > /out/%s/generic-nodes 2>&1' % r)  # passthrough needs the char device
        sh.append('stamp started %s; probe2 %s "$TT" "$TDEV"; stamp probed %s' % (r, r, r))
        for j, p in enumerate(row["paths"]):
            sh.append('path1 %s "$TT" %s %d %d "$TT" %d; stamp ran %s %s' % (r, p, j * REGION, 100 + j,
                                                                            row.get("page", PAGE_BYTES), r, p))
        sh.append('eval "$TTEARDOWN"')
        sh.append("tstop %s; rm -f %s; stamp stopped %s" % (serial, " ".join(files), r))
        for p in (p for p in row["paths"] if p in CUT_PATHS and row.get("cuts", True)):
            # a path refused before writing (exit 7) writes nothing a cut could tear
            sh.append('if [ "$(cat /out/%s/run-%s.rc)" != 7 ]; then' % (r, p))
            for n, (seed, after) in enumerate(cut_points(cuts)):
                sh.append("  tcut %s %sc %s %d %d %d %s" % (r, serial, p, n, seed, after + row.get("cut_later", 0),
                                                          row["target_opts"]))
            sh.append("fi")
        sh.append("echo %s >> /out/done" % r)
    return sh


def guest_script(boot, rows, cuts=CUTS_CI):
    """The shell for one boot: every row's setup, probe, checks and runs."""
    sh = ["set -u", "PAGES=%d WRITES=%d DEPTH=%d" % (PAGES, WRITES, DEPTH),
          'uname -r > /out/uname-r',
          r'''
probe2() { # row target modeldev
  "$LCLOUDCTL" probe --format json "$2" > /out/$1/probe.json 2>/out/$1/probe.err
  "$LCLOUDCTL" probe --format json "$3" > /out/$1/model.json 2>/out/$1/model.err
}
path1() { # row target path offset seed check-target page-size
  "$LCLOUDCTL" check --size $7 --path $3 --format json "$6" > /out/$1/check-$3.json 2>/out/$1/check-$3.err
  echo $? > /out/$1/check-$3.rc
  "$LCLOUDCTL" torture run "$2" --page-size $7 --pages $PAGES --path $3 --depth $DEPTH --writes $WRITES \
      --offset $4 --seed $5 --force --record /out/$1/$3.rec --format json > /out/$1/run-$3.json 2>/out/$1/run-$3.err
  echo $? > /out/$1/run-$3.rc
}''']
    target_rows = [row for row in rows if row["kind"] == "target"]
    if target_rows:
        sh += target_rows_script(target_rows, cuts)
    nvme = scsi = 0
    for row in rows:
        if row["kind"] == "target":
            continue
        r = row["name"]
        sh.append("mkdir -p /out/%s" % r)
        names = []
        for _ in row.get("nvme", []):
            names.append("N%d" % len(names))
            sh.append("N%d=$LCVM_NVME%d" % (len(names) - 1, nvme))
            nvme += 1
        for _ in row.get("scsi", []):
            sh.append("S%d=$LCVM_SCSI%d" % (len(names), scsi))
            names.append("S%d" % len(names))
            scsi += 1
        if row.get("setup"):
            sh.append(row["setup"].replace("@ROW@", r))
        target, model = row["target"].replace("@ROW@", r), row.get("model", row["target"])
        if row["kind"] == "file":
            sh.append('touch "%s/probe-me"' % target)
            sh.append('probe2 %s "%s/probe-me" "%s"' % (r, target, model))
        else:
            sh.append('probe2 %s "%s" "%s"' % (r, target, model))
        if row.get("scsi_debug") and STATX_READER:
            sh.append('"$STATX_READER" "%s" > /out/%s/statx 2>&1' % (target, r))
        for i, p in enumerate(row["paths"]):
            if row["kind"] == "file":
                # check answers for a new file in the directory (it confirms RWF_ATOMIC on a temporary file)
                sh.append('path1 %s "%s/torture-%s" %s 0 %d "%s" %d' % (r, target, p, p, 100 + i, target,
                                                                        row.get("page", PAGE_BYTES)))
            else:
                sh.append('path1 %s "%s" %s %d %d "%s" %d' % (r, target, p, i * REGION, 100 + i, target,
                                                              row.get("page", PAGE_BYTES)))
        if row["kind"] == "file":
            sh.append("sync")
        if row.get("teardown"):
            sh.append(row["teardown"].replace("@ROW@", r))
        sh.append("echo %s >> /out/done" % r)
    # unmount cleanly so the final images are consistent; the logs keep every write
    sh.append("for m in $(grep ' /mnt/' /proc/mounts | cut -d' ' -f2 | sort -r); do umount $m; done")
    sh.append("sync")
    return "\n".join(sh) + "\n"


def devices_for(boot, rows, partimg):
    args = list(BOOTS[boot]["extra"])
    nvme = scsi = 0
    for row in rows:
        for spec in row.get("nvme", []):
            args += ["--nvme", spec + ",serial=mx%02d" % nvme]
            row.setdefault("log_names", []).append("nvme%d-n1" % nvme)
            nvme += 1
        for spec in row.get("scsi", []):
            args += ["--scsi", spec.replace("@PARTIMG@", partimg)]
            row.setdefault("log_names", []).append("scsi%d" % scsi)
            scsi += 1
        if row.get("scsi_debug"):
            args += ["--scsi-debug", row["scsi_debug"]]
    if any(row["kind"] == "target" for row in rows):
        if not LCLOUD_TARGET:
            raise AssertionError("LCLOUD_TARGET is not set (meson sets it)")
        target = os.path.realpath(LCLOUD_TARGET)
        args += ["--copy", target, "--env", "LCLOUD_TARGET=" + target]
        for row in rows:
            if row["kind"] == "target":  # the target's own write logs, /out/ROW/nsN.log
                row["log_names"] = ["ns%d" % (n + 1) for n in range(row.get("namespaces", 1))]
    if STATX_READER:
        reader = os.path.realpath(STATX_READER)
        args += ["--copy", reader, "--env", "STATX_READER=" + reader]
    return args


def make_partition_image(path):
    """A 20 MiB disk with one partition from sector 20488 (4 KiB past a 16 KiB boundary)."""
    with open(path, "wb") as f:
        f.truncate(20 << 20)
    subprocess.run(["sfdisk", "--quiet", "--no-reread", "--no-tell-kernel", path],
                   input="label: dos\nstart=20488, size=16384, type=83\n", text=True, check=True,
                   capture_output=True)


def ctl(*args, ok=(0,)):
    p = subprocess.run([os.environ["LCLOUDCTL"]] + [str(a) for a in args], capture_output=True, text=True)
    if p.returncode not in ok:
        raise AssertionError("lcloudctl %s: exit %d\n%s%s" % (" ".join(map(str, args)), p.returncode,
                                                             p.stdout[-2000:], p.stderr[-2000:]))
    as_json = ("-o" in args or "--format" in args) and p.stdout.strip()
    return p.returncode, (json.loads(p.stdout) if as_json else p.stdout)


def rtext(path, default=""):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return default


class Mounted:
    """An image loop-mounted on the host (the file system recovers its journal)."""

    def __init__(self, image, fs):
        self.dir = tempfile.mkdtemp(prefix="lcloud-mx-mnt-")
        subprocess.run(["mount", "-t", fs, "-o", "loop", image, self.dir], check=True, capture_output=True)

    def __enter__(self):
        return self.dir

    def __exit__(self, *exc):
        subprocess.run(["umount", self.dir], capture_output=True)
        os.rmdir(self.dir)


def torn_pages(report):
    """Pages that hold part of a write and part of something else. The record holds every write of
    the run, also those acknowledged after the cut, so a page with no block of the run at all is
    one not yet written at the cut (verify calls it damaged, or lost), not a tear; a page with
    blocks of the run beside blocks without a stamp is a first write torn over what was there."""
    n = 0
    for page in report["page_reports"]:
        kinds = {part["kind"] for part in page["parts"]}
        if page["status"] == "torn" or (page["status"] == "damaged" and "generation" in kinds):
            n += 1
    return n


def verify(image, rec, offset=None, fs=None, file=None):
    """torture verify on a crash image (a file system's: the file on it mounted): its torn pages."""
    if fs:
        with Mounted(image, fs) as mnt:
            if not os.path.exists(os.path.join(mnt, file)):
                return 0  # cut before the file was created or its directory entry reached the disk
            _, report = ctl("torture", "verify", os.path.join(mnt, file), "--record", rec, "--format", "json",
                            ok=(0, 9, 10))
    else:
        _, report = ctl("torture", "verify", image, "--record", rec, "--offset", offset, "--format", "json",
                        ok=(0, 9, 10))
    return torn_pages(report)


def analyse_path(row, path, files, logs, tmp):
    d = os.path.join(files, row["name"])
    res = {"path": path, "page_size": row.get("page", PAGE_BYTES)}
    crc = rtext(os.path.join(d, "check-%s.rc" % path)).strip()
    res["check_exit"] = int(crc) if crc else None
    chk = {}
    try:
        chk = json.loads(rtext(os.path.join(d, "check-%s.json" % path)))
    except ValueError:
        pass
    res["check_answer"] = chk.get("answer")
    res["check_why"] = chk.get("why") or rtext(os.path.join(d, "check-%s.err" % path)).strip()
    rrc = rtext(os.path.join(d, "run-%s.rc" % path)).strip()
    res["run_exit"] = int(rrc) if rrc else None
    res["run_error"] = rtext(os.path.join(d, "run-%s.err" % path)).strip()[-400:]
    run = {}
    try:
        run = json.loads(rtext(os.path.join(d, "run-%s.json" % path)))
    except ValueError:
        pass
    res["acknowledged_writes"] = run.get("writes")
    res.update(page_writes=None, tearable=None, tearable_in_place=None, relocated=None, rules={},
               crash_images=0, torn_images=0, notes=[])
    if res["run_exit"] != 0 or not run:
        return res
    rec = os.path.join(d, "%s.rec" % path)
    if not row["log_names"]:
        res["notes"].append("no write log possible (scsi_debug keeps its disk in kernel memory)")
        return res
    model = os.path.join(d, "model.json")
    if row["kind"] == "target":  # the target's own log, in the row's folder
        log_files = [os.path.join(d, n + ".log") for n in row["log_names"]]
    else:
        log_files = [os.path.join(logs, n + ".log") for n in row["log_names"]]
    _, rep = ctl("replay", *log_files, "--model-from", model, "--run", run["run_id"], "--all", "--format", "json",
                 ok=(0, 11))
    pw = rep["page_writes"]
    res["model"] = {k: rep["model"][k] for k in ("lba", "atomic_bytes", "boundary", "boundary_offset",
                                                 "volatile_cache")}
    res["page_writes"] = rep["summary"]["page_writes"]
    tear = [w for w in pw if w["verdict"] == "tearable"]
    res["tearable"] = len(tear)
    res["relocated"] = sum(1 for w in tear if w.get("relocated"))
    res["tearable_in_place"] = sum(1 for w in tear if w.get("relocated") is False) if row.get("fs") else len(tear)
    for w in tear:
        for rule in w["rules"]:
            res["rules"][rule] = res["rules"].get(rule, 0) + 1
    res["incomplete"] = rep["summary"]["incomplete"]
    # what the device received for the tearable page writes: the commands' sizes say split or merged
    res["tearable_command_bytes"] = sorted({c["length"] for w in tear for c in w["commands"]})
    if len(log_files) != 1:
        res["notes"].append("crash images are made from one log; %d logs (md members): the oracle alone judges"
                            % len(log_files))
        return res
    if row["kind"] == "target":  # its backing file started as zeros
        desc = {"start_image": None, "image_size": row.get("target_size", TARGET_SIZE)}
    else:
        desc = json.load(open(os.path.join(logs, row["log_names"][0] + ".json")))
    base = os.path.join(logs, desc["start_image"]) if desc["start_image"] else None
    if not base:
        base = os.path.join(tmp, "zeros-%d.img" % desc["image_size"])
        if not os.path.exists(base):
            with open(base, "wb") as f:
                f.truncate(desc["image_size"])
    fs, file = row.get("fs"), None
    if fs:
        file = row.get("file") or os.path.join(row["subdir"], "torture-" + path)
    offset = row.get("part_start", 0) + row.get("dev_shift", 0) + (0 if fs else row["paths"].index(path) * REGION)
    crash = os.path.join(tmp, "crash.img")
    # the tearing cuts: every tearable page write's image (devices: --cut-all looks at the blocks)
    if tear and not fs:
        code, ca = ctl("replay", log_files[0], "--model-from", model, "--run", run["run_id"], "--base", base,
                       "--out", crash, "--cut-all", "--keep-going", "--format", "json", ok=(0, 9))
        res["crash_images"] += ca["tried"]
        res["torn_images"] += ca["shown_torn"]
        if code == 9:
            res["verify_kept_image_torn_pages"] = verify(crash, rec, offset)
    elif tear:
        # file systems: the file as the mounted image shows it, for a sample of the tearing cuts
        cuts = sorted({(w["tearing_cut"]["cut"], w["tearing_cut"]["tear_blocks"]) for w in tear})
        for cut, blocks in sample(cuts, 12):
            ctl("replay", log_files[0], "--model-from", model, "--base", base, "--out", crash, "--cut", cut,
                "--tear", blocks, "--format", "json")
            res["crash_images"] += 1
            res["torn_images"] += verify(crash, rec, fs=fs, file=file) > 0
    # plain cuts between commands, anywhere in the run: no image may show a torn page where the verdict holds
    entries = sorted({c["entry"] for w in pw for c in w["commands"]})
    if entries:
        for cut in sample(list(range(entries[0], entries[-1] + 2)), 4 if fs else 6):
            ctl("replay", log_files[0], "--model-from", model, "--base", base, "--out", crash, "--cut", cut,
                "--format", "json")
            res["crash_images"] += 1
            res["torn_images"] += verify(crash, rec, offset, fs=fs, file=file) > 0
    if os.path.exists(crash):
        os.unlink(crash)
    if row["kind"] == "target":
        res.update(target_cuts(d, path))
        if res.get("cut_errors"):
            res["notes"].append("power cut runs %s left no record to verify" % res["cut_errors"])
    return res


def target_cuts(d, path):
    """The target's own power cuts on PATH: what torture verify found in each surviving backing
    file, and what the target's power report says it did with the writes it held."""
    n = 0
    cut = dict(cuts=0, cut_runs=0, cut_pages=0, cut_torn=0, cut_lost=0, cut_held_writes=0,
               cut_torn_writes=0, cut_torn_covered_writes=0)
    while os.path.exists(os.path.join(d, "cut-%s-%d.rec" % (path, n))) or \
            os.path.exists(os.path.join(d, "cut-%s-%d.report" % (path, n))):
        cut["cut_runs"] += 1
        report = rtext(os.path.join(d, "cut-%s-%d.report" % (path, n)))
        if report.startswith("# lcloud-target power cut"):
            cut["cuts"] += 1
        for line in report.splitlines():
            f = line.split()
            if line.startswith("#") or len(f) < 6:
                continue
            cut["cut_held_writes"] += 1
            if f[5] == "torn":
                cut["cut_torn_writes"] += 1
                cut["cut_torn_covered_writes"] += f[4] == "covered"
        try:
            v = json.loads(rtext(os.path.join(d, "cut-%s-%d.verify.json" % (path, n))))
            s = v["summary"]
            cut["cut_pages"] += s["intact"] + s["torn"] + s["damaged"] + s["unwritten"]
            cut["cut_torn"] += torn_pages(v)
            cut["cut_lost"] += s["lost_acknowledged_writes"]
        except (ValueError, KeyError):
            cut.setdefault("cut_errors", []).append(n)
        n += 1
    return cut


def sample(items, n):
    if len(items) <= n:
        return list(items)
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]


def judge(row, res):
    """The row's status under RULE, and whether it breaks the rule."""
    c, r = res["check_exit"], res["run_exit"]
    atomic_path = res["path"] in ("rwf_atomic", "passthrough")
    if c == 8:
        return "unknown", False
    if c not in (0, 6):
        return "check failed (exit %s): %s" % (c, res["check_why"][:200]), True
    if atomic_path and (c == 0) != (r != 7):
        return "INCONSISTENT: check exit %s but torture run exit %s: %s" % (c, r, res["run_error"][:200]), True
    if r == 7:
        return "refused before writing", False
    if r != 0:
        return "torture run failed (exit %s): %s" % (r, res["run_error"][:200]), True
    if res["page_writes"] is None:
        if c == 0:
            return "untorn; kernel accepted every write (%s)" % "; ".join(res["notes"]), False
        return "not untorn; %s" % "; ".join(res["notes"]), False
    bad = res["tearable_in_place"] or res["torn_images"]
    if row.get("fs") is None:
        bad = res["tearable"] or res["torn_images"]
    cut_torn = res.get("cut_torn") or 0
    if c == 0:
        if bad:
            return "VERDICT WRONG: untorn, but %d tearable page writes (in commands of %s bytes), %d torn " \
                "images" % (res["tearable"], ", ".join(map(str, res["tearable_command_bytes"])),
                            res["torn_images"]), True
        if row.get("liar"):
            # the negative control: the commands are clean, the device breaks its promise
            if cut_torn:
                return "untorn claimed, broken by the device (negative control): the oracle finds no " \
                    "tearable page write in the device's log, its power cuts left %d torn pages" % cut_torn, False
            return "NEGATIVE CONTROL NOT SHOWN: the liar's %d power cuts left no torn page" % res.get("cuts", 0), \
                True
        if cut_torn:
            return "VERDICT WRONG: untorn, but the device's power cuts left %d torn pages" % cut_torn, True
        if res.get("cut_errors"):
            return "power cut runs %s not verified" % res["cut_errors"], True
        return "untorn, confirmed", False
    if row.get("control") and not res["tearable"]:
        return "NEGATIVE CONTROL NOT SHOWN: no, but the oracle found no tearable page write in this run", True
    if res["tearable"]:
        return "not untorn, confirmed%s" % (" (negative control)" if row.get("control") else ""), False
    return "conservative: the verdict says no (%s), but in this run the stack did not split a page " \
           "and the oracle finds every page write atomic" % res["check_why"], False


def run_boot(boot, rows, cuts, partimg, tmp):
    """Boot BOOT's ROWS once and analyse them on the host (in TMP, its own): (rows, boot entry,
    kernel)."""
    t0 = datetime.datetime.now()
    devices = devices_for(boot, rows, partimg)
    for row in rows:
        row.setdefault("log_names", [])
    reuse = os.environ.get("LCLOUD_MATRIX_REUSE_" + boot.upper())
    if reuse:  # analyse a kept guest result again (debugging the host side)
        import vmlib
        g = vmlib.GuestRun(reuse)
    else:
        g = run_guest(guest_script(boot, rows, cuts), devices, timeout=900, lane="current")
    t1 = datetime.datetime.now()
    if os.environ.get("LCLOUD_MATRIX_KEEP"):  # also when the analysis fails
        print("matrix.py: the %s boot's results are kept in %s" % (boot, g.outdir), file=sys.stderr)
        keep(g)
    kernel = rtext(os.path.join(g.files, "uname-r")).strip()
    logs = os.path.join(g.outdir, "logs")
    entries = []
    for row in rows:
        entry = {"name": row["name"], "what": row["what"], "boot": boot, "logs": row["log_names"], "paths": []}
        try:
            probe = json.load(open(os.path.join(g.files, row["name"], "probe.json")))
            entry["verdict"] = {p: probe["probes"][0]["verdict"].get(p, {}).get("max_untorn_bytes")
                                for p in row["paths"]}
        except (OSError, ValueError, KeyError, IndexError):
            entry["verdict"] = None
            entry["probe_error"] = rtext(os.path.join(g.files, row["name"], "probe.err"))[-400:]
        if row.get("scsi_debug"):
            entry["statx"] = rtext(os.path.join(g.files, row["name"], "statx")).strip()
        if rtext(os.path.join(g.files, row["name"], "loop-dio")):
            # what the kernel says the loop device does: direct I/O to its file (1) or not (0)
            entry["loop_dio"] = rtext(os.path.join(g.files, row["name"], "loop-dio")).strip()
        for p in row["paths"]:
            res = analyse_path(row, p, g.files, logs, tmp)
            res["status"], res["breaks_rule"] = judge(row, res)
            entry["paths"].append(res)
        entries.append(entry)
    done = {"boot": boot, "rows": len(rows), "guest_seconds": (t1 - t0).seconds,
            "host_seconds": (datetime.datetime.now() - t1).seconds}
    if not os.environ.get("LCLOUD_MATRIX_KEEP") and not reuse:
        shutil.rmtree(os.path.dirname(g.outdir), ignore_errors=True)
    return entries, done, kernel


def run_matrix(boots=None, cuts=CUTS_CI, ci=False):
    """Boot each group of rows once, analyse on the host: the matrix as a dict. CUTS: the
    power cuts of lcloud-target per row and path; CI: without the rows marked ci=False. Two boots
    run at a time (a guest and the host's analysis of another each keep one core busy), the
    longest first; the rows keep BOOTS' order."""
    tmp = tempfile.mkdtemp(prefix="lcloud-matrix-")
    started = datetime.datetime.now(datetime.timezone.utc)
    out = {"schema": 1, "date": started.strftime("%Y-%m-%d"), "page_size": PAGE_BYTES, "pages": PAGES,
           "writes": WRITES, "depth": DEPTH, "cuts": cuts, "rule": RULE, "boots": [], "rows": []}
    try:
        partimg = os.path.join(tmp, "pd-partition.img")
        make_partition_image(partimg)
        only = os.environ.get("LCLOUD_MATRIX_ROWS")  # a few rows by name, for a rule's work in progress
        todo = []
        for boot in boots or list(BOOTS):
            rows = [dict(r) for r in BOOTS[boot]["rows"] if (not ci or r.get("ci", True)) and
                    (not only or r["name"] in only.split(","))]
            if rows:
                os.mkdir(os.path.join(tmp, boot))
                todo.append((boot, rows))
        # the target boot's guest runs longest (its power cuts): started first, the others beside it
        order = sorted(todo, key=lambda t: t[0] != "target")
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            futures = {boot: pool.submit(run_boot, boot, rows, cuts, partimg, os.path.join(tmp, boot))
                       for boot, rows in order}
            for boot, _ in todo:
                entries, done, kernel = futures[boot].result()
                out["rows"] += entries
                out["boots"].append(done)
                out["kernel"] = kernel
        out["qemu"] = qemu_version()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def qemu_version():
    root = "/var/cache/lcloud-vm" if not os.environ.get("LCLOUD_VM_CACHE") else os.environ["LCLOUD_VM_CACHE"]
    try:
        names = sorted(n for n in os.listdir(os.path.join(root, "qemu")) if n.startswith("trixie-"))
    except OSError:
        return None
    return names[-1].split("%", 1)[-1] if names else None


def size(n):
    if n is None:
        return "-"
    if n == 0:
        return "none"
    return "%d KiB" % (n // 1024) if n % 1024 == 0 else "%d B" % n


def markdown(m):
    lines = ["# The proof matrix", "",
             "Generated by `tests/vm/matrix.py --write` (lane current) on %s: guest kernel %s, QEMU %s." % (
                 m["date"], m["kernel"], m["qemu"]),
             "Per path: %d pages of %d KiB, %d random writes after the fill, depth %d, under QEMU's write log." % (
                 m["pages"], m["page_size"] // 1024, m["writes"], m["depth"]), "",
             "Rule (test_matrix.py fails otherwise): " + " ".join(m["rule"].split()), "",
             "Columns: check = `lcloudctl check --size PAGE --path P` exit status (0 untorn, 6 no, 8 unknown); "
             "untorn = the verdict's largest untorn write on that path; run = `torture run` exit status "
             "(7: refused before writing); page writes / tearable (in place) = the oracle (`lcloudctl replay`) "
             "over the log with the device's model, by rule, with the sizes of the commands that carried the "
             "tearable page writes; images = crash images made / showing a torn page; power cuts "
             "(lcloud-target rows only) = the target's own power cuts during `torture run` (%d per path, "
             "the first in the fill), the pages `torture verify` read in the backing files they left and "
             "how many of them were torn." % m.get("cuts", 0), "",
             "| configuration | path | check | untorn | run | page writes | tearable (in place) | rules | "
             "images (torn) | power cuts: pages (torn) | status |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in m["rows"]:
        for p in row["paths"]:
            tear = "-" if p["tearable"] is None else "%d (%d)" % (p["tearable"], p["tearable_in_place"])
            rules = ", ".join("%s %d" % kv for kv in sorted(p["rules"].items())) or "-"
            cmds = p.get("tearable_command_bytes")
            if cmds:  # the sizes of the commands that carried them: merged (large) or split (small)
                rules += " (commands %s)" % "-".join(size(c) for c in sorted({cmds[0], cmds[-1]}))
            imgs = "-" if p["page_writes"] is None else "%d (%d)" % (p["crash_images"], p["torn_images"])
            verdict = (row.get("verdict") or {}).get(p["path"])
            status = p["status"]
            if status.startswith("conservative"):
                status = "conservative (reason below)"
            elif p["notes"] and p["page_writes"] is not None:
                status += "; " + "; ".join(p["notes"])
            path = p["path"]
            if p.get("page_size", m["page_size"]) != m["page_size"]:
                path += " (%s pages)" % size(p["page_size"])
            cuts = "-"
            if p.get("cut_runs"):
                cuts = "%d: %d (%d)" % (p["cuts"], p["cut_pages"], p["cut_torn"])
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                row["name"], path, p["check_exit"], size(verdict), p["run_exit"],
                "-" if p["page_writes"] is None else p["page_writes"], tear, rules, imgs, cuts,
                status.replace("|", "/")))
    broken = violations(m)
    lines += ["", "Rows that break the rule (verdict bugs):", ""] + ["- " + b for b in broken or ["none"]]
    cons = ["%s %s: %s" % (r["name"], p["path"], p["status"][len("conservative: "):]) for r in m["rows"]
            for p in r["paths"] if p["status"].startswith("conservative")]
    lines += ["", "Rows marked conservative (the verdict refuses, the run did not split a page):", ""]
    lines += ["- " + c for c in cons or ["none"]]
    cut_rows = [(r, p) for r in m["rows"] for p in r["paths"] if p.get("cut_runs")]
    if cut_rows:
        lines += ["", "lcloud-target's own power cuts (per path: cut runs, cuts the target reported, pages "
                  "`torture verify` checked in the files they left, torn pages, lost acknowledged and flushed "
                  "writes; from the target's power reports: the writes it held at the cuts (cached, or in "
                  "flight: with no cache, only those), those it tore, "
                  "and of those the ones its promise covered, which only a liar tears):", "",
                  "| configuration | path | check | runs | cuts | pages checked | torn | lost acknowledged | "
                  "writes held | torn writes | torn, covered by the promise |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r, p in cut_rows:
            lines.append("| %s | %s | %s | %d | %d | %d | %d | %d | %d | %d | %d |" % (
                r["name"], p["path"], p["check_exit"], p["cut_runs"], p["cuts"], p["cut_pages"], p["cut_torn"],
                p["cut_lost"], p["cut_held_writes"], p["cut_torn_writes"], p["cut_torn_covered_writes"]))
    lines += ["", "Configurations:", ""]
    for row in m["rows"]:
        model = next((p["model"] for p in row["paths"] if p.get("model")), None)
        extra = ""
        if model:  # what replay read from the probe of the logged disk (--model-from)
            extra = "; replay's model: LBA %s, atomic %s%s" % (
                size(model["lba"]), size(model["atomic_bytes"]),
                ", boundary %s from byte %d" % (size(model["boundary"]), model["boundary_offset"])
                if model["boundary"] else "")
        elif row.get("statx"):
            extra = "; no write log; statx: " + " ".join(row["statx"].split())
        lines.append("- `%s`: %s%s" % (row["name"], row["what"], extra))
    lines += ["", "Boots: " + "; ".join("%s: %d rows, guest %d s, host analysis %d s" % (
        b["boot"], b["rows"], b["guest_seconds"], b["host_seconds"]) for b in m["boots"]), ""]
    return "\n".join(lines)


def violations(m):
    return ["%s %s: %s" % (r["name"], p["path"], p["status"]) for r in m["rows"] for p in r["paths"]
            if p["breaks_rule"]]


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("matrix.py: the current lane needs root")
    os.environ.setdefault("LCLOUDCTL", os.path.join(HERE, "..", "..", "build", "cli", "lcloudctl"))
    os.environ.setdefault("STATX_READER", os.path.join(HERE, "..", "..", "build", "tests", "host", "statx_reader"))
    STATX_READER = os.environ["STATX_READER"]
    os.environ.setdefault("LCLOUD_TARGET", os.path.join(HERE, "..", "..", "build", "target", "lcloud-target"))
    LCLOUD_TARGET = os.environ["LCLOUD_TARGET"]
    import vmlib
    vmlib.LCLOUDCTL = os.environ["LCLOUDCTL"]
    boots = [a for a in sys.argv[1:] if not a.startswith("-")] or None
    if "--rejudge" in sys.argv:
        # judge and present the committed run again (after a change to the rule or the table), no boot
        m = json.load(open(os.path.join(HERE, "matrix.json")))
        defs = {r["name"]: r for b in BOOTS.values() for r in b["rows"]}
        for row in m["rows"]:
            for p in row["paths"]:
                p["status"], p["breaks_rule"] = judge(defs[row["name"]], p)
    else:
        # the committed run cuts more often than the CI test (--ci: as the CI test does)
        m = run_matrix(boots, cuts=CUTS_CI if "--ci" in sys.argv else CUTS_FULL, ci="--ci" in sys.argv)
    if "--write" in sys.argv:
        with open(os.path.join(HERE, "matrix.json"), "w") as f:
            json.dump(m, f, indent=1, sort_keys=True)
            f.write("\n")
        with open(os.path.join(HERE, "matrix.md"), "w") as f:
            f.write(markdown(m))
    else:
        print(markdown(m))
    v = violations(m)
    for line in v:
        print("BREAKS THE RULE: " + line, file=sys.stderr)
    sys.exit(1 if v else 0)
