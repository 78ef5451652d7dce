#!/usr/bin/env bash
# Replay timing under observation (issues 5 and 16): synthetic 4 KiB random
# reads at RATES (default 1k, 10k, 50k IOPS), evenly spaced, replayed on a
# loop device over /dev/shm by
#   - blkrr (io_uring engine, default settings), and with --realtime;
#   - btreplay (blktrace package): the same schedule as blktrace Q events,
#     btrecord -M 1 (one request per bunch, its most exact setting), btreplay;
#   - fio replaying the same schedule as an iolog v3.
# The referee for all of them is the kernel's blk tracer in tracefs with only
# Q events (act_mask=queue), CLOCK_MONOTONIC, drained after each run:
# issue error = (Q time - first Q time) - intended offset; span error =
# actual span / intended span - 1. Q events of io_uring's io-wq workers are
# re-queues after a non-blocking first attempt got EAGAIN and are counted,
# not timed. ROUNDS rounds, replayers alternated in each, medians reported.
# Then blkrr's own delays without any tracer, and fullspeed IOPS: blkrr vs
# fio's no-stall iolog replay vs fio io_uring randread at QD 32.
#
# STALLS=1 also records the scheduler (sched_switch, in a tracefs instance
# of its own) during the blkrr runs and names, for the worst late stretch of
# each, the tasks that held the CPU the replay thread had been running on.
#
# usage: tests/bench/replay.sh [BLKRR_BINARY]   (root)
#   ROUNDS=3 SECONDS_PER_RUN=3 RATES="1000 10000 50000" RT_PRIO=10 STALLS=0
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh

