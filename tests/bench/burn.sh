#!/usr/bin/env bash
# Where does a block tracer's cost become lost IOPS? fio 4k random reads,
# queue depth 32, libaio, on a 1 GiB loop device over /dev/shm, with no
# tracer, then with the floor programs (tests/bench/bench_floor) doing
# N clock reads in the issue program, then in the completion program; modes
# alternated, ROUNDS rounds of 3 s. Then the cost of one such program run
# (kernel.bpf_stats_enabled).
# Usage (root): [N=10] [ROUNDS=3] tests/bench/burn.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
FLOOR=${1:-build}/tests/bench/bench_floor
N=${N:-10}
ROUNDS=${ROUNDS:-3}
# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh
bench_init burn
[ -x "$FLOOR" ] || bench_die "$FLOOR not built"
bench_need fio jq bpftool
W=$BENCH_WORK
FP=
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
restore() {
  [ -n "$FP" ] && { kill -INT "$FP" 2> /dev/null; wait "$FP" 2> /dev/null; }
  sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD"
}
bench_on_exit restore
bench_loop LO 1G zero
iops() {
  fio --name=r --filename="$LO" --direct=1 --rw=randread --bs=4k --iodepth=32 --ioengine=libaio \
    --runtime=3 --time_based --output-format=json 2> /dev/null | jq '.jobs[0].read.iops|floor'
}
attach() {
  "$FLOOR" "$@" > "$W/floor.out" 2>&1 &
  FP=$!
  for _ in $(seq 50); do grep -qs ready "$W/floor.out" && return 0; sleep 0.1; done
  echo "bench-burn: bench_floor did not start: $(cat "$W/floor.out")" >&2
  exit 1
}
detach() { kill -INT "$FP"; wait "$FP" || true; FP=; }
echo "# $N clock reads per event; fio 4k randread qd32 libaio, 3 s per run; $(nproc) CPUs"
echo "| round | no tracer | + N at issue | + N at completion |"
echo "|---|---|---|---|"
for r in $(seq "$ROUNDS"); do
  a=$(iops)
  attach --burn-issue "$N"; b=$(iops); detach
  attach --burn-complete "$N"; c=$(iops); detach
  echo "| $r | $a | $b | $c |"
done
sysctl -qw kernel.bpf_stats_enabled=1
attach --burn-complete "$N"
iops > /dev/null
bpftool prog show -j | jq -r '.[] | select(.name == "floor_complete") |
  "cost of one completion run: \((.run_time_ns / .run_cnt) | floor) ns (bpf_stats)"'
detach
