#!/usr/bin/env bash
# Cost of the live validator (issue 6) on a loop device over /dev/shm.
#   1. Steady measures (independent of the machine's load):
#      - kernel CPU of the capture programs per request (bpf_stats run_time_ns
#        of the validator's own programs / requests), lean capture (what
#        --validate uses) against the full capture of `blkrr record`;
#      - the validator's consumer thread CPU per record (from the JSON of
#        `blkrr replay --validate`), and the replay process's user+sys CPU
#        per request with and without --validate.
#   2. Fullspeed IOPS of `blkrr replay --timing fullspeed` of a synthetic
#      4 KiB random-read load (N requests) with and without --validate, and
#      fio io_uring randread qd32 for DURATION s with and without the
#      validator attached (validate_attach), same run, rounds alternated,
#      medians. Noisy on a shared machine: the load average is printed.
# Usage: [RUNS=5] [DURATION=3] [BLKRR_BUILD_DIR=build] tests/bench/validate.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BLKRR_BUILD_DIR:-build}
BLKRR=${BLKRR:-$BUILD/userspace/cli/blkrr}
ATTACH=${ATTACH:-$BUILD/userspace/validate/validate_attach}
RUNS=${RUNS:-5}
DURATION=${DURATION:-3}
N=${1:-300000}
# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh
bench_init validate
for b in "$BLKRR" "$ATTACH"; do
  [ -x "$b" ] || bench_die "$b not built (ninja -C $BUILD blkrr validate_attach)"
done
bench_need jq fio bpftool /usr/bin/time python3 gzip
work=$BENCH_WORK
APID=
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
stop_validator() {
  if [ -n "$APID" ]; then kill -INT "$APID" 2> /dev/null; wait "$APID" 2> /dev/null; fi
  sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD"
}
bench_on_exit stop_validator
LO=
bench_loop LO 1G none

