#!/usr/bin/env bash
# Memory benchmark (issue 17): maximum RSS and time per million requests of
# convert, replay (--fake-io on a file, and real I/O on a loop device),
# replay --validate on a loop device and report, on synthetic loads of
# growing size generated on the fly: the shipped linux-mysql load (80794
# requests) read again and again (convert --repeat, replay --repeat), never
# stored. Only the replay result that report reads is written (~15 bytes a
# request, in WORK), and removed after it.
#
#   tests/bench/memory.sh [SIZES...]        (default: 1000000 10000000 100000000)
#
# Environment: BLKRR         the blkrr binary (default build/userspace/cli/blkrr)
#              BASE          an older blkrr binary: every step of sizes up to BASE_MAX
#                            (default 1000000) runs with it too, right after, for a
#                            same-run comparison; it replays a stored copy of the load
#                            (made by convert --repeat in WORK), having no replay --repeat
#              WORK          where the scratch directory is made (default /dev/shm; the
#                            loop device's 1 GiB file and the replay result live there)
#              LOOP_MAX      largest size replayed on the loop device (default 10000000)
#              VALIDATE_MAX  largest size replayed with --validate (default 10000000)
#              REPORT_MAX    largest size reported (default 10000000: the replay result
#                            it reads is kept in WORK, ~15 bytes a request); above it the
#                            replay result goes to a FIFO and is not kept
#              STEPS         default "convert replay loop validate report"
#              VALIDATE_ARGS more arguments of the --validate step (e.g. "--validate-window 0":
#                            only the held-record cap bounds what is held)
#              CMODE         --cmode of the replays (default partial; the repeated load's
#                            pass boundaries leave thousands of requests waiting, which
#                            costs ~0.5 us a request, docs/performance.md)
#
# The loop device is a 1 GiB file in /dev/shm (the load wraps around it, so
# its size does not grow with the load). Steps on it take the machine-wide
# kernel lock (/run/lock/blkrr-kernel.lock) for their own run only. Needs root
# (tests/bench/lib.sh: scratch directory, loop device, cleanup). Everything
# runs under nice.
#
# Its runs are niced already (nice 10): do not run the script itself under nice,
# or the runs starve behind other work. Durations on the 2-core VM of
# docs/performance.md at a load average of ~19 (seconds per million requests):
# convert 0.5-1.8, replay --fake-io 2-7, on the loop device 22-42, --validate
# 25-70, report 5; 1 M and 10 M with the loop and validate steps ~45 min, the
# 100 M convert and replay steps ~15 min.
set -euo pipefail

here="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=tests/bench/lib.sh
. "$here/tests/bench/lib.sh"
BLKRR="${BLKRR:-$here/build/userspace/cli/blkrr}"
BASE="${BASE:-}"
BASE_MAX="${BASE_MAX:-1000000}"
LOOP_MAX="${LOOP_MAX:-10000000}"
VALIDATE_MAX="${VALIDATE_MAX:-10000000}"
REPORT_MAX="${REPORT_MAX:-10000000}"
STEPS="${STEPS:-convert replay loop validate report}"
CMODE="${CMODE:-partial}"
read -r -a VALIDATE_ARGS <<<"${VALIDATE_ARGS:-}"
LOCK=/run/lock/blkrr-kernel.lock
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000000 10000000 100000000)
src="$here/tests/data/linux-mysql.load.gz"
per=80794

bench_init memory "${WORK:-/dev/shm}"
WORK=$BENCH_WORK
[ -x "$BLKRR" ] || bench_die "no blkrr binary at $BLKRR (set BLKRR=...)"
[ -z "$BASE" ] || [ -x "$BASE" ] || bench_die "BASE=$BASE is not executable"
[ -x /usr/bin/time ] || bench_die "needs GNU time (/usr/bin/time, package time)"
LOOP="" DRAIN="" SINK="" PASSES=1 WANT=0
stop_drain() {
  if [ -n "$DRAIN" ]; then kill "$DRAIN" 2>/dev/null || true; fi
}
bench_on_exit stop_drain

has_step() { [[ " $STEPS " == *" $1 "* ]]; }

# A FIFO named like an output file, emptied by cat: the output is written
# (compressed, formatted) but not kept. One for each run of measure().
sink() {
  SINK="$WORK/$1"
}
drain() {
  rm -f "$SINK"
  mkfifo "$SINK"
  cat "$SINK" >/dev/null &
  DRAIN=$!
}

# row LABEL REQUESTS BINARY-NAME: one table row from the last run (wall s, s per M, max RSS MB)
row() {
  local t
  t=$(tail -1 "$WORK/time.txt")
  awk -v l="$1" -v n="$2" -v b="$3" -v t="$t" 'BEGIN {
    split(t, a, " ");
    printf "| %-38s | %-4s | %11d | %8.1f | %9.2f | %10.1f |\n", l, b, n, a[1], a[1] / (n / 1e6), a[2] / 1024 }'
}

