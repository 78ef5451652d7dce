#!/usr/bin/env bash
# A long rotated recording at a steady rate, against a plain one in the same
# run and against the kernel's blk tracer (docs/recording.md, "Measured").
#
#   Two loop devices over /dev/shm, each read by fio at IOPS (4 KiB random
#   reads, libaio, queue depth 4) for MINUTES. Device A is recorded with
#   `--rotate ROTATE --keep KEEP`, device B into one file, both at once.
#   Every SAMPLE seconds: each recorder's RSS and CPU (user+sys) per request
#   completed on its device (/sys/block/X/stat), the number and bytes of A's
#   pieces on disk. Over the last CHECK seconds the blk tracer of tracefs
#   streams A's issues (D events, CLOCK_MONOTONIC); at the end every issue at
#   or after the oldest kept piece's start must be in the pieces exactly once
#   (same sector and size, issue time within 1 ms, or within 50 ms for the
#   few stamped further apart, counted apart), and the tracer's own overrun
#   and dropped-event counts are printed (recording-check.py).
#
# Usage (root): tests/bench/recording.sh [--duration SECONDS] [BLKRR_BINARY]
#   env: MINUTES=60 IOPS=20000 ROTATE=1m KEEP=10 CHECK=660 SAMPLE=10
#        QUICK=1: MINUTES=2 ROTATE=8s CHECK=all SAMPLE=5
#   --duration SECONDS (or DURATION=SECONDS) instead of MINUTES; CI runs
#   QUICK=1 IOPS=10000 with --duration 60 (about 2 minutes in all).
# Exit status 1 when a traced request is missing or a recorded one is there
# twice, more recorded requests are untraced than the tracer dropped, a gap is
# reported, or more than KEEP closed pieces were on disk.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh
bench_init recording
if [ "${1:-}" = --duration ]; then
  DURATION=${2:?--duration needs SECONDS}
  shift 2
fi
BLKRR=${1:-${BLKRR:-$PWD/build/userspace/cli/blkrr}}
if [ -n "${QUICK:-}" ]; then
  MINUTES=${MINUTES:-2} ROTATE=${ROTATE:-8s} CHECK=${CHECK:-all} SAMPLE=${SAMPLE:-5}
fi
MINUTES=${MINUTES:-60}
IOPS=${IOPS:-20000}
ROTATE=${ROTATE:-1m}
KEEP=${KEEP:-10}
CHECK=${CHECK:-660}
SAMPLE=${SAMPLE:-10}
bench_need fio python3
[ -x "$BLKRR" ] || bench_die "no blkrr binary at $BLKRR (build first)"
work=$BENCH_WORK
secs=${DURATION:-$((MINUTES * 60))}
case $secs in '' | *[!0-9]*) bench_die "--duration wants whole seconds, not '$secs'" ;; esac
[ "$CHECK" = all ] && CHECK=$secs

rec_a="" rec_b="" sampler="" streamer=""
stop_all() {
  local p
  for p in $sampler $streamer $rec_a $rec_b; do kill "$p" 2> /dev/null || true; done
}
bench_on_exit stop_all
bench_loop A 1G zero
bench_loop B 1G zero
mkdir -p "$work/rot"

wait_ready() {
  for _ in $(seq 200); do grep -q "Ctrl-C stops" "$1" 2> /dev/null && return 0; sleep 0.05; done
  bench_die "recorder did not start: $(cat "$1")"
}

"$BLKRR" record -d "$A" -o "$work/rot/prod" --rotate "$ROTATE" --keep "$KEEP" \
  > "$work/a.log" 2>&1 &
rec_a=$!
"$BLKRR" record -d "$B" -o "$work/plain.blkrr" > "$work/b.log" 2>&1 &
rec_b=$!
wait_ready "$work/a.log"
wait_ready "$work/b.log"

