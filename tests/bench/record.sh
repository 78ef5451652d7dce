#!/usr/bin/env bash
# Cost of `blkrr record` on a loop device over /dev/shm, compared in the same
# run with no tracing, a bpftrace one-liner on the same two tracepoints and
# the kernel's own blktrace engine (the `blk` tracer of tracefs).
#   Also `record --lean` and the floor: empty tp_btf programs on the same three
#   tracepoints (tests/bench/bench_floor), the least any such tracer costs.
#   fio 4k random reads, queue depth 32, libaio, modes alternated, ROUNDS
#   rounds of SECONDS each; medians reported. Then, in separate runs:
#   kernel ns/request of our BPF programs (kernel.bpf_stats_enabled),
#   recorder user+sys CPU per request, trace bytes per request, and a fixed
#   50k IOPS run (achieved IOPS and mean completion latency).
#   Kernel ns/request is corrected for other devices' I/O on a shared machine:
#   a second recorder on an idle loop device measures the early-exit cost of
#   each program, which is subtracted for the runs that were not ours.
#   DEVICE=zram measures the bio-level capture instead (docs/capture.md): the
#   measured and the idle device are zram devices of their own (1 GiB and
#   64 MiB, bio-based), and the modes are none, blkrr and lean (the floor,
#   bpftrace's block_rq_* one-liner and the blk tracer see no requests there).
# Usage (root): tests/bench/record.sh [BLKRR_BINARY]
#   env: ROUNDS=3 SECONDS_PER_RUN=5; PER_REQUEST_ONLY=1 skips the IOPS runs;
#   DEVICE=loop (default) or zram
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh
bench_init record
BLKRR=${1:-${BLKRR:-$PWD/build/userspace/cli/blkrr}}
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_RUN:-5}
bench_need fio bpftrace bpftool jq
[ -x "$BLKRR" ] || bench_die "no blkrr binary at $BLKRR (build first)"
# The floor: empty tp_btf programs on io_start/issue/complete (built beside blkrr).
FLOOR=${FLOOR:-$(dirname "$BLKRR")/../../tests/bench/bench_floor}
[ -x "$FLOOR" ] || bench_die "no bench_floor at $FLOOR (build first)"

work=$BENCH_WORK
loop=""
idle=""
rec_pid=""
idle_pid=""
stop_tracers() {
  if [ -n "$rec_pid" ]; then kill "$rec_pid" 2> /dev/null; fi
  if [ -n "$idle_pid" ]; then kill "$idle_pid" 2> /dev/null; fi
  sysctl -q kernel.bpf_stats_enabled=0
}
bench_on_exit stop_tracers
DEVICE=${DEVICE:-loop}
case $DEVICE in
  loop) bench_loop loop 1G urandom; bench_loop idle 64M none; what="1 GiB loop over /dev/shm" ;;
  zram) bench_zram loop 1G; bench_zram idle 64M none; what="1 GiB zram, bio level" ;;
  *) bench_die "DEVICE must be loop or zram, not $DEVICE" ;;
esac

fio_iops() {  # fio_iops [extra fio args] -> "iops clat_mean_us"
  fio --name=bench --filename="$loop" --direct=1 --ioengine=libaio --rw=randread --bs=4k \
      --iodepth=32 --runtime="$SECS" --time_based --norandommap --randrepeat=0 \
      --output-format=json "$@" 2>/dev/null |
    jq -r '.jobs[0].read | "\(.iops) \(.clat_ns.mean / 1000)"'
}

wait_ready() {  # wait until the log file contains the ready line
  for _ in $(seq 100); do grep -q "Ctrl-C stops\|Attaching\|^ready" "$1" 2>/dev/null && return 0; sleep 0.05; done
  echo "tracer did not start: $(cat "$1")" >&2; exit 1
}

run_mode() {  # run_mode MODE [fio args] -> prints "iops clat"
  local mode=$1; shift
  case $mode in
    none) fio_iops "$@" ;;
    blkrr)
      "$BLKRR" record -d "$loop" --overwrite -o "$work/rec.blkrr" >"$work/rec.log" 2>&1 &
      rec_pid=$!; wait_ready "$work/rec.log"
      fio_iops "$@"
      kill -TERM $rec_pid; wait $rec_pid; rec_pid=""
      rm -f "$work/rec.blkrr" ;;
    lean)
      "$BLKRR" record --lean -d "$loop" --overwrite -o "$work/rec.blkrr" >"$work/rec.log" 2>&1 &
      rec_pid=$!; wait_ready "$work/rec.log"
      fio_iops "$@"
      kill -TERM $rec_pid; wait $rec_pid; rec_pid=""
      rm -f "$work/rec.blkrr" ;;
    floor)  # empty tp_btf programs on the same three tracepoints
      "$FLOOR" >"$work/floor.log" 2>&1 &
      rec_pid=$!; wait_ready "$work/floor.log"
      fio_iops "$@"
      kill -TERM $rec_pid; wait $rec_pid || true; rec_pid="" ;;
    bpftrace)
      bpftrace -e 'tracepoint:block:block_rq_issue, tracepoint:block:block_rq_complete { @[probe] = count(); }' \
        >"$work/bt.log" 2>&1 &
      rec_pid=$!; wait_ready "$work/bt.log"
      fio_iops "$@"
      # SIGTERM: background jobs of a non-interactive shell ignore SIGINT.
      kill -TERM $rec_pid; wait $rec_pid || true; rec_pid="" ;;
    blktracer)
      bench_tracer_on "$loop"
      fio_iops "$@"
      bench_tracer_off /dev/null ;;
  esac
}


