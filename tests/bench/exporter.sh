#!/usr/bin/env bash
# CPU cost of the Prometheus exporter (`blkrr top -q --prometheus`) scraped
# once a second: starts it, lets it settle, curls /metrics every second for
# SECONDS_TOTAL seconds, and reports the exporter's own CPU time (utime +
# stime of /proc/PID/stat, all threads) over that window, the scrapes that
# answered and the size of the answer. With LOAD=1 a fio random-read load
# runs on a loop device over /dev/shm meanwhile (series for fio and the
# loop worker), otherwise the machine's own I/O is what is counted.
# Usage (root): tests/bench/exporter.sh [BLKRR_BINARY]   env: SECONDS_TOTAL=60 LOAD=0 PORT=9119
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/bench/lib.sh
. tests/bench/lib.sh
bench_init exporter
BLKRR=${1:-$PWD/build/userspace/cli/blkrr}
SECS=${SECONDS_TOTAL:-60}
PORT=${PORT:-9119}
[ -x "$BLKRR" ] || bench_die "no blkrr binary at $BLKRR (build first)"
bench_need curl
work=$BENCH_WORK
pid="" peer_pid="" fio_pid="" loop=""
stop_all() {
  local p
  for p in "$fio_pid" "$pid" "$peer_pid"; do
    if [ -n "$p" ]; then kill "$p" 2> /dev/null && wait "$p" 2> /dev/null; fi
  done
  return 0
}
bench_on_exit stop_all

if [ "${LOAD:-0}" = 1 ]; then
  bench_loop loop 512M none
  fio --name=load --filename="$loop" --direct=1 --ioengine=libaio --rw=randread --bs=4k \
    --iodepth=4 --rate_iops=2000 --runtime=$((SECS + 10)) --time_based >/dev/null 2>&1 &
  fio_pid=$!
fi
# The peer, scraped in the same seconds: Prometheus' node exporter with only
# its diskstats collector (per-device counters from /proc/diskstats, no
# per-process attribution), where the package prometheus-node-exporter is
# installed.
peer_pid=""
if command -v prometheus-node-exporter >/dev/null; then
  prometheus-node-exporter --web.listen-address="127.0.0.1:$((PORT + 1))" \
    --collector.disable-defaults --collector.diskstats \
    --collector.diskstats.device-exclude='^$' 2>/dev/null &
  peer_pid=$!
fi
"$BLKRR" top -q --prometheus "127.0.0.1:$PORT" 2>"$work/err" &
pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/metrics" >/dev/null && break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null || { echo "exporter did not start: $(cat "$work/err")" >&2; exit 1; }
sleep 2
ticks() { [ -z "$1" ] && echo 0 && return; awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
t0=$(ticks "$pid") p0=$(ticks "$peer_pid") w0=$(date +%s.%N) ok=0 bytes=0 pok=0 pbytes=0
for _ in $(seq "$SECS"); do
  if body=$(curl -sf --max-time 2 "http://127.0.0.1:$PORT/metrics"); then
    ok=$((ok + 1))
    bytes=${#body}
  fi
  if [ -n "$peer_pid" ] && body=$(curl -sf --max-time 2 "http://127.0.0.1:$((PORT + 1))/metrics"); then
    pok=$((pok + 1))
    pbytes=${#body}
  fi
  sleep 1
done
t1=$(ticks "$pid") p1=$(ticks "$peer_pid") w1=$(date +%s.%N)
awk -v t="$((t1 - t0))" -v hz="$hz" -v w0="$w0" -v w1="$w1" -v ok="$ok" -v n="$SECS" -v b="$bytes" \
  -v rss="$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")" 'BEGIN {
  cpu = t / hz; wall = w1 - w0
  printf "exporter CPU %.2f s in %.1f s wall = %.2f %% of one core; %d/%d scrapes answered, last %d bytes; max RSS %d kB\n",
         cpu, wall, 100 * cpu / wall, ok, n, b, rss }'
if [ -n "$peer_pid" ]; then
  awk -v t="$((t1 - t0))" -v p="$((p1 - p0))" -v hz="$hz" -v w0="$w0" -v w1="$w1" -v ok="$pok" \
    -v n="$SECS" -v b="$pbytes" -v rss="$(awk '/VmHWM/ { print $2 }' "/proc/$peer_pid/status")" 'BEGIN {
    cpu = p / hz; wall = w1 - w0
    printf "peer node_exporter (diskstats only) CPU %.2f s = %.2f %% of one core; %d/%d scrapes answered, last %d bytes; max RSS %d kB\n",
           cpu, 100 * cpu / wall, ok, n, b, rss
    if (p > 0) printf "ratio blkrr/node_exporter CPU: %.2f\n", t / p }'
else
  echo "peer: prometheus-node-exporter not installed (apt-get install prometheus-node-exporter)"
fi
