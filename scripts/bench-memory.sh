#!/usr/bin/env bash
# Memory benchmark (issue 17): maximum RSS and time per million requests of
# convert, replay (--fake-io on a file, and real I/O on a loop device),
# replay --validate and report, on synthetic loads of growing size.
#
#   scripts/bench-memory.sh [SIZES...]        (default: 1000000 10000000 100000000)
#
# Environment: BLKRR         the blkrr binary (default build/userspace/cli/blkrr)
#              WORK          scratch directory on disk (default /var/tmp/blkrr-bench-memory)
#              LOOP_MAX      largest size replayed on the loop device (default 10000000)
#              VALIDATE_MAX  largest size replayed with --validate (default 10000000)
#              STEPS         steps besides convert, which always runs as it makes the inputs
#                            (default "convert replay loop validate report")
#
# Each load is made on the fly from the shipped linux-mysql load (80794
# requests) repeated until it has at least SIZE requests (blkrr convert
# --repeat), then converted to a native trace; both live in WORK only while
# that size runs (about 10 bytes a request for the .load.gz, as many for the
# native trace and 15 for the replay result). The loop device (1 GiB, on
# /dev/shm) and --validate need root; without root those steps are skipped.
# --validate is wrapped in the blk-tracer lock (/run/lock/blkrr-blk-tracer.lock)
# as every kernel-tracing command on a shared machine.
#
# Durations on the 2-core VM of docs/performance.md (loaded, ~20 s per million
# requests for replay): 1 M requests ~5 min in all, 10 M ~15 min without the
# loop/validate steps; 100 M ~1.5 h with STEPS="replay report".
set -euo pipefail

here="$(cd "$(dirname "$0")/.." && pwd)"
BLKRR="${BLKRR:-$here/build/userspace/cli/blkrr}"
WORK="${WORK:-/var/tmp/blkrr-bench-memory}"
LOOP_MAX="${LOOP_MAX:-10000000}"
VALIDATE_MAX="${VALIDATE_MAX:-10000000}"
STEPS="${STEPS:-convert replay loop validate report}"
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000000 10000000 100000000)
src="$here/tests/data/linux-mysql.load.gz"
per=80794

[ -x "$BLKRR" ] || { echo "bench-memory: no blkrr binary at $BLKRR (set BLKRR=...)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-memory: needs GNU time (/usr/bin/time, package time)" >&2; exit 2; }
mkdir -p "$WORK"
LOOP="" LOOPIMG=""
cleanup() {
  if [ -n "$LOOP" ]; then losetup -d "$LOOP" 2>/dev/null || true; fi
  if [ -n "$LOOPIMG" ]; then rm -f "$LOOPIMG"; fi
  rm -f "$WORK"/load.gz "$WORK"/load.blkrr "$WORK"/out.replay.gz "$WORK"/target.img
  rm -rf "$WORK"/report
}
trap cleanup EXIT

has_step() { [[ " $STEPS " == *" $1 "* ]]; }

# run LABEL REQUESTS command...: one table row (wall s, s per M requests, max RSS MB)
run() {
  local label=$1 n=$2 t
  shift 2
  if ! /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "$@" >"$WORK/out.txt" 2>&1; then
    echo "| $label | $n | failed: $(tail -2 "$WORK/out.txt" | tr '\n' ' ') |"
    return 0
  fi
  t=$(tail -1 "$WORK/time.txt")
  awk -v l="$label" -v n="$n" -v t="$t" 'BEGIN {
    split(t, a, " ");
    printf "| %-40s | %10d | %8.1f | %6.2f | %7.1f |\n", l, n, a[1], a[1] / (n / 1e6), a[2] / 1024 }'
}

setup_loop() {
  [ "$(id -u)" = 0 ] || return 1
  [ -n "$LOOP" ] && return 0
  LOOPIMG=$(mktemp /dev/shm/blkrr-bench-memory.XXXXXX)
  truncate -s 1G "$LOOPIMG"
  LOOP=$(losetup -f --show "$LOOPIMG")
}

one_size() {
  local want=$1 passes n
  passes=$(( (want + per - 1) / per ))
  n=$(( passes * per ))
  run "convert --repeat load.gz -> load.gz" "$n" \
    "$BLKRR" convert "$src" --repeat "$passes" -o "$WORK/load.gz" -q
  run "convert load.gz -> native" "$n" "$BLKRR" convert "$WORK/load.gz" -o "$WORK/load.blkrr" -q
  if has_step replay; then
    truncate -s 2G "$WORK/target.img"
    run "replay --fake-io --timing fullspeed -o" "$n" "$BLKRR" replay "$WORK/load.blkrr" \
      "$WORK/target.img" --allow-file --fake-io --timing fullspeed -o "$WORK/out.replay.gz" --quiet
    rm -f "$WORK/target.img"
  fi
  if has_step loop && [ "$want" -le "$LOOP_MAX" ] && setup_loop; then
    run "replay on a loop device, fullspeed" "$n" "$BLKRR" replay "$WORK/load.blkrr" "$LOOP" \
      --force --timing fullspeed --quiet
  fi
  if has_step validate && [ "$want" -le "$VALIDATE_MAX" ] && setup_loop; then
    run "replay --validate on a loop device" "$n" flock /run/lock/blkrr-blk-tracer.lock \
      "$BLKRR" replay "$WORK/load.blkrr" "$LOOP" --force --timing fullspeed --validate --quiet
  fi
  if has_step report && [ -s "$WORK/out.replay.gz" ]; then
    run "report of the replay result" "$n" "$BLKRR" report "$WORK/out.replay.gz" \
      -o "$WORK/report"
    rm -rf "$WORK/report"
  fi
  rm -f "$WORK/load.gz" "$WORK/load.blkrr" "$WORK/out.replay.gz"
}

echo "blkrr: $BLKRR ($("$BLKRR" --version 2>/dev/null | head -1)); $(nproc) cores;" \
  "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command                                  |   requests |   wall s | s / M req | max RSS MB |"
echo "|------------------------------------------|------------|----------|------|---------|"
for s in "${SIZES[@]}"; do one_size "$s"; done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
