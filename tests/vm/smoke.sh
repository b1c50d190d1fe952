#!/bin/bash
# Smoke test of the lcvm harness: one boot with an NVMe namespace and a SCSI
# disk; both device nodes (and the tools) must be there in the guest.
# Exit 0 pass, 77 skip (only when QEMU cannot be had at all), else fail.
# With LCLOUDCTL=/path/to/lcloudctl it also checks that the project's binary
# and its liblcloud.so load inside the guest (--copy path of the harness).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v qemu-system-x86_64 >/dev/null; then
    if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
        echo "SKIP: no qemu-system-x86_64 and no way to install it (not root / no apt-get)"
        exit 77
    fi
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

copy=()
if [[ -n ${LCLOUDCTL:-} ]]; then
    [[ -x $LCLOUDCTL ]] || { echo "FAIL: LCLOUDCTL=$LCLOUDCTL is not executable"; exit 1; }
    copy=(--copy "$LCLOUDCTL" --env "LCLOUDCTL=$(readlink -m "$LCLOUDCTL")")
fi

cat >"$out/guest.sh" <<'EOF'
fail=0
check() { if "$@"; then echo "ok: $*"; else echo "not ok: $*"; fail=1; fi; }
check test -b /dev/nvme0n1
check test -c /dev/ng0n1
check test "$LCVM_NVME0" = /dev/nvme0
check test -b /dev/sda
check test "$LCVM_SCSI0" = /dev/sda
check test "$(cat /sys/block/nvme0n1/queue/logical_block_size)" = 4096
check test "$(cat /sys/block/sda/queue/physical_block_size)" = 4096
check sh -c 'nvme id-ctrl /dev/nvme0 -o json >/out/id-ctrl.json'
check sh -c 'sg_vpd -p bl /dev/sda >/out/vpd-bl.txt'
if [ -n "$LCLOUDCTL" ]; then
    "$LCLOUDCTL" --help >/out/lcloudctl.txt 2>&1
    rc=$?
    # 126/127: the binary or one of its libraries could not be loaded.
    check test $rc -ne 126 -a $rc -ne 127
fi
echo smoke-ok >/out/marker
exit $fail
EOF

start=$SECONDS
"$here/lcvm" run --quiet --timeout 240 "${copy[@]}" \
    --nvme lbs=4096,size=16M,serial=smoke \
    --scsi lbs=512,pbs=4096,size=16M,vendor=LCLOUD,product=Smoke \
    --script "$out/guest.sh" --out "$out/res"
rc=$?
cat "$out/res/stdout" 2>/dev/null
if [[ $rc != 0 ]]; then
    echo "--- guest stderr"; cat "$out/res/stderr" 2>/dev/null
    [[ -f $out/res/files/lcloudctl.txt ]] && cat "$out/res/files/lcloudctl.txt"
    echo "FAIL: lcvm exited $rc (status $(cat "$out/res/status" 2>/dev/null))"
    exit 1
fi
if [[ $(cat "$out/res/files/marker" 2>/dev/null) != smoke-ok ]]; then
    echo "FAIL: /out/marker did not come back from the guest"
    exit 1
fi
grep -q '"sn"' "$out/res/files/id-ctrl.json" || { echo "FAIL: id-ctrl json missing"; exit 1; }
echo "PASS: NVMe and SCSI devices present in the guest ($((SECONDS - start))s)"
