#!/usr/bin/env bash
# The main job on an embedded default: install, build, make a scratch loop
# device over /dev/shm, record a real I/O workload on it with blkrr, print the
# recording summary and the first requests, then remove the device.
# Never touches a real disk. Run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" -eq 0 ] || { echo "demo.sh: run as root (BPF and loop devices need it)" >&2; exit 1; }
bash scripts/install-deps.sh
bash scripts/build.sh
blkrr=$PWD/build/userspace/cli/blkrr

img=$(mktemp /dev/shm/blkrr-demo.XXXXXX.img)
out=$(mktemp -d /tmp/blkrr-demo.XXXXXX)
loop=""
cleanup() {
  if [ -n "$loop" ]; then losetup -d "$loop" 2>/dev/null || true; fi
  rm -f "$img"
}
trap cleanup EXIT
truncate -s 512M "$img"
loop=$(losetup --find --show --direct-io=on "$img")
echo "scratch device: $loop (512 MiB over $img)"

"$blkrr" record -d "$loop" -D 6 -o "$out/demo.blkrr" &
rec=$!
sleep 1.5
# A real mixed workload: random 4k reads and writes, then a sequential write.
fio --name=demo --filename="$loop" --direct=1 --ioengine=psync --rw=randrw --bs=4k \
    --size=256M --runtime=2 --time_based --numjobs=2 --group_reporting >/dev/null
dd if=/dev/zero of="$loop" bs=1M count=32 oflag=direct status=none
wait "$rec"
echo
# The header lines, the column titles and the first 10 requests; awk stops
# reading there and dump then ends on SIGPIPE, as cat would.
{ "$blkrr" dump "$out/demo.blkrr" || true; } | awk '!/^#/ && ++n > 11 { exit } { print }'
echo "trace kept in $out/demo.blkrr"