# measure LABEL REQUESTS LOCKED COMMAND...: runs COMMAND with BLKRR, then
# with BASE when set ("@BLKRR@" is the binary, "@IN@" the load: the shipped
# one read PASSES times, or for BASE its stored copy); LOCKED=1 takes the
# kernel lock for the run.
measure() {
  local label=$1 n=$2 locked=$3 bin name
  shift 3
  for name in new base; do
    bin=$BLKRR
    local in=("$src" --repeat "$PASSES")
    if [ "$name" = base ]; then
      if [ -z "$BASE" ] || [ "$WANT" -gt "$BASE_MAX" ]; then continue; fi
      bin=$BASE
      in=("$WORK/base.load.gz")
    fi
    local cmd=()
    for a in "$@"; do
      if [ "$a" = @IN@ ]; then cmd+=("${in[@]}"); else cmd+=("${a//@BLKRR@/$bin}"); fi
    done
    [ -z "$SINK" ] || drain
    local pre=(nice -n 10)
    [ "$locked" = 1 ] && pre=(flock "$LOCK" nice -n 5)
    if ! "${pre[@]}" /usr/bin/time -f "%e %M" -o "$WORK/time.txt" "${cmd[@]}" >"$WORK/out.txt" 2>&1; then
      echo "| $label | $name | $n | failed: $(tail -2 "$WORK/out.txt" | tr '\n' ' ') |"
    else
      row "$label" "$n" "$name"
    fi
    if [ -n "$DRAIN" ]; then
      wait "$DRAIN" 2>/dev/null || true
      DRAIN=""
    fi
    validation_line "$name"
  done
  SINK=""
}

# The verdict of a replay --validate run and what its matcher held at most.
validation_line() {
  local j="$WORK/validate.json"
  [ -s "$j" ] || return 0
  if command -v jq >/dev/null; then
    jq -r --arg b "$1" '.validation | "    \($b): \(.verdict), \(.requests.covered) of " +
      "\(.requests.submitted) covered, late \(.requests.late // "-") requests " +
      "\(.block_requests.late // "-") block requests; held at most " +
      "\(.validator_cost.max_held_requests // "all") requests " +
      "\(.validator_cost.max_held_block_requests // "all") block requests (equal ones in a " +
      "row held as a count: \(.validator_cost.identical_requests // "-") requests " +
      "\(.validator_cost.identical_block_requests // "-") block requests); cap " +
      "\(.held_cap.max_held_bytes // "none") bytes, held at most " +
      "\(.validator_cost.max_held_bytes // "-") bytes, " + (if (.held_cap.shrinks // 0) > 0 then
      "reached \(.held_cap.shrinks) times, window down to \(.held_cap.min_window_ns / 1e6) ms"
      else "never reached" end)' "$j"
  fi
  rm -f "$j"
}

setup_loop() {
  [ -n "$LOOP" ] && return 0
  bench_loop LOOP 1G none
  # Allocate the tmpfs pages now: the first writes to a fresh loop device are
  # slower, which would favour whichever binary runs second.
  flock "$LOCK" dd if=/dev/zero of="$LOOP" bs=1M count=1024 oflag=direct status=none
}

one_size() {
  local want=$1 n
  WANT=$want
  PASSES=$(( (want + per - 1) / per ))
  n=$(( PASSES * per ))
  if [ -n "$BASE" ] && [ "$WANT" -le "$BASE_MAX" ]; then
    nice -n 10 "$BLKRR" convert "$src" --repeat "$PASSES" -o "$WORK/base.load.gz" -q --overwrite
  fi
  if has_step convert; then
    sink sink.load.gz
    measure "convert --repeat -> load.gz" "$n" 0 @BLKRR@ convert @IN@ -o "$WORK/sink.load.gz" -q --overwrite
    sink sink.blkrr
    measure "convert --repeat -> native" "$n" 0 @BLKRR@ convert @IN@ -o "$WORK/sink.blkrr" -q --overwrite
  fi
  if has_step replay; then
    truncate -s 2G "$WORK/target.img"
    local result="$WORK/out.replay.gz"
    if ! has_step report || [ "$want" -gt "$REPORT_MAX" ]; then
      sink sink.replay.gz
      result=$SINK
    fi
    measure "replay --fake-io --timing fullspeed -o" "$n" 0 @BLKRR@ replay @IN@ \
      "$WORK/target.img" --allow-file --fake-io --timing fullspeed --cmode "$CMODE" \
      -o "$result" --quiet --overwrite
    rm -f "$WORK/target.img"
  fi
  if has_step loop && [ "$want" -le "$LOOP_MAX" ] && setup_loop; then
    measure "replay on a loop device, fullspeed" "$n" 1 @BLKRR@ replay @IN@ "$LOOP" --force \
      --timing fullspeed --cmode "$CMODE" --quiet
  fi
  if has_step validate && [ "$want" -le "$VALIDATE_MAX" ] && setup_loop; then
    measure "replay --validate on a loop device" "$n" 1 @BLKRR@ replay @IN@ "$LOOP" --force \
      --timing fullspeed --cmode "$CMODE" --validate "${VALIDATE_ARGS[@]}" --quiet --overwrite \
      --json-file "$WORK/validate.json"
  fi
  if has_step report && [ -s "$WORK/out.replay.gz" ]; then
    measure "report of the replay result" "$n" 0 @BLKRR@ report "$WORK/out.replay.gz" --overwrite -o "$WORK/report"
    rm -rf "$WORK/report"
  fi
  rm -f "$WORK/out.replay.gz" "$WORK/base.load.gz"
}

echo "blkrr: $BLKRR ($("$BLKRR" --version 2>/dev/null | head -1)); $(nproc) cores;" \
  "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "$BASE" ] || echo "base: $BASE ($("$BASE" --version 2>/dev/null | head -1))"
echo
echo "| command                                | bin  |    requests |   wall s | s / M req | max RSS MB |"
echo "|----------------------------------------|------|-------------|----------|-----------|------------|"
for s in "${SIZES[@]}"; do one_size "$s"; done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
