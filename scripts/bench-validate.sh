#!/usr/bin/env bash
# Fullspeed I/O rate with and without the live validator attached (issue 6),
# on a loop device over /dev/shm, in the same run, rounds alternated; medians.
#   1. blkrr replay --timing fullspeed of a synthetic 4 KiB random-read load
#      (N requests), with and without the validator (validate_attach: the
#      LiveValidator on the device; it then validates the replay result against
#      what it captured and reports how long the matching took);
#   2. fio io_uring 4 KiB random read at queue depth 32 for DURATION seconds,
#      with and without the validator attached.
# Usage: [RUNS=5] [DURATION=3] [BLKRR_BUILD_DIR=build] scripts/bench-validate.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BLKRR_BUILD_DIR:-build}
BLKRR=${BLKRR:-$BUILD/userspace/cli/blkrr}
ATTACH=${ATTACH:-$BUILD/userspace/validate/validate_attach}
RUNS=${RUNS:-5}
DURATION=${DURATION:-3}
N=${1:-300000}
[ "$(id -u)" = 0 ] || { echo "bench-validate: needs root (BPF, loop devices)" >&2; exit 2; }
for b in "$BLKRR" "$ATTACH"; do
  [ -x "$b" ] || { echo "bench-validate: $b not built (ninja -C $BUILD blkrr validate_attach)" >&2; exit 2; }
done

