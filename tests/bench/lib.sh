# Sourced by the benchmark scripts (not run on its own): one way to make the
# scratch directory and loop devices, to clean up whatever happens, to drive
# the kernel's blk tracer and to take medians.
#
#   . tests/bench/lib.sh   (from the top of the tree)
#   bench_init replay                 # root check, $BENCH_WORK in /dev/shm, cleanup on exit
#   bench_need fio jq                 # tools the script needs
#   bench_loop LOOP 1G zero           # LOOP=/dev/loopN over a 1 GiB file, filled with zeros
#   bench_on_exit stop_tracer         # a function of the script's to run at exit (reverse order)
#   bench_tracer_on "$LOOP" queue     # blk tracer, CLOCK_MONOTONIC, only Q events
#   bench_tracer_off q.txt            # "time rwbs sector [comm]" of each Q event
#   printf '%s\n' 3 1 2 | bench_median
# shellcheck shell=bash

BENCH_NAME=${BENCH_NAME:-bench}
BENCH_WORK=
BENCH_HOOKS=()
BENCH_LOOPS=()
BENCH_TRACED=
BENCH_TRACEFS=/sys/kernel/tracing

bench_die() {
  echo "bench-$BENCH_NAME: $*" >&2
  exit 2
}

bench_need() {
  local t
  for t in "$@"; do
    command -v "$t" > /dev/null || bench_die "$t is needed (scripts/install-deps.sh installs it)"
  done
}

# bench_init NAME [DIR]: root, a scratch directory (default in /dev/shm), cleanup on exit.
bench_init() {
  BENCH_NAME=$1
  [ "$(id -u)" = 0 ] || bench_die "needs root (loop devices, tracefs, BPF)"
  BENCH_WORK=$(mktemp -d "${2:-/dev/shm}/blkrr-bench-$BENCH_NAME.XXXXXX")
  trap bench_cleanup EXIT
  trap 'exit 130' INT TERM
}

# bench_on_exit FUNCTION [ARGS]: call it at exit (the last registered first).
bench_on_exit() {
  BENCH_HOOKS+=("$*")
}