BLKRR=$(realpath "${1:-build/userspace/cli/blkrr}")
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_RUN:-3}
RATES=${RATES:-"1000 10000 50000"}
RT=${RT_PRIO:-10}
STALLS=${STALLS:-0}
bench_init replay
bench_need fio btrecord btreplay python3 jq /usr/bin/time
[ -x "$BLKRR" ] || bench_die "no blkrr binary at $BLKRR (build first)"
bench_loop LOOP 1G urandom
NAME=${LOOP#/dev/}
W=$BENCH_WORK
DEVT=$(( (0x$(stat -c %t "$LOOP") << 20) | 0x$(stat -c %T "$LOOP") ))
SCHED=$BENCH_TRACEFS/instances/blkrr-bench-sched
sched_remove() {
  [ -d "$SCHED" ] || return 0
  echo 0 > "$SCHED/events/enable"
  rmdir "$SCHED"
}
bench_on_exit sched_remove

# The same schedule three ways: a blkreplay load, a fio iolog v3 (times in µs,
# what fio 3.33 reads) and blktrace Q events of device $NAME for btrecord.
gen() {  # gen RATE -> $W/RATE/{load.load.gz, load.iolog, bt/NAME.blktrace.0}
  mkdir -p "$W/$1/bt"
  python3 - "$1" "$SECS" "$W/$1" "$LOOP" "$NAME" "$DEVT" << 'PY'
import gzip, random, struct, sys
rate, secs, d, dev, name, devt = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
n = int(rate * secs)
rnd = random.Random(rate)
blocks = (1 << 30) // 4096
queue_read = 1 | ((1 << 4) | (1 << 0)) << 16  # __BLK_TA_QUEUE | (BLK_TC_QUEUE | BLK_TC_READ) << 16
with gzip.open(f"{d}/load.load.gz", "wt") as f, open(f"{d}/load.iolog", "w") as g, \
        open(f"{d}/bt/{name}.blktrace.0", "wb") as b:
    f.write("start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n")
    g.write(f"fio version 3 iolog\n0 {dev} add\n0 {dev} open\n")
    for i in range(n):
        t_ns = i * 1_000_000_000 // rate
        blk = rnd.randrange(blocks)
        f.write(f"{t_ns // 10**9:9d}.{t_ns % 10**9:09d} ; {blk * 8:12d} ; 8 ; R ; 0.0 ; 0.0\n")
        g.write(f"{t_ns // 1000} {dev} read {blk * 4096} 4096\n")
        b.write(struct.pack("<IIQQIIIIIHH", 0x65617407, i + 1, t_ns, blk * 8, 4096, queue_read,
                            4242, devt, 0, 0, 0))
    g.write(f"{n * 1_000_000 // rate} {dev} close\n")
PY
  (cd "$W/$1/bt" && btrecord -M 1 -m 1000 "$NAME" > /dev/null)
}

sched_on() {
  [ "$STALLS" = 1 ] || return 0
  mkdir -p "$SCHED"
  echo mono > "$SCHED/trace_clock"
  echo 65536 > "$SCHED/buffer_size_kb"
  echo > "$SCHED/trace"
  echo 1 > "$SCHED/events/sched/sched_switch/enable"
  echo 1 > "$SCHED/tracing_on"
}
sched_off() {  # sched_off FILE
  [ "$STALLS" = 1 ] || return 0
  echo 0 > "$SCHED/tracing_on"
  cp "$SCHED/trace" "$1"
  echo 0 > "$SCHED/events/sched/sched_switch/enable"
  echo > "$SCHED/trace"
}

# One replay under the tracer: run LABEL RATE ROUND COMM CMD...
run() {
  local label=$1 rate=$2 round=$3 comm=$4
  shift 4
  bench_tracer_on "$LOOP" queue
  sched_on
  # btreplay has been seen to hang at exit: a run gets four times its length.
  if ! timeout -k 5 $((SECS * 4 + 30)) "$@" > "$W/run.log" 2>&1; then
    echo "bench-replay: $label at $rate IOPS failed or hung (round $round): $(tail -1 "$W/run.log")" >&2
  fi
  sched_off "$W/sched.txt"
  bench_tracer_off "$W/q.txt"
  local sched=()
  [ "$STALLS" = 1 ] && sched=("$W/sched.txt")
  python3 tests/bench/replay-analyse.py timing "$rate" "$SECS" "$W/q.txt" "$comm" \
    "$label" "$round" "${sched[@]}" >> "$W/results.jsonl"
}

echo "# blkrr replay under observation: $(uname -r), $(nproc) CPUs, loop device over /dev/shm,"
echo "# ${SECS}s per run, $ROUNDS rounds; blk tracer Q events only as the referee"
echo "# blkrr: $BLKRR; $(fio --version); $(btreplay -V 2>&1 | head -1); load average before: $(bench_loadavg)"
for R in $RATES; do gen "$R"; done
for round in $(seq "$ROUNDS"); do
  for R in $RATES; do
    L=$W/$R/load.load.gz
    run "blkrr" "$R" "$round" blkrr \
      "$BLKRR" replay "$L" "$LOOP" --quiet --overwrite --json-file "$W/u.json"
    run "blkrr --realtime $RT" "$R" "$round" blkrr \
      "$BLKRR" replay "$L" "$LOOP" --quiet --realtime "$RT" --overwrite --json-file "$W/u.json"
    run "btreplay (btrecord -M 1)" "$R" "$round" btreplay \
      bash -c "cd $W/$R/bt && exec btreplay $NAME"
    run "fio iolog" "$R" "$round" fio \
      fio --name=replay --read_iolog="$W/$R/load.iolog" --ioengine=io_uring --iodepth=128 \
      --direct=1 --output=/dev/null
  done
done
python3 tests/bench/replay-analyse.py table "$W/results.jsonl"

echo
echo "## blkrr's own delays (user-space submit time - due time), no tracer, same rates, medians of $ROUNDS"
echo
for round in $(seq "$ROUNDS"); do
  for R in $RATES; do
    "$BLKRR" replay "$W/$R/load.load.gz" "$LOOP" --quiet --overwrite --json-file "$W/own.json"
    jq -c --arg r "$R" '{rate: ($r | tonumber), d: (.delay_ns.all | {median: (.p50 / 1000), p99: (.p99 / 1000), "p99.9": (.p999 / 1000), max: (.max / 1000)})}' "$W/own.json" >> "$W/own.jsonl"
  done
done
python3 tests/bench/replay-analyse.py own "$W/own.jsonl"

echo
echo "## fullspeed (4 KiB random reads, the ${RATES##* } IOPS load, QD 32)"
echo
R=${RATES##* }
cputime() {  # cputime FILE CMD...: user+sys seconds of CMD into FILE
  local out=$1
  shift
  /usr/bin/time -f "%U %S" -o "$out" "$@"
}
cputime "$W/fs-u.time" "$BLKRR" replay "$W/$R/load.load.gz" "$LOOP" --quiet --timing fullspeed \
  --queue-depth 32 --overwrite --json-file "$W/fs-u.json"
fio --name=nostall --read_iolog="$W/$R/load.iolog" --replay_no_stall=1 --ioengine=io_uring \
  --iodepth=32 --direct=1 --output-format=json --output="$W/fs-fio.json"
fio --name=randread --filename="$LOOP" --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 \
  --direct=1 --time_based --runtime="$SECS" --output-format=json --output="$W/fs-fio-rr.json"
python3 tests/bench/replay-analyse.py fullspeed "$W"
echo
echo "# load average after: $(bench_loadavg)"