work=$(mktemp -d /dev/shm/blkrr-bench-validate.XXXXXX)
truncate -s 1G "$work/dev.img"
APID=
cleanup() {
  if [ -n "$APID" ]; then kill -INT "$APID" 2>/dev/null || true; wait "$APID" 2>/dev/null || true; fi
  # Detach only if the loop device is still backed by our file (other
  # benchmarks may attach loop devices concurrently).
  if [ -n "${LO:-}" ] && [ "$(cat "/sys/block/${LO#/dev/}/loop/backing_file" 2>/dev/null)" = "$work/dev.img" ]; then
    losetup -d "$LO" 2>/dev/null || true
  fi
  rm -rf "$work"
}
LO=
trap cleanup EXIT
LO=$(losetup -f --show "$work/dev.img")
if [ "$(cat "/sys/block/${LO#/dev/}/loop/backing_file" 2>/dev/null)" != "$work/dev.img" ]; then
  echo "bench-validate: $LO is not backed by $work/dev.img (attached concurrently?); retry" >&2
  LO=; exit 1
fi
command -v udevadm > /dev/null && udevadm settle -t 5 || true
# A loop device reused after a partitioned one may keep stale partitions.
ls "/sys/block/${LO#/dev/}" | grep -q "^${LO#/dev/}p" && partx -d "$LO" 2>/dev/null || true
APID=

# Synthetic load: N random 4 KiB reads over the 1 GiB device, 10 us apart.
python3 - "$N" > "$work/load" <<'PY'
import random, sys
n = int(sys.argv[1]); random.seed(6)
print("synthetic 4k random read load (scripts/bench-validate.sh)")
print("start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0")
for i in range(n):
    print("%.9f ; %d ; 8 ; R ; 0.0 ; 0.0" % (i * 1e-5, random.randrange(0, 2 * 1024 * 1024 // 8) * 8))
PY
gzip -1 "$work/load" && mv "$work/load.gz" "$work/synthetic.load.gz"

attach() {  # attach [RESULT]: start the validator, wait until it is ready
  "$ATTACH" "$LO" "$@" > "$work/attach.out" 2>&1 &
  APID=$!
  for _ in $(seq 100); do grep -qs ready "$work/attach.out" && return 0; sleep 0.1; done
  echo "bench-validate: validator did not start: $(cat "$work/attach.out")" >&2; exit 1
}
detach() {  # the validator's user+sys CPU seconds while attached -> $work/cpu.last
  awk -v hz="$(getconf CLK_TCK)" '{printf "%.3f\n", ($14 + $15) / hz}' "/proc/$APID/stat" \
    > "$work/cpu.last"
  kill -INT "$APID"; wait "$APID" || true; APID=
}
replay() {  # replay OUT -> prints achieved IOPS
  [ "$(cat "/sys/block/${LO#/dev/}/loop/backing_file" 2>/dev/null)" = "$work/dev.img" ] ||
    { echo "bench-validate: $LO was detached behind our back" >&2; LO=; exit 1; }
  "$BLKRR" replay --timing fullspeed "$work/synthetic.load.gz" "$LO" -o "$1" --json "$work/s.json" \
    > "$work/replay.log" 2>&1 || { echo "bench-validate: replay failed:" >&2; tail -5 "$work/replay.log" >&2; exit 1; }
  jq '.achieved.iops' "$work/s.json"
}
fio_iops() {
  fio --name=r --filename="$LO" --direct=1 --rw=randread --bs=4k --iodepth=32 --ioengine=io_uring \
    --runtime="$DURATION" --time_based --output-format=json 2>/dev/null | jq '.jobs[0].read.iops'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

: > "$work/r.plain"; : > "$work/r.val"; : > "$work/f.plain"; : > "$work/f.val"
: > "$work/match"; : > "$work/cpu"
for round in $(seq "$RUNS"); do
  for mode in $( [ $((round % 2)) = 1 ] && echo "plain val" || echo "val plain" ); do
    if [ "$mode" = plain ]; then
      replay "$work/p.replay.gz" >> "$work/r.plain"
      fio_iops >> "$work/f.plain"
    else
      attach "$work/v.replay.gz" "$work/v.blkrr"
      replay "$work/v.replay.gz" >> "$work/r.val"
      detach
      cpu=$(cat "$work/cpu.last")
      grep -E "^validate:|^matched" "$work/attach.out" | sed "s/^/  round $round: /" >&2 || true
      sed -n 's/.* in \([0-9.]*\) ms.*/\1/p' "$work/attach.out" >> "$work/match"
      n=$(sed -n 's/^captured \([0-9]*\) .*/\1/p' "$work/attach.out")
      awk -v c="$cpu" -v n="$n" 'BEGIN {printf "%.3f\n", c / n * 1e6}' >> "$work/cpu"
      if ! grep -q "^validate: COMPLETE" "$work/attach.out"; then
        keep=/dev/shm/blkrr-bench-validate-kept-$round-$$
        mkdir -p "$keep" && cp "$work/v.replay.gz" "$work/v.blkrr" "$work/attach.out" "$keep/"
        echo "  round $round: not complete; replay result and capture kept in $keep" >&2
      fi
      attach
      fio_iops >> "$work/f.val"
      detach
    fi
  done
done
echo "runs: $RUNS, load: $N 4 KiB random reads, fio: ${DURATION}s randread qd32 io_uring"
printf "%-44s %12s %12s %8s\n" "fullspeed IOPS (median)" "without" "with" "loss"
for k in r f; do
  a=$(median < "$work/$k.plain"); b=$(median < "$work/$k.val")
  name=$([ $k = r ] && echo "blkrr replay --timing fullspeed" || echo "fio randread qd32 (io_uring)")
  awk -v n="$name" -v a="$a" -v b="$b" 'BEGIN {printf "%-44s %12.0f %12.0f %7.2f%%\n", n, a, b, (1 - b / a) * 100}'
done
echo "raw: replay without $(tr '\n' ' ' < "$work/r.plain")| with $(tr '\n' ' ' < "$work/r.val")"
echo "raw: fio without $(tr '\n' ' ' < "$work/f.plain")| with $(tr '\n' ' ' < "$work/f.val")"
echo "matching after the run (ms, median): $(median < "$work/match")"
echo "validator user+sys CPU while attached (us per block-layer request, median): $(median < "$work/cpu")"
