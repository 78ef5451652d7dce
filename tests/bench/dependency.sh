#!/usr/bin/env bash
# Replay onto different hardware, against ground truth: fio jobs recorded on
# one device and replayed on another, compared with the same job run on that
# other device. Devices: FAST = loop over /dev/shm, SLOW = loop with direct
# I/O over a file on the root disk. Directions: fast->slow and slow->fast.
# For each job: the application's own span and IOPS on the target (median of
# REPS runs, with min-max), and the replay's in timestamp, fullspeed,
# --order per-process and dependency timing (default 1 ms thread window, and
# 10 ms) (median of REPS replays), with the span's error against the
# application's median.
#
#   sudo tests/bench/dependency.sh [BLKRR]        REPS=5 IOS=1500 by default
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
ORDER=(psync-think libaio-qd4 mixed-rw open-rate)

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

# stats: "span iops" lines -> "median_span min-max median_iops"
stats() {
  awk '{ print }' > "$BENCH_WORK/s.txt"
  local ms mi lo hi
  ms=$(cut -d' ' -f1 "$BENCH_WORK/s.txt" | bench_median)
  mi=$(cut -d' ' -f2 "$BENCH_WORK/s.txt" | bench_median)
  lo=$(cut -d' ' -f1 "$BENCH_WORK/s.txt" | sort -g | head -1)
  hi=$(cut -d' ' -f1 "$BENCH_WORK/s.txt" | sort -g | tail -1)
  echo "$ms $lo $hi $mi"
}

err() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a - b) / b * 100 }'; }

echo "# blkrr $("$BLKRR" --version 2>&1 | head -1); $(date -u +%F); fio $(fio --version)"
echo "# FAST=$FAST (loop over /dev/shm), SLOW=$SLOW (loop, direct I/O over $slow_img)"
echo "# $IOS requests per job thread, $REPS runs/replays each (median; app span min-max); load $(bench_loadavg)"
printf '%-12s %-10s %-22s %-18s %-18s %-18s %-18s %-18s\n' job direction "app span s (min-max)" \
  timestamp fullspeed per-process dependency "dependency 10ms"
for job in "${ORDER[@]}"; do
  for dir in fast-slow slow-fast; do
    if [ "$dir" = fast-slow ]; then src=$FAST dst=$SLOW; else src=$SLOW dst=$FAST; fi
    record "$src" "$job" "$BENCH_WORK/job.blkrr"
    app=$(for _ in $(seq "$REPS"); do run_fio "$dst" "$job"; done | stats)
    read -r app_span app_lo app_hi app_iops <<< "$app"
    line=$(printf '%-12s %-10s %-22s' "$job" "$dir" \
      "$(printf '%.3f (%.3f-%.3f)' "$app_span" "$app_lo" "$app_hi")")
    for mode in "--timing timestamp" "--timing fullspeed" "--order per-process" \
      "--timing dependency" "--timing dependency --dep-window 10ms"; do
      # shellcheck disable=SC2086  # the mode's words
      r=$(for _ in $(seq "$REPS"); do replay "$BENCH_WORK/job.blkrr" "$dst" $mode; done | stats)
      read -r span _ _ iops <<< "$r"
      line+=$(printf ' %-18s' "$(printf '%.3f %s' "$span" "$(err "$span" "$app_span")")")
      echo "$job $dir $mode span=$span iops=$iops app_span=$app_span app_iops=$app_iops" >> "$BENCH_WORK/detail.txt"
    done
    echo "$line"
  done
done
echo
echo "# detail (span s, IOPS):"
cat "$BENCH_WORK/detail.txt"
