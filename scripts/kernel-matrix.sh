#!/usr/bin/env bash
# Kernel matrix: boots Debian's cloud kernels under qemu (TCG: KVM does not work
# on this kind of VM) and runs blkrr's capture smoke tests (tests/matrix/checks.sh)
# in each guest, then the device stacks (tests/matrix/stacks.sh: NVMe, SCSI
# with mq-deadline and bfq, a GPT partition, dm-linear, dm-crypt, md RAID1,
# LVM, dm striped, md RAID0, dm snapshot at the bio level) in
# the same boot, and the checks on the host kernel over a loop device.
# Prints one result per kernel and check, a table, timings; exits 1 when a
# check fails. A kernel that cannot be downloaded is SKIP with the reason (CI
# expects every kernel to pass; see docs/kernels.md).
#
#   bash scripts/kernel-matrix.sh [--kernels 5.10,6.1,6.12,host] [--blkrr PATH]
#                                 [--cache DIR] [--keep]
#
# Needs root. Kernel packages are fetched with `apt-get download` through a
# private apt configuration under the cache (the machine's own apt lists are
# never touched), from the Debian mirror this machine's apt sources name.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KERNELS=5.10,6.1,6.12,host
BLKRR=$ROOT/build/userspace/cli/blkrr
CACHE=${BLKRR_MATRIX_CACHE:-/var/cache/blkrr-kernel-matrix}
KEEP=0
GUEST_TIMEOUT=${BLKRR_MATRIX_TIMEOUT:-600}
START=$(date +%s)

usage() {
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}
log() { printf '[matrix %4ss] %s\n' "$(($(date +%s) - START))" "$*" >&2; }
die() {
  echo "kernel-matrix: $*" >&2
  exit 2
}

while [ $# -gt 0 ]; do
  case $1 in
  --kernels) KERNELS=${2:?--kernels needs a list, e.g. 5.10,6.1,6.12,host}; shift 2 ;;
  --blkrr) BLKRR=${2:?--blkrr needs a path}; shift 2 ;;
  --cache) CACHE=${2:?--cache needs a directory}; shift 2 ;;
  --keep) KEEP=1; shift ;;
  -h | --help) usage 0 ;;
  *) echo "kernel-matrix: unknown option '$1'" >&2; usage 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || die "needs root (BPF, loop devices, apt-get); run it as root"
[ -x "$BLKRR" ] || die "no blkrr binary at $BLKRR: build it first (bash scripts/build.sh) or pass --blkrr PATH"
BLKRR=$(readlink -f "$BLKRR")

# shellcheck source=scripts/apt-lock.sh
. "$ROOT/scripts/apt-lock.sh"
# shellcheck source=scripts/kernel-matrix-lib.sh
. "$ROOT/scripts/kernel-matrix-lib.sh"

install_tools
WORK=$(mktemp -d /tmp/blkrr-kernel-matrix.XXXXXX)
cleanup() {
  if [ "$KEEP" = 1 ]; then log "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
mkdir -p "$CACHE"
build_helper "$WORK/matrix_io"

RESULTS=$WORK/results.txt
: >"$RESULTS"
declare -A TIMES
IFS=, read -r -a LIST <<<"$KERNELS"
for k in "${LIST[@]}"; do
  t0=$(date +%s)
  case $k in
  host) run_host "$WORK/host" | tee "$WORK/host.log" | grep -E '^(MATRIX|FACT|FEATURES) ' >>"$RESULTS" || true ;;
  5.10 | 6.1 | 6.12) run_kernel "$k" "$WORK/$k" >>"$RESULTS" ;;
  *) echo "MATRIX $k kernel SKIP unknown kernel '$k' (known: 5.10, 6.1, 6.12, host)" >>"$RESULTS" ;;
  esac
  TIMES[$k]=$(($(date +%s) - t0))
  log "$k done in ${TIMES[$k]} s"
done

print_table "$RESULTS" "${LIST[@]}"
for k in "${LIST[@]}"; do printf '%s %ss  ' "$k" "${TIMES[$k]}"; done
echo "total $(($(date +%s) - START)) s"
cp "$RESULTS" "$CACHE/last-results.txt"
print_markdown "$RESULTS" "${LIST[@]}" >"$CACHE/last-table.md"
echo "kernel-matrix: markdown table (docs/kernels.md) in $CACHE/last-table.md"
if grep -q '^MATRIX [^ ]* [^ ]* FAIL' "$RESULTS"; then
  echo "kernel-matrix: FAILED (details above; all lines in $CACHE/last-results.txt)"
  exit 1
fi
echo "kernel-matrix: no check failed"
