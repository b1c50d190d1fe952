#!/bin/bash
# Regenerate tests/vm/captures/: raw Identify data of QEMU's NVMe controller
# (LBA 4096 and 512) and raw INQUIRY/VPD data of a Google-PD-shaped QEMU
# scsi-hd and of scsi_debug, read inside an lcvm guest with nvme-cli/sg3-utils.
# Usage: tests/vm/capture.sh [DESTDIR]   (default: tests/vm/captures)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-$here/captures}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/guest.sh" <<'EOF'
set -e
cd /out
# NVMe: controller 0 has one 4096-byte-LBA namespace, controller 1 a 512 one.
for pair in "$LCVM_NVME0 lbs4096" "$LCVM_NVME1 lbs512"; do
    set -- $pair
    p=qemu-nvme-$2
    nvme id-ctrl "$1" -b >$p-id-ctrl.bin
    nvme id-ns "${1}n1" -b >$p-id-ns.bin
    nvme id-ctrl "$1" -o json >$p-id-ctrl.json
    nvme id-ns "${1}n1" -o json >$p-id-ns.json
done
# SCSI: raw standard INQUIRY (sg_inq's default allocation length) and VPD pages.
for pair in "$LCVM_SCSI0 qemu-scsihd-gpd" "$LCVM_SCSI_DEBUG0 scsidebug-4k"; do
    set -- $pair
    sg_inq -r "$1" >$2-inquiry.bin
    for pg in 00 b0 b1 83; do sg_vpd -p 0x$pg -r "$1" >$2-vpd-$pg.bin; done
    { sg_inq "$1"; sg_vpd -p 0x00 "$1"; sg_vpd -p bl "$1"; sg_vpd -p bdc "$1"; sg_vpd -p di "$1"; } >$2-decoded.txt
    b=${1#/dev/}
    for f in /sys/block/$b/queue/*; do [ -f "$f" ] && echo "${f##*/}=$(cat "$f" 2>/dev/null)"; done >$2-sysfs-queue.txt
done
for c in "$LCVM_NVME0" "$LCVM_NVME1"; do
    b=${c#/dev/}n1
    [ "$c" = "$LCVM_NVME0" ] && p=qemu-nvme-lbs4096 || p=qemu-nvme-lbs512
    for f in /sys/block/$b/queue/*; do [ -f "$f" ] && echo "${f##*/}=$(cat "$f" 2>/dev/null)"; done >$p-sysfs-queue.txt
done
{
    echo "guest kernel: $(uname -r) ($(uname -v))"
    echo "nvme-cli: $(nvme version | head -n 1)"
    echo "sg3-utils: $(sg_inq -V 2>&1 | head -n 1)"
} >guest-versions.txt
EOF

"$here/lcvm" run --lane debian12 --quiet \
    --nvme lbs=4096,pbs=4096,ns=1,size=64M,serial=lc4096 \
    --nvme lbs=512,pbs=512,ns=1,size=64M,serial=lc512 \
    --scsi lbs=512,pbs=16384,vendor=Google,product=PersistentDisk,size=64M \
    --scsi-debug "dev_size_mb=16 sector_size=4096 physblk_exp=2" \
    --script "$work/guest.sh" --out "$work/out" || {
    cat "$work/out/stderr" >&2 2>/dev/null
    echo "capture: guest run failed" >&2
    exit 1
}

mkdir -p "$dest"
cp "$work"/out/files/* "$dest/"
{
    echo "host: $(qemu-system-x86_64 --version | head -n 1)"
    echo "host: qemu-system-x86 package $(dpkg-query -W -f='${Version}' qemu-system-x86)"
    echo "guest kernel package: $(sed -n 2p "${LCLOUD_VM_CACHE:-/var/cache/lcloud-vm}/kernel/resolved" 2>/dev/null)"
    echo "host: nvme-cli $(dpkg-query -W -f='${Version}' nvme-cli), sg3-utils $(dpkg-query -W -f='${Version}' sg3-utils)"
    cat "$dest/guest-versions.txt"
    echo "captured: $(date -u +%Y-%m-%d)"
} >"$dest/provenance.txt"
rm -f "$dest/guest-versions.txt"
ls -l "$dest"
