#!/usr/bin/env bash
# Replay onto different hardware, against ground truth: fio jobs recorded on
# one device and replayed on another, compared with the same job run on that
# other device. Devices: FAST = loop over /dev/shm, SLOW = loop with direct
# I/O over a file on the root disk. Directions: fast->slow and slow->fast.
# For each job: the application's own span and IOPS on the target (median of
# REPS runs, with min-max), and the replay's in timestamp, fullspeed,
# --order per-process and dependency timing (default options, then each
# DEP_EXTRA variant) (median of REPS replays), with the span's error against
# the application's median. The runs go in rounds (the application, then one
# replay of each mode), so that a drift of the device weighs on all alike.
#
# The goal column: dependency replay within 5 % of the application's span and
# IOPS, or within twice the application's run-to-run spread (sample standard
# deviation over its REPS runs, relative to their mean) where that is larger.
#
#   sudo tests/bench/dependency.sh [BLKRR]        REPS=5 IOS=1500 by default
#   ONLY="psync-think libaio-qd4"  DIRS=fast-slow   a subset of jobs and directions
#   DEP_EXTRA="--dep-think recorded --dep-async completion;--dep-window 10ms"
#                                  dependency variants, one column each, separated
#                                  by ';' (default: the first; empty: none)
# shellcheck disable=SC2317  # functions called through bench_on_exit
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/tests/bench/lib.sh"
BLKRR=$(realpath "${1:-${BLKRR:-$here/build/userspace/cli/blkrr}}")
REPS=${REPS:-5}
IOS=${IOS:-1500}
SIZE_MB=${SIZE_MB:-256}
[ -x "$BLKRR" ] || bench_die "no blkrr binary at $BLKRR (set BLKRR=...)"
bench_init dependency
bench_need fio jq losetup

bench_loop FAST "${SIZE_MB}M" zero
# The slow device: a file on the root disk, read and written with direct I/O.
slow_img=$(mktemp /var/tmp/blkrr-bench-dependency.XXXXXX.img)
SLOW=
drop_slow() {  # detach before removing: a deleted backing file is not ours to compare
  [ -n "$SLOW" ] && [ "$(cat "/sys/block/${SLOW#/dev/}/loop/backing_file" 2> /dev/null)" = "$slow_img" ] &&
    losetup -d "$SLOW"
  rm -f "$slow_img"
}
bench_on_exit drop_slow
dd if=/dev/zero of="$slow_img" bs=1M count="$SIZE_MB" status=none conv=fsync
SLOW=$(losetup -f --show --direct-io=on "$slow_img")

# Jobs: name and fio arguments (every job issues IOS requests per job thread).
declare -A JOBS=(
  [psync-think]="--ioengine=psync --iodepth=1 --rw=randread --bs=4k --thinktime=200 --numjobs=2"
  [libaio-qd4]="--ioengine=libaio --iodepth=4 --rw=randread --bs=4k --numjobs=1"
  [mixed-rw]="--ioengine=psync --iodepth=1 --rw=randrw --rwmixread=70 --bs=8k --numjobs=1"
  [open-rate]="--ioengine=libaio --iodepth=8 --rw=randread --bs=4k --rate_iops=400 --numjobs=1"
)
read -r -a ORDER <<< "${ONLY:-psync-think libaio-qd4 mixed-rw open-rate}"
read -r -a DIRECTIONS <<< "${DIRS:-fast-slow slow-fast}"
DEP_EXTRA=${DEP_EXTRA-"--dep-think recorded --dep-async completion"}
for job in "${ORDER[@]}"; do [ -n "${JOBS[$job]:-}" ] || bench_die "no job $job"; done

# run_fio DEV JOB -> "span_s iops": the job's own wall time (longest thread) and IOPS.
run_fio() {
  local dev=$1 job=$2
  # shellcheck disable=SC2086  # the job's arguments
  fio --name=app --filename="$dev" --direct=1 --number_ios="$IOS" --size="$((SIZE_MB / 2))M" \
      --randrepeat=1 --group_reporting=0 --output-format=json ${JOBS[$job]} 2>/dev/null |
    jq -r '[.jobs[] | .job_runtime] as $t | [.jobs[] | .read.iops + .write.iops] as $i |
           "\(($t | max) / 1000) \($i | add)"'
}

wait_ready() {
  for _ in $(seq 200); do grep -q "Ctrl-C stops\|Attaching\|^ready" "$1" 2> /dev/null && return 0; sleep 0.05; done
  bench_die "record did not start: $(cat "$1")"
}

# record DEV JOB OUT: the job's requests on DEV as a native trace (fio's only).
record() {
  local dev=$1 job=$2 out=$3 pid
  "$BLKRR" record -d "$dev" --overwrite -o "$BENCH_WORK/all.blkrr" > "$BENCH_WORK/rec.log" 2>&1 &
  pid=$!
  wait_ready "$BENCH_WORK/rec.log"
  run_fio "$dev" "$job" > /dev/null
  kill -TERM "$pid"
  wait "$pid" || true
  "$BLKRR" convert "$BENCH_WORK/all.blkrr" -n fio -o "$out" --quiet --overwrite
}

# replay TRACE DEV TIMING... -> "span_s iops"
replay() {
  local trace=$1 dev=$2
  shift 2
  "$BLKRR" replay "$trace" "$dev" --quiet --overwrite --json-file "$BENCH_WORK/r.json" "$@" > /dev/null 2>&1 ||
    bench_die "replay $* failed"
  jq -r '"\(.achieved.span_s) \(.achieved.iops)"' "$BENCH_WORK/r.json"
}

# stats: "span iops" lines -> "median_span min max median_iops span_sd_rel iops_sd_rel"
# (sd_rel: sample standard deviation over the mean; 0 for one line).
stats() {
  cat > "$BENCH_WORK/s.txt"
  local ms mi lo hi
  ms=$(cut -d' ' -f1 "$BENCH_WORK/s.txt" | bench_median)
  mi=$(cut -d' ' -f2 "$BENCH_WORK/s.txt" | bench_median)
  lo=$(cut -d' ' -f1 "$BENCH_WORK/s.txt" | sort -g | head -1)
  hi=$(cut -d' ' -f1 "$BENCH_WORK/s.txt" | sort -g | tail -1)
  echo "$ms $lo $hi $mi $(awk '{ n++; s += $1; ss += $1 * $1; i += $2; ii += $2 * $2 }
    END { if (n < 2) { print 0, 0; exit }
          sd = sqrt((ss - s * s / n) / (n - 1)); si = sqrt((ii - i * i / n) / (n - 1));
          printf "%.4f %.4f\n", sd / (s / n), si / (i / n) }' "$BENCH_WORK/s.txt")"
}

err() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a - b) / b * 100 }'; }
# worst ERR_SPAN ERR_IOPS ("+1.2%"): the larger magnitude, as a fraction.
worst() {
  awk -v s="${1%\%}" -v i="${2%\%}" 'BEGIN {
    if (s < 0) s = -s; if (i < 0) i = -i; printf "%.4f\n", (s > i ? s : i) / 100 }'
}