# t, then per recorder: RSS KiB, CPU ticks, requests completed; A's closed
# pieces, open pieces and bytes on disk.
sample() {
  local t0 now
  t0=$(date +%s.%N)
  while sleep "$SAMPLE"; do
    now=$(date +%s.%N)
    printf '%s' "$(awk -v a="$now" -v b="$t0" 'BEGIN{printf "%.1f", a - b}')"
    for p in "$rec_a:$A" "$rec_b:$B"; do
      printf ' %s %s %s' "$(awk '/^VmRSS/{print $2}' "/proc/${p%%:*}/status")" \
        "$(awk '{print $14 + $15}' "/proc/${p%%:*}/stat")" \
        "$(awk '{print $1}' "/sys/block/${p#*:/dev/}/stat")"
    done
    printf ' %s %s %s\n' "$(find "$work/rot" -name '*.blkrr' | wc -l)" \
      "$(find "$work/rot" -name '*.open' | wc -l)" "$(du -sb "$work/rot" | cut -f1)"
  done
}
sample > "$work/samples.txt" &
sampler=$!

# Global options first: fio applies those after a --name to that job only.
fio --direct=1 --ioengine=libaio --rw=randread --bs=4k --iodepth=4 --rate_iops="$IOPS" \
  --runtime="$secs" --time_based --norandommap --randrepeat=0 --output-format=json \
  --name=a --filename="$A" --name=b --filename="$B" > "$work/fio.json" 2> "$work/fio.err" &
fio_pid=$!

# The tracer over the last CHECK seconds, streamed (the buffer would not hold
# ten minutes): "seconds sector blocks" of each D event of A.
sleep $((secs > CHECK ? secs - CHECK : 0))
T=$BENCH_TRACEFS
bench_tracer_on "$A" issue
awk '$0 ~ / [0-9]+,[0-9]+ +D / {
       for (i = 1; i <= NF; i++) {
         if ($i ~ /^[0-9]+\.[0-9]+:$/) t = $i
         if ($i == "D") { sub(":", "", t); print t, $(i + 2), $(i + 4); fflush(); break }
       }
     }' "$T/trace_pipe" > "$work/d.txt" &
streamer=$!
wait "$fio_pid"
sleep 1
tracer_state="$(cat "$T/current_tracer") $(cat "$T/tracing_on")"
echo 0 > "$T/tracing_on"
sleep 1
drops=$(awk '/^overrun:|^dropped events:/{s += $NF} END{print s + 0}' "$T"/per_cpu/cpu*/stats)
kill "$streamer" 2> /dev/null || true
streamer=""
bench_tracer_reset
kill "$sampler"
sampler=""
kill -TERM "$rec_a" "$rec_b"
wait "$rec_a" || bench_die "the rotated recording failed: $(tail -3 "$work/a.log")"
wait "$rec_b" || bench_die "the plain recording failed: $(tail -3 "$work/b.log")"
rec_a="" rec_b=""

echo "# blkrr record --rotate $ROTATE --keep $KEEP vs one file, $secs s at $IOPS IOPS each" \
  "(fio 4k randread qd4 on loop over /dev/shm), $(date -u +%Y-%m-%dT%H:%MZ), load $(bench_loadavg)"
echo "# achieved IOPS: $(python3 -c 'import json,sys; t=open(sys.argv[1]).read(); print(" ".join("%.0f" % j["read"]["iops"] for j in json.loads(t[t.index("{"):])["jobs"]))' "$work/fio.json")"
echo "# blk tracer: $tracer_state (blk 1 = undisturbed), overrun + dropped events: $drops"
"$BLKRR" dump -j "$work"/rot/prod.*.blkrr > "$work/dump.jsonl" 2> "$work/dump.err" ||
  bench_die "dump failed: $(head -3 "$work/dump.err")"
[ -n "${BENCH_SAVE:-}" ] && cp -r "$work"/*.txt "$work"/*.log "$work"/fio.* "$BENCH_SAVE"/
python3 tests/bench/recording-check.py "$work/samples.txt" "$work/d.txt" "$work/dump.jsonl" \
  "$work/dump.err" "$KEEP" "$drops" "$tracer_state"
