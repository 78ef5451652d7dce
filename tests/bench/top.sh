#!/usr/bin/env bash
# Cost of leaving `blkrr top` running: fio 4k random reads, queue depth 32,
# libaio, on a loop device over /dev/shm (the device's maximum rate here),
# with nothing, with `blkrr top` and with a biotop-like bpftrace script (the
# peer: per-comm bytes and summed latencies) running. Modes alternate,
# ROUNDS rounds of SECONDS_PER_RUN seconds each, medians reported. Also:
# kernel ns per request of top's BPF programs (kernel.bpf_stats_enabled) and
# the CPU time of the top process itself.
# Usage (root): tests/bench/top.sh [BLKRR_BINARY]   env: ROUNDS=5 SECONDS_PER_RUN=5
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh
bench_init top
BLKRR=${1:-${BLKRR:-$PWD/build/userspace/cli/blkrr}}
ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_RUN:-5}
bench_need fio bpftrace bpftool jq
[ -x "$BLKRR" ] || bench_die "no blkrr binary at $BLKRR (build first)"
work=$BENCH_WORK
bg=""
stop_bg() {
  if [ -n "$bg" ]; then kill "$bg" 2> /dev/null && wait "$bg" 2> /dev/null; fi
  sysctl -q kernel.bpf_stats_enabled=0
}
bench_on_exit stop_bg
loop=""
bench_loop loop 1G urandom

fio_iops() {
  fio --name=bench --filename="$loop" --direct=1 --ioengine=libaio --rw=randread --bs=4k \
    --iodepth=32 --runtime="$SECS" --time_based --norandommap --randrepeat=0 \
    --output-format=json 2>/dev/null | jq -r '.jobs[0].read.iops'
}

# biotop's measure with bpftrace: bytes, requests and summed latency per comm.
# shellcheck disable=SC2016  # bpftrace's own $variables
peer_script='
tracepoint:block:block_rq_issue { @start[args->dev, args->sector] = nsecs; @who[args->dev, args->sector] = comm; }
tracepoint:block:block_rq_complete /@start[args->dev, args->sector]/ {
  $k = @who[args->dev, args->sector];
  @lat[$k] = sum(nsecs - @start[args->dev, args->sector]);
  @bytes[$k] = sum(args->nr_sector * 512); @io[$k] = count();
  delete(@start[args->dev, args->sector]); delete(@who[args->dev, args->sector]);
}
interval:s:1 { print(@bytes); print(@io); print(@lat); clear(@bytes); clear(@io); clear(@lat); }'

start_bg() {  # start_bg MODE: start the observer, wait until it is attached
  case $1 in
    none) bg="" ;;
    top)
      "$BLKRR" top -C -d "$loop" 1 >"$work/top.out" 2>&1 &
      bg=$!
      for _ in $(seq 100); do grep -q BYTES "$work/top.out" && break; sleep 0.05; done ;;
    peer)
      bpftrace -e "$peer_script" >"$work/peer.out" 2>&1 &
      bg=$!
      for _ in $(seq 200); do grep -q Attaching "$work/peer.out" && break; sleep 0.05; done
      sleep 0.5 ;;
  esac
}
stop_bg() {
  [ -n "$bg" ] && { kill -INT "$bg"; wait "$bg" 2>/dev/null || true; }
  bg=""
}

declare -A res
modes="none top peer"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
for r in $(seq "$ROUNDS"); do
  for m in $modes; do
    start_bg "$m"
    iops=$(fio_iops)
    stop_bg
    res[$m]="${res[$m]:-} $iops"
    printf 'round %d %-5s %10.0f IOPS\n' "$r" "$m" "$iops"
  done
done

median() { tr ' ' '\n' | grep -v '^$' | bench_median; }
base=$(echo "${res[none]}" | median)
echo
echo "medians over $ROUNDS rounds of ${SECS}s (fio 4k randread qd32 libaio on $loop over /dev/shm):"
for m in $modes; do
  med=$(echo "${res[$m]}" | median)
  awk -v m="$m" -v v="$med" -v b="$base" 'BEGIN { printf "  %-5s %10.0f IOPS  %+6.2f %% vs none\n", m, v, (v - b) / b * 100 }'
done

# Kernel time of top's BPF programs per request, and top's own CPU time.
# top's programs are those whose fds it holds (/proc/PID/fdinfo prog_id):
# other blkrr processes may run at the same time. CPU time from
# /proc/PID/schedstat (ns), not the 10 ms ticks of /proc/PID/stat.
sysctl -q kernel.bpf_stats_enabled=1
"$BLKRR" top -C -d "$loop" 1 >"$work/top.out" 2>&1 &
bg=$!
for _ in $(seq 100); do grep -q BYTES "$work/top.out" && break; sleep 0.05; done
ids=$(cat /proc/$bg/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" {print $2}' | sort -un | jq -s -c .)
c0=$(awk '{print $1}' /proc/$bg/schedstat)
iops=$(fio_iops)
c1=$(awk '{print $1}' /proc/$bg/schedstat)
echo
echo "top's programs and process during one ${SECS}s fio run at $iops IOPS (load: $(cut -d' ' -f1-3 /proc/loadavg)):"
# The programs run for every request of every disk (other disks leave early):
# per completion of any disk (a lower bound for fio's requests when other
# disks are busy) and all program time over fio's requests (an upper bound).
bpftool prog show --json | jq -r --argjson ids "$ids" --argjson fioreq "$(awk -v i="$iops" -v s="$SECS" 'BEGIN { printf "%d", i * s }')" \
  '[.[] | select(.id as $i | $ids | index($i)) | select(.run_cnt > 0)] |
   (map("  \(.name): \(.run_cnt) runs, \((.run_time_ns / .run_cnt) | floor) ns/run") | .[]),
   "  per completion, any disk (sum of the programs / blkrr_complete runs): \((map(.run_time_ns) | add) /
      ([.[] | select(.name == "blkrr_complete") | .run_cnt] | add) | floor) ns",
   "  per fio request (sum of the programs / \($fioreq) fio requests): \((map(.run_time_ns) | add) / $fioreq | floor) ns"'
awk -v ns="$((c1 - c0))" -v s="$SECS" -v iops="$iops" \
  'BEGIN { printf "  blkrr top process: %.3f ms CPU in %d s (%.3f %% of one CPU, %.1f us per 1 s refresh, %.2f ns per request)\n",
           ns / 1e6, s, ns / 1e9 / s * 100, ns / 1e3 / s, ns / (iops * s) }'
stop_bg
sysctl -q kernel.bpf_stats_enabled=0