MODES=("--timing timestamp" "--timing fullspeed" "--order per-process" "--timing dependency")
IFS=';' read -r -a extras <<< "$DEP_EXTRA"
for x in "${extras[@]}"; do if [ -n "$x" ]; then MODES+=("--timing dependency $x"); fi; done
echo "# blkrr $("$BLKRR" --version 2>&1 | head -1); $(date -u +%F); fio $(fio --version)"
echo "# FAST=$FAST (loop over /dev/shm), SLOW=$SLOW (loop, direct I/O over $slow_img)"
echo "# $IOS requests per job thread, $REPS runs/replays each (median; app span min-max); load $(bench_loadavg)"
echo "# each replay: span s and its error against the application, then the IOPS error;"
echo "# goal: dependency within tol = max(5 %, 2 x the application's span/IOPS spread);"
echo "# open-rate (open loop): within tol or no worse than timestamp"
printf '%-12s %-10s %-22s %-7s' job direction "app span s (min-max)" tol
for mode in "${MODES[@]}"; do printf ' %-26s' "${mode#--timing }"; done
printf ' %s\n' "goal"
for job in "${ORDER[@]}"; do
  for dir in "${DIRECTIONS[@]}"; do
    if [ "$dir" = fast-slow ]; then src=$FAST dst=$SLOW; else src=$SLOW dst=$FAST; fi
    record "$src" "$job" "$BENCH_WORK/job.blkrr"
    # Rounds: the application once, then one replay of each mode, REPS times,
    # so that a drift of the device (the root disk's latency moves within
    # minutes) weighs on the application and on every mode alike.
    for ((m = 0; m <= ${#MODES[@]}; m++)); do : > "$BENCH_WORK/runs.$m"; done
    for _ in $(seq "$REPS"); do
      run_fio "$dst" "$job" >> "$BENCH_WORK/runs.0"
      for ((m = 0; m < ${#MODES[@]}; m++)); do
        # shellcheck disable=SC2086  # the mode's words
        replay "$BENCH_WORK/job.blkrr" "$dst" ${MODES[m]} >> "$BENCH_WORK/runs.$((m + 1))"
      done
    done
    app=$(stats < "$BENCH_WORK/runs.0")
    read -r app_span app_lo app_hi app_iops app_sd app_isd <<< "$app"
    tol=$(awk -v a="$app_sd" -v b="$app_isd" 'BEGIN { t = 2 * (a > b ? a : b); print (t > 0.05 ? t : 0.05) }')
    line=$(printf '%-12s %-10s %-22s %-7s' "$job" "$dir" \
      "$(printf '%.3f (%.3f-%.3f)' "$app_span" "$app_lo" "$app_hi")" \
      "$(awk -v t="$tol" 'BEGIN { printf "%.0f%%", t * 100 }')")
    goal='' ts_worst=''
    for ((m = 0; m < ${#MODES[@]}; m++)); do
      mode=${MODES[m]}
      r=$(stats < "$BENCH_WORK/runs.$((m + 1))")
      read -r span _ _ iops _ _ <<< "$r"
      es=$(err "$span" "$app_span") ei=$(err "$iops" "$app_iops")
      line+=$(printf ' %-26s' "$(printf '%.3f %s %s' "$span" "$es" "$ei")")
      [ "$mode" = "--timing timestamp" ] && ts_worst=$(worst "$es" "$ei")
      if [ "$mode" = "--timing dependency" ]; then
        bound=$tol
        [ "$job" = open-rate ] && bound=$(awk -v a="$tol" -v b="$ts_worst" 'BEGIN { print (a > b ? a : b) }')
        goal=$(awk -v w="$(worst "$es" "$ei")" -v b="$bound" 'BEGIN { print (w <= b ? "met" : "missed") }')
      fi
      echo "$job $dir $mode span=$span iops=$iops app_span=$app_span app_iops=$app_iops" \
        "app_span_sd_rel=$app_sd app_iops_sd_rel=$app_isd" >> "$BENCH_WORK/detail.txt"
    done
    echo "$line $goal"
  done
done
echo
echo "# detail (span s, IOPS):"
cat "$BENCH_WORK/detail.txt"