if [ -z "${PER_REQUEST_ONLY:-}" ]; then
modes=(none blkrr lean floor bpftrace blktracer)
[ "$DEVICE" = zram ] && modes=(none blkrr lean)
SECS_SAVED=$SECS; SECS=2; fio_iops >/dev/null; SECS=$SECS_SAVED  # warm-up
declare -A res
echo "# fio 4k randread qd32 libaio on $loop ($what), ${SECS}s per run, $ROUNDS rounds, modes alternated"
for r in $(seq "$ROUNDS"); do
  for m in "${modes[@]}"; do
    v=$(run_mode "$m")
    res[$m]+="${v%% *}"$'\n'
    echo "round $r $m: ${v%% *} IOPS" >&2
  done
done
base=$(printf "%s" "${res[none]}" | bench_median)
echo
echo "| mode | median IOPS | vs no tracing | runs |"
echo "|---|---|---|---|"
for m in "${modes[@]}"; do
  med=$(printf "%s" "${res[$m]}" | bench_median)
  runs=$(printf "%s" "${res[$m]}" | awk '{printf "%s%d", (NR>1?" ":""), $1}')
  echo "| $m | $(printf %.0f "$med") | $(awk -v a="$med" -v b="$base" 'BEGIN{printf "%.3f", a/b}') | $runs |"
done

fi

# Steadier figures: kernel CPU per request of our programs, recorder CPU,
# bytes per request (runs with kernel.bpf_stats_enabled=1), full and --lean.
prog_stats() {  # prog_stats PID -> JSON [{name, t, n}] of that process's programs
  local ids
  ids=$(cat /proc/"$1"/fdinfo/* 2>/dev/null | sed -n 's/^prog_id:[[:space:]]*//p' | sort -u | jq -s -c .)
  bpftool prog show --json | jq -c --argjson ids "$ids" \
    '[.[] | select(.id as $i | $ids | index($i)) | {name, t: (.run_time_ns // 0), n: (.run_cnt // 0)}]'
}
per_request() {  # per_request LABEL [record args]
  local label=$1; shift
  sysctl -q kernel.bpf_stats_enabled=1
  "$BLKRR" record -d "$loop" --overwrite -o "$work/stats.blkrr" "$@" >"$work/rec.log" 2>&1 &
  rec_pid=$!
  "$BLKRR" record -d "$idle" --overwrite -o "$work/idle.blkrr" "$@" >"$work/idle.log" 2>&1 &
  idle_pid=$!
  wait_ready "$work/rec.log"; wait_ready "$work/idle.log"
  local hz utick stick pa pb reqs bpr
  hz=$(getconf CLK_TCK)
  fio_iops >/dev/null
  pa=$(prog_stats $rec_pid); pb=$(prog_stats $idle_pid)
  read -r utick stick <<<"$(awk '{print $14, $15}' /proc/$rec_pid/stat)"
  kill -TERM $rec_pid $idle_pid; wait $rec_pid; wait $idle_pid || true; rec_pid=""; idle_pid=""
  sysctl -q kernel.bpf_stats_enabled=0
  reqs=$(sed -n 's/^recorded \([0-9]*\) requests.*/\1/p' "$work/rec.log")
  bpr=$(sed -n 's/.* \([0-9.]*\) bytes\/request.*/\1/p' "$work/rec.log")
  echo
  echo "## per request, $label (kernel.bpf_stats_enabled=1; $reqs requests)"
  jq -n -r --argjson a "$pa" --argjson b "$pb" --argjson n "$reqs" '
    [$a[] | . as $p | ([$b[] | select(.name == $p.name)][0] // {t: 0, n: 0}) as $q |
     ($q.t / (if $q.n > 0 then $q.n else 1 end)) as $e |
     {name: $p.name, runs: $p.n, exit: $e,
      own: (if $n > 0 then ($p.t - ([$p.n - $n, 0] | max) * $e) / $n else 0 end)}] |
    (.[] | select(.name != "blkrr_requeue") |
      "- \(.name): \(.own | floor) ns/request (\(.runs) runs; early exit for other devices \(.exit | floor) ns)"),
    "- kernel total: \([.[] | select(.name != "blkrr_requeue") | .own] | add | floor) ns/request"'
  awk -v u="$utick" -v s="$stick" -v hz="$hz" -v n="$reqs" 'BEGIN{printf "- recorder CPU: user %.0f ns/request, sys %.0f ns/request (sys includes interrupt work the tick accounting charges to the recorder)\n", u / hz * 1e9 / n, s / hz * 1e9 / n}'
  echo "- trace size: $bpr bytes/request"
  grep "drops and anomalies" "$work/rec.log" | sed 's/^/- /'
  rm -f "$work/stats.blkrr" "$work/idle.blkrr"
}
per_request "blkrr record"
"$BLKRR" record --help 2>&1 | grep -q -- --lean && per_request "blkrr record --lean" --lean
[ -n "${PER_REQUEST_ONLY:-}" ] && exit 0

# Fixed rate: 50k IOPS, with and without blkrr.
echo
echo "## fixed 50k IOPS (rate_iops=50000), medians of $ROUNDS"
declare -A fixed_iops fixed_lat
for r in $(seq "$ROUNDS"); do
  for m in none blkrr; do
    v=$(run_mode "$m" --rate_iops=50000)
    fixed_iops[$m]+="${v%% *}"$'\n'
    fixed_lat[$m]+="${v##* }"$'\n'
  done
done
echo "| mode | IOPS | mean clat (us) |"
echo "|---|---|---|"
for m in none blkrr; do
  echo "| $m | $(printf "%s" "${fixed_iops[$m]}" | bench_median | xargs printf %.0f) | $(printf "%s" "${fixed_lat[$m]}" | bench_median | xargs printf %.1f) |"
done
