#!/usr/bin/env bash
# Where does a block tracer's cost become lost IOPS? fio 4k random reads,
# queue depth 32, libaio, on a 1 GiB loop device over /dev/shm, with no
# tracer, then with the floor programs (userspace/capture/bench_floor) doing
# N clock reads in the issue program, then in the completion program; modes
# alternated, ROUNDS rounds of 3 s. Then the cost of one such program run
# (kernel.bpf_stats_enabled).
# Usage (root): [N=10] [ROUNDS=3] scripts/bench-burn.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
FLOOR=${1:-build}/userspace/capture/bench_floor
N=${N:-10}
ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "bench-burn: needs root (BPF, loop devices)" >&2; exit 2; }
[ -x "$FLOOR" ] || { echo "bench-burn: $FLOOR not built" >&2; exit 2; }
for t in fio jq bpftool; do command -v $t > /dev/null || { echo "bench-burn: $t is needed" >&2; exit 2; }; done
W=$(mktemp -d /dev/shm/blkrr-bench-burn.XXXXXX)
LO=
FP=
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
  [ -n "$FP" ] && { kill -INT "$FP" 2> /dev/null || true; wait "$FP" 2> /dev/null || true; }
  sysctl -qw kernel.bpf_stats_enabled="$STATS_OLD" || true
  [ -n "$LO" ] && losetup -d "$LO" 2> /dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
truncate -s 1G "$W/dev.img"
LO=$(losetup -f --show "$W/dev.img")
dd if=/dev/zero of="$LO" bs=1M count=1024 oflag=direct status=none
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