bench_cleanup() {
  local i entry dev img
  for ((i = ${#BENCH_HOOKS[@]} - 1; i >= 0; i--)); do
    # shellcheck disable=SC2086  # a function name and its arguments
    ${BENCH_HOOKS[$i]} || true
  done
  [ -n "$BENCH_TRACED" ] && bench_tracer_reset
  for entry in "${BENCH_LOOPS[@]}"; do
    dev=${entry%%=*}
    img=${entry#*=}
    # Detach only a device still backed by our file (others may attach loop
    # devices concurrently and get the same number after we let go).
    if [ "$(cat "/sys/block/${dev#/dev/}/loop/backing_file" 2> /dev/null)" = "$img" ]; then
      losetup -d "$dev" 2> /dev/null || true
    fi
  done
  [ -n "$BENCH_WORK" ] && rm -rf "$BENCH_WORK"
  return 0
}

# bench_loop VAR SIZE [zero|urandom|none]: a loop device over a new file in
# $BENCH_WORK, its name stored in VAR; the file is filled (default zero) so
# that every page of the device exists before anything is measured.
bench_loop() {
  local var=$1 size=$2 fill=${3:-zero} img dev mib
  img=$(mktemp "$BENCH_WORK/dev.XXXXXX.img")
  truncate -s "$size" "$img"
  dev=$(losetup -f --show "$img")
  BENCH_LOOPS+=("$dev=$img")
  [ "$(cat "/sys/block/${dev#/dev/}/loop/backing_file" 2> /dev/null)" = "$img" ] ||
    bench_die "$dev is not backed by $img (attached concurrently?); run again"
  command -v udevadm > /dev/null && { udevadm settle -t 5 || true; }
  # A loop number used before by a partitioned image may keep stale partitions.
  partx -d "$dev" 2> /dev/null || true
  mib=$(($(stat -c %s "$img") / 1048576))
  case $fill in
    zero) dd if=/dev/zero of="$dev" bs=1M count="$mib" oflag=direct status=none ;;
    urandom) dd if=/dev/urandom of="$dev" bs=1M count="$mib" oflag=direct status=none ;;
    none) ;;
    *) bench_die "bench_loop: fill must be zero, urandom or none, not $fill" ;;
  esac
  printf -v "$var" '%s' "$dev"
}

# bench_zram VAR SIZE [urandom|none]: a zram device of its own (hot_add,
# removed at exit), SIZE bytes (e.g. 1G), its name stored in VAR: a
# bio-based device, recorded at the bio level (docs/capture.md). Filled
# with random data (default) so that reads decompress real pages.
bench_zram() {
  local var=$1 size=$2 fill=${3:-urandom} ctl=/sys/class/zram-control id dev
  [ -e "$ctl" ] || modprobe zram 2> /dev/null || true
  [ -e "$ctl/hot_add" ] || bench_die "no zram (modprobe zram; /sys/class/zram-control)"
  id=$(cat "$ctl/hot_add") || bench_die "zram hot_add failed"
  dev=/dev/zram$id
  bench_on_exit bench_zram_remove "$id"
  echo "$size" > "/sys/block/zram$id/disksize" || bench_die "zram$id: cannot set disksize $size"
  for _ in $(seq 50); do [ -b "$dev" ] && break; sleep 0.1; done
  [ -b "$dev" ] || bench_die "no $dev after hot_add"
  case $fill in
    urandom) dd if=/dev/urandom of="$dev" bs=1M count=$(($(blockdev --getsize64 "$dev") / 1048576))       oflag=direct status=none ;;
    none) ;;
    *) bench_die "bench_zram: fill must be urandom or none, not $fill" ;;
  esac
  printf -v "$var" '%s' "$dev"
}

bench_zram_remove() {
  echo 1 > "/sys/block/zram$1/reset" 2> /dev/null || true
  echo "$1" > /sys/class/zram-control/hot_remove 2> /dev/null || true
}

bench_tracer_reset() {
  local T=$BENCH_TRACEFS
  echo 0 > "$T/tracing_on" 2> /dev/null || true
  [ -n "$BENCH_TRACED" ] && echo 0 > "/sys/block/${BENCH_TRACED#/dev/}/trace/enable" 2> /dev/null
  echo nop > "$T/current_tracer" 2> /dev/null || true
  echo local > "$T/trace_clock" 2> /dev/null || true
  echo > "$T/trace" 2> /dev/null || true
  BENCH_TRACED=
}

# bench_tracer_on DEV [ACT_MASK]: the kernel's blk tracer on DEV (all events,
# or only those of ACT_MASK, e.g. queue), stamped with CLOCK_MONOTONIC (the
# default per-CPU clock is not synchronised across CPUs), buffer cleared.
bench_tracer_on() {
  local T=$BENCH_TRACEFS dev=$1 mask=${2:-}
  [ -e "$T/trace" ] || mount -t tracefs nodev "$T" || bench_die "cannot mount tracefs"
  echo 0 > "$T/tracing_on"
  echo blk > "$T/current_tracer"
  echo 131072 > "$T/buffer_size_kb"
  echo mono > "$T/trace_clock"
  echo > "$T/trace"
  BENCH_TRACED=$dev
  if [ -n "$mask" ]; then
    echo "$mask" > "/sys/block/${dev#/dev/}/trace/act_mask"
  else
    echo 65535 > "/sys/block/${dev#/dev/}/trace/act_mask"
  fi
  echo 1 > "/sys/block/${dev#/dev/}/trace/enable"
  echo 1 > "$T/tracing_on"
}

# bench_tracer_off FILE: stop tracing, drain the buffer into FILE as one line
# "seconds rwbs sector [comm]" per Q event, and switch the tracer off.
bench_tracer_off() {
  local T=$BENCH_TRACEFS
  echo 0 > "$T/tracing_on"
  awk '$0 ~ / [0-9]+,[0-9]+ +Q / {
         t = ""
         for (i = 1; i <= NF; i++) {
           if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = $i; sub(":", "", t) }
           if ($i == "Q") { print t, $(i + 1), $(i + 2), $NF; break }
         }
       }' "$T/trace" > "$1"
  bench_tracer_reset
}

# Median of the numbers on standard input (one per line).
bench_median() {
  sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

bench_loadavg() {
  cut -d' ' -f1-3 /proc/loadavg
}