# Synthetic load: N random 4 KiB reads over the 1 GiB device, 10 us apart.
python3 - "$N" > "$work/load" <<'PY'
import random, sys
n = int(sys.argv[1]); random.seed(6)
print("synthetic 4k random read load (tests/bench/validate.sh)")
print("start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0")
for i in range(n):
    print("%.9f ; %d ; 8 ; R ; 0.0 ; 0.0" % (i * 1e-5, random.randrange(0, 2 * 1024 * 1024 // 8) * 8))
PY
gzip -1 "$work/load" && mv "$work/load.gz" "$work/synthetic.load.gz"

attach() {  # attach [--full]: start validate_attach on the device, wait until it is ready
  "$ATTACH" "$@" "$LO" > "$work/attach.out" 2>&1 &
  APID=$!
  for _ in $(seq 100); do grep -qs ready "$work/attach.out" && return 0; sleep 0.1; done
  echo "bench-validate: validator did not start: $(cat "$work/attach.out")" >&2; exit 1
}
detach() {
  kill -INT "$APID"; wait "$APID" || true; APID=
}
replay() {  # replay JSON [ARGS...]: fullspeed replay; replay process user+sys s -> JSON.cpu
  local js=$1; shift
  /usr/bin/time -f "%U %S" -o "$js.cpu" "$BLKRR" replay --timing fullspeed \
    "$work/synthetic.load.gz" "$LO" --overwrite --json-file "$js" --quiet "$@" > "$work/replay.log" 2>&1 ||
    { echo "bench-validate: replay failed:" >&2; tail -5 "$work/replay.log" >&2; exit 1; }
}
fio_iops() {
  fio --name=r --filename="$LO" --direct=1 --rw=randread --bs=4k --iodepth=32 --ioengine=io_uring \
    --runtime="$DURATION" --time_based --output-format=json 2>/dev/null | jq '.jobs[0].read.iops'
}
# Sum of run_time_ns and run_cnt of the BPF programs held by process $1 (its
# program fds name them in /proc/PID/fdinfo; bpftool here shows no pids).
prog_stats() {
  local ids ns=0 cnt=0 id a b
  ids=$(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u)
  for id in $ids; do
    read -r a b <<< "$(bpftool prog show id "$id" -j | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"')"
    ns=$((ns + a)); cnt=$((cnt + b))
  done
  echo "$ns $cnt"
}
per_req() {  # per_req JSON: replay process user+sys CPU in us per completed request
  awk -v n="$(jq '.requests.completed' "$1")" '{printf "%.3f\n", ($1 + $2) / n * 1e6}' "$1.cpu"
}

echo "bench-validate: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at start"

# 1. Kernel CPU of the capture programs per request, lean vs full: the same
# replay (without --validate) with validate_attach on the device.
sysctl -qw kernel.bpf_stats_enabled=1
: > "$work/k.lean"; : > "$work/k.full"; : > "$work/runs.lean"; : > "$work/runs.full"
for round in $(seq "$RUNS"); do
  for mode in lean full; do
    if [ "$mode" = full ]; then attach --full; else attach; fi
    replay "$work/k.json"
    read -r ns cnt <<< "$(prog_stats "$APID")"
    detach
    n=$(sed -n 's/^captured \([0-9]*\) .*/\1/p' "$work/attach.out")
    awk -v ns="$ns" -v n="$n" 'BEGIN {printf "%.1f\n", ns / n}' >> "$work/k.$mode"
    # Program runs per captured request: 3 (io_start, issue, complete) when no
    # other device did I/O meanwhile (the programs run, and filter, for all).
    awk -v c="$cnt" -v n="$n" 'BEGIN {printf "%.2f\n", c / n}' >> "$work/runs.$mode"
  done
done
sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD"

# 2. Fullspeed IOPS with and without the validator, rounds alternated.
: > "$work/r.plain"; : > "$work/r.val"; : > "$work/f.plain"; : > "$work/f.val"
: > "$work/match"; : > "$work/reader"; : > "$work/cpu.plain"; : > "$work/cpu.val"
for round in $(seq "$RUNS"); do
  for mode in $( [ $((round % 2)) = 1 ] && echo "plain val" || echo "val plain" ); do
    if [ "$mode" = plain ]; then
      replay "$work/p.json"
      jq '.achieved.iops' "$work/p.json" >> "$work/r.plain"
      per_req "$work/p.json" >> "$work/cpu.plain"
      fio_iops >> "$work/f.plain"
    else
      replay "$work/v.json" --validate
      jq '.achieved.iops' "$work/v.json" >> "$work/r.val"
      per_req "$work/v.json" >> "$work/cpu.val"
      jq '.validation.validator_cost.reader_cpu_ns_per_record' "$work/v.json" >> "$work/reader"
      jq '.validation.validator_cost.match_ns / 1e6' "$work/v.json" >> "$work/match"
      verdict=$(jq -r '.validation.verdict' "$work/v.json")
      echo "  round $round: --validate verdict $verdict, $(jq -r '.validation.requests | "\(.covered) of \(.submitted) covered, \(.missing) missing"' "$work/v.json")" >&2
      if [ "$verdict" != complete ]; then
        keep=/dev/shm/blkrr-bench-validate-kept-$round-$$
        mkdir -p "$keep" && cp "$work/v.json" "$keep/"
        echo "  round $round: not complete; summary kept in $keep" >&2
      fi
      attach
      fio_iops >> "$work/f.val"
      detach
    fi
  done
done
echo "runs: $RUNS, load: $N 4 KiB random reads, fio: ${DURATION}s randread qd32 io_uring;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
printf "%-52s %10s %10s %8s\n" "steady measures (median)" "lean" "full" "ratio"
a=$(bench_median < "$work/k.lean"); b=$(bench_median < "$work/k.full")
awk -v a="$a" -v b="$b" 'BEGIN {printf "%-52s %10.1f %10.1f %8.2f\n", "capture programs, kernel ns per request", a, b, a / b}'
printf "%-52s %10s %10s %8s\n" "" "with" "without" "diff"
a=$(bench_median < "$work/cpu.val"); b=$(bench_median < "$work/cpu.plain")
awk -v a="$a" -v b="$b" 'BEGIN {printf "%-52s %10.2f %10.2f %8.2f\n", "replay process user+sys CPU, us per request", a, b, a - b}'
printf "%-52s %10.1f\n" "validator consumer thread, ns CPU per record" "$(bench_median < "$work/reader")"
printf "%-52s %10.1f\n" "matching after the run, ms" "$(bench_median < "$work/match")"
printf "%-52s %10s %10s %8s\n" "fullspeed IOPS (median)" "without" "with" "loss"
for k in r f; do
  a=$(bench_median < "$work/$k.plain"); b=$(bench_median < "$work/$k.val")
  name=$([ $k = r ] && echo "blkrr replay --timing fullspeed [--validate]" || echo "fio randread qd32 (io_uring) [validate_attach]")
  awk -v n="$name" -v a="$a" -v b="$b" 'BEGIN {printf "%-52s %10.0f %10.0f %7.2f%%\n", n, a, b, (1 - b / a) * 100}'
done
echo "raw: kernel ns/request lean $(tr '\n' ' ' < "$work/k.lean")| full $(tr '\n' ' ' < "$work/k.full")"
echo "raw: program runs per request lean $(tr '\n' ' ' < "$work/runs.lean")| full $(tr '\n' ' ' < "$work/runs.full")"
echo "raw: replay IOPS without $(tr '\n' ' ' < "$work/r.plain")| with $(tr '\n' ' ' < "$work/r.val")"
echo "raw: fio IOPS without $(tr '\n' ' ' < "$work/f.plain")| with $(tr '\n' ' ' < "$work/f.val")"
echo "raw: consumer ns/record $(tr '\n' ' ' < "$work/reader")"
