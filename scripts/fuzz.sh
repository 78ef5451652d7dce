#!/usr/bin/env bash
# Build the libFuzzer harnesses of every reader (tests/fuzz, clang, ASan +
# UBSan, in build-fuzz/) and run each for SECONDS (default 10), one after the
# other at nice 10. Seeds come from tests/data (fuzz_seeds); the corpus grows
# in build-fuzz/corpus/<harness>. Crashes are saved as build-fuzz/crash-*.
# Exit status: 0 only if no harness found anything.
#   bash scripts/fuzz.sh 600          # docs/reliability.md: the long runs
#   FUZZ_ONLY="native load" bash scripts/fuzz.sh 60
# The per-input timeout (FUZZ_TIMEOUT, default 60 s) is wall time: on a
# loaded shared machine a nice 10 process may get no CPU for seconds.
# Inputs are at most FUZZ_MAX_LEN bytes (default 16384: past the text
# reader's first buffer refills, small enough for thousands of inputs a
# second). ASan's quarantine is 16 MB (FUZZ_QUARANTINE_MB): with the default
# 256 MB every input's freed buffers came back as fresh pages (page faults,
# munmap) and RSS grew to 400 MB. FUZZ_RUNS=N stops a harness after N
# executions (the long runs: 10000000). Each harness writes its inputs to a
# file in a directory of its own in /dev/shm (BLKRR_FUZZ_DIR), removed at
# the end.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
build=${BLKRR_FUZZ_BUILD_DIR:-build-fuzz}
harnesses=${FUZZ_ONLY:-native load blktrace blkparse fio msr datasets replay header}
if [ -z "${FUZZ_NO_BUILD:-}" ]; then  # FUZZ_NO_BUILD=1: run what is built
  launcher=()  # ccache when there is one: the sanitized build is the slow part of CI's stage
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
    # paths relative to the checkout's folder, as in scripts/build.sh
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$PWD")} CCACHE_NOHASHDIR=1
  fi
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DBLKRR_FUZZ=ON -DBLKRR_BENCH=OFF "${launcher[@]}" >/dev/null
  targets=(fuzz_seeds)
  for h in $harnesses; do targets+=("fuzz_$h"); done
  ninja -C "$build" -j "${FUZZ_JOBS:-2}" "${targets[@]}" >/dev/null
fi
# Seeds of this run in their own directory: runs may go in parallel.
seeds=$(mktemp -d "$build/seeds.XXXXXX")
shm=/dev/shm
[ -w "$shm" ] || shm=${TMPDIR:-/tmp}
BLKRR_FUZZ_DIR=$(mktemp -d "$shm/blkrr-fuzz.XXXXXX")
export BLKRR_FUZZ_DIR
trap 'rm -rf "$seeds" "$BLKRR_FUZZ_DIR"' EXIT
"$build/tests/fuzz/fuzz_seeds" tests/data "$seeds"
status=0
printf '%-9s %8s %12s %10s %8s %8s %s\n' harness seconds executions exec/s cpu_s rss_mb result
for h in $harnesses; do
  mkdir -p "$build/corpus/$h" "$seeds/$h"
  log="$build/fuzz-$h.log"
  rc=0
  t0=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
  ASAN_OPTIONS="quarantine_size_mb=${FUZZ_QUARANTINE_MB:-16}${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
    nice -n 10 "$build/tests/fuzz/fuzz_$h" -max_total_time="$secs" -rss_limit_mb=512 \
    -malloc_limit_mb=512 -timeout="${FUZZ_TIMEOUT:-60}" -max_len="${FUZZ_MAX_LEN:-16384}" \
    -print_final_stats=1 ${FUZZ_RUNS:+-runs=$FUZZ_RUNS} \
    -artifact_prefix="$build/crash-$h-" "$build/corpus/$h" "$seeds/$h" >"$log" 2>&1 || rc=$?
  # CPU seconds the harness got (children's user+sys ticks): the machine is shared.
  t1=$(awk '{print $14+$15+$16+$17}' /proc/$$/stat)
  cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.1f", (b - a) / hz}')
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  result=ok
  if [ "$rc" -ne 0 ]; then
    result="FAILED (exit $rc, see $log)"
    status=1
  fi
  printf '%-9s %8s %12s %10s %8s %8s %s\n' "$h" "$secs" "${execs:-?}" "${rate:-?}" "$cpu" \
    "${rss:-?}" "$result"
done
exit $status
