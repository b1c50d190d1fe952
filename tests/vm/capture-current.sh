#!/bin/bash
# Regenerate tests/vm/captures/current/: raw Identify data of QEMU 11's NVMe
# controller with the atomic parameters the current lane can express (NAWUPF
# 16 KiB with a 32 KiB boundary, the same with NABO, AWUPF only, FDP) and raw
# INQUIRY/VPD data of scsi_debug with atomic writes, read in a Linux 7 guest.
# Usage: tests/vm/capture-current.sh [DESTDIR]   (default: tests/vm/captures/current)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-$here/captures/current}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/guest.sh" <<'GUEST'
set -e
cd /out
queue() { for f in /sys/block/$1/queue/*; do [ -f "$f" ] && echo "${f##*/}=$(cat "$f" 2>/dev/null)"; done; }
for pair in "$LCVM_NVME0 nawupf16k" "$LCVM_NVME1 nabo" "$LCVM_NVME2 awupf-only" "$LCVM_NVME3 fdp"; do
    set -- $pair
    p=qemu11-nvme-$2
    nvme id-ctrl "$1" -b >$p-id-ctrl.bin
    nvme id-ns "${1}n1" -b >$p-id-ns.bin
    nvme id-ctrl "$1" -o json >$p-id-ctrl.json
    nvme id-ns "${1}n1" -o json >$p-id-ns.json
    queue ${1#/dev/}n1 >$p-sysfs-queue.txt
done
p=scsidebug-atomic
sg_inq -r "$LCVM_SCSI_DEBUG0" >$p-inquiry.bin
for pg in 00 b0 b1 83; do sg_vpd -p 0x$pg -r "$LCVM_SCSI_DEBUG0" >$p-vpd-$pg.bin; done
{ sg_inq "$LCVM_SCSI_DEBUG0"; sg_vpd -p 0x00 "$LCVM_SCSI_DEBUG0"; sg_vpd -p bl "$LCVM_SCSI_DEBUG0"; } >$p-decoded.txt
queue ${LCVM_SCSI_DEBUG0#/dev/} >$p-sysfs-queue.txt
{
    echo "guest kernel: $(uname -r) ($(uname -v))"
    echo "nvme-cli: $(nvme version | head -n 1)"
    echo "sg3-utils: $(sg_inq -V 2>&1 | head -n 1)"
} >guest-versions.txt
GUEST

atomic=atomic.nawun=3,atomic.nawupf=3,atomic.nabsn=7,atomic.nabspf=7
"$here/lcvm" run --lane current --quiet \
    --nvme lbs=4096,size=16M,serial=lcnawupf,$atomic \
    --nvme lbs=4096,size=16M,serial=lcnabo,$atomic,atomic.nabo=2 \
    --nvme lbs=4096,size=16M,serial=lcawupf,ctrl.atomic.awun=3,ctrl.atomic.awupf=3 \
    --nvme lbs=4096,size=16M,serial=lcfdp,subsys.fdp=on,subsys.fdp.nruh=8,subsys.fdp.runs=1M,fdp.ruhs=0-7 \
    --scsi-debug "dev_size_mb=16 sector_size=4096 atomic_wr=1 atomic_wr_max_length=8 atomic_wr_gran=2 atomic_wr_align=2 atomic_wr_max_length_bndry=16 atomic_wr_max_bndry=4" \
    --script "$work/guest.sh" --out "$work/out" || {
    cat "$work/out/stderr" >&2 2>/dev/null
    echo "capture-current: guest run failed" >&2
    exit 1
}

mkdir -p "$dest"
cp "$work"/out/files/* "$dest/"
{
    echo "qemu: $("$here/lcvm" prepare --lane current | sed -n 's/^qemu: *\(.*\) (root .*/\1/p')"
    echo "guest kernel package: $(sed -n 2p "${LCLOUD_VM_CACHE:-/var/cache/lcloud-vm}/apt-trixie/resolved" 2>/dev/null | cut -d' ' -f1,2)"
    echo "host: nvme-cli $(dpkg-query -W -f='${Version}' nvme-cli), sg3-utils $(dpkg-query -W -f='${Version}' sg3-utils)"
    cat "$dest/guest-versions.txt"
    echo "captured: $(date -u +%Y-%m-%d)"
} >"$dest/provenance.txt"
rm -f "$dest/guest-versions.txt"
ls -l "$dest"
