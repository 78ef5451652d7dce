#!/usr/bin/env bash
# Time and memory of `blkrr report` per million requests (issues 14 and 17):
# the shipped loads, synthetic loads of SIZES requests over one hour (the
# shipped linux-mysql load repeated and compressed in time with blkrr convert
# --repeat --timescale, made on the fly) and replay results of those loads
# (blkrr replay --fake-io --timing fullspeed on a sparse file). Each report is
# the whole command (read, analyses, data, all PNGs by gnuplot, index.html).
# With BASE set, every row alternates BASE (an earlier build) and BLKRR in the
# same run; medians of RUNS runs of wall time, CPU (user + sys, gnuplot
# included) and maximum RSS.
#
#   tests/bench/report-scale.sh [SIZES...]     (default: 1000000 10000000)
#
# Environment: BLKRR  the blkrr binary (default build/userspace/cli/blkrr)
#              BASE   an earlier blkrr binary to compare with (optional)
#              WORK   scratch directory (default /var/tmp/blkrr-bench-report)
#              RUNS   runs per binary and row (default 3)
#              STEPS  "load replay" (default both: the loads' static reports,
#                     the replay results' dynamic reports)
set -euo pipefail

here="$(cd "$(dirname "$0")/../.." && pwd)"
BLKRR="${BLKRR:-$here/build/userspace/cli/blkrr}"
BASE="${BASE:-}"
WORK="${WORK:-/var/tmp/blkrr-bench-report}"
RUNS="${RUNS:-3}"
STEPS="${STEPS:-load replay}"
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(1000000 10000000)
src="$here/tests/data/linux-mysql.load.gz"
per=80794

[ -x "$BLKRR" ] || { echo "bench-report-scale: no blkrr binary at $BLKRR" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-report-scale: needs GNU time (/usr/bin/time)" >&2; exit 2; }
mkdir -p "$WORK"
cleanup() { rm -rf "$WORK"/out "$WORK"/*.gz "$WORK"/target.img "$WORK"/t.*txt; }
trap cleanup EXIT

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# row LABEL REQUESTS INPUT: one table row per binary
row() {
  local label=$1 n=$2 in=$3 bins=("$BLKRR") names=(new) b i k
  if [ -n "$BASE" ]; then bins=("$BASE" "$BLKRR"); names=(base new); fi
  for k in "${!bins[@]}"; do : >"$WORK/t.$k.txt"; done
  for ((i = 0; i < RUNS; i++)); do
    for k in "${!bins[@]}"; do
      rm -rf "$WORK/out"
      /usr/bin/time -f "%e %U %S %M" -o "$WORK/t.txt" "${bins[$k]}" report -q "$in" --overwrite -o "$WORK/out"
      cat "$WORK/t.txt" >>"$WORK/t.$k.txt"
    done
  done
  for k in "${!bins[@]}"; do
    local f="$WORK/t.$k.txt" b="${names[$k]}" wall cpu rss
    wall=$(awk '{ print $1 }' "$f" | median)
    cpu=$(awk '{ print $2 + $3 }' "$f" | median)
    rss=$(awk '{ print $4 / 1024 }' "$f" | median)
    awk -v l="$label" -v w="$b" -v n="$n" -v wall="$wall" -v cpu="$cpu" -v rss="$rss" 'BEGIN {
      printf "| %-34s | %-12s | %10d | %7.2f | %7.2f | %6.2f | %6.2f | %7.1f |\n",
        l, w, n, wall, cpu, wall / (n / 1e6), cpu / (n / 1e6), rss }'
    rm -f "$f"
  done
}

echo "blkrr: $BLKRR ($("$BLKRR" --version | head -1))${BASE:+; base: $BASE ($("$BASE" --version | head -1))};" \
  "$(nproc) cores; $(gnuplot --version 2>/dev/null || echo 'no gnuplot'); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| input                              | binary       |   requests |  wall s |   CPU s | wall/M |  CPU/M | RSS MB |"
echo "|------------------------------------|--------------|------------|---------|---------|--------|--------|--------|"
if [[ " $STEPS " == *" load "* ]]; then
  row "linux-mysql.load.gz (static)" "$per" "$src"
  row "windows-mssql.load.gz (static)" 42976 "$here/tests/data/windows-mssql.load.gz"
fi
for want in "${SIZES[@]}"; do
  passes=$(( (want + per - 1) / per ))
  n=$(( passes * per ))
  scale=$(awk -v p="$passes" 'BEGIN { printf "%.9f", 1 / p }')
  "$BLKRR" convert "$src" --repeat "$passes" --timescale "$scale" -o "$WORK/syn.load.gz" -q --overwrite
  if [[ " $STEPS " == *" load "* ]]; then row "synthetic 1 h load (static)" "$n" "$WORK/syn.load.gz"; fi
  if [[ " $STEPS " == *" replay "* ]]; then
    truncate -s 64G "$WORK/target.img"
    "$BLKRR" replay "$WORK/syn.load.gz" "$WORK/target.img" --allow-file --fake-io \
      --timing fullspeed -o "$WORK/syn.replay.gz" --quiet
    rm -f "$WORK/target.img"
    row "its replay result (dynamic)" "$n" "$WORK/syn.replay.gz"
  fi
  rm -f "$WORK"/syn.*.gz
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
