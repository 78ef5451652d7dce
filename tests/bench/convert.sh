#!/usr/bin/env bash
# Benchmark of `blkrr convert` on a large input, against the classic
# `zcat | awk` rewrite of a blkreplay load (blkreplay's own pipe filters are
# awk programs of this shape), in the same run.
#
#   tests/bench/convert.sh [REQUESTS]          (default 10000000)
#
# Environment: BLKRR   the blkrr binary   (default build/userspace/cli/blkrr)
#              WORK    scratch directory  (default /dev/shm/blkrr-bench-convert)
#              RUNS    repetitions, the median is reported (default 3)
#
# The input is the real linux-mysql load from tests/data repeated until it has
# REQUESTS requests (blkrr convert --repeat), and the same as a native trace.
# Reported: wall seconds, CPU seconds (user+sys of every process of the
# command), requests per wall second and per CPU second (= per core).
set -euo pipefail

here="$(cd "$(dirname "$0")/../.." && pwd)"
BLKRR="${BLKRR:-$here/build/userspace/cli/blkrr}"
WORK="${WORK:-/dev/shm/blkrr-bench-convert}"
RUNS="${RUNS:-3}"
N="${1:-10000000}"
src="$here/tests/data/linux-mysql.load.gz"

[ -x "$BLKRR" ] || { echo "no blkrr binary at $BLKRR (set BLKRR=...)" >&2; exit 1; }
mkdir -p "$WORK"
per=80794
passes=$(( (N + per - 1) / per ))
big="$WORK/big.load.gz"
native="$WORK/big.blkrr"
if [ ! -s "$big" ] || [ "$(cat "$WORK/passes" 2>/dev/null)" != "$passes" ]; then
  echo "making $big: linux-mysql x $passes" >&2
  "$BLKRR" convert "$src" --repeat "$passes" -o "$big" --gzip-level 6 -q --overwrite
  "$BLKRR" convert "$big" -o "$native" -q --overwrite
  echo "$passes" > "$WORK/passes"
fi
reqs=$(( passes * per ))

# median of RUNS runs of: bash -c "$1"; prints "wall cpu"
measure() {
  local i out=()
  for ((i = 0; i < RUNS; i++)); do
    local t
    t=$( { TIMEFORMAT='%R %U %S'; time bash -c "$1" >/dev/null 2>&1; } 2>&1 | tail -1)
    out+=("$(awk '{printf "%.2f %.2f\n", $1, $2 + $3}' <<<"$t")")
  done
  printf '%s\n' "${out[@]}" | sort -n | awk -v m=$(( (RUNS + 1) / 2 )) 'NR == m'
}

row() {  # name command
  local wc
  wc=$(measure "$2")
  awk -v name="$1" -v n="$reqs" -v wc="$wc" 'BEGIN {
    split(wc, a, " ");
    printf "| %-44s | %6.2f | %6.2f | %6.2f | %6.2f |\n", name, a[1], a[2], n / a[1] / 1e6, n / a[2] / 1e6 }'
}

# A trivial rewrite of every data line, in the style of blkreplay's pipe filters.
awk_rewrite="awk -F';' '/[0-9] ;/ && !/[a-z]/ { printf(\"%s ; %s ; %s ; %s ; %s ; %s\\n\", \$1, \$2, \$3, \$4, \$5, \$6) }'"

echo "requests: $reqs; blkrr: $BLKRR; runs: $RUNS (median); $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command                                      | wall s | CPU s  | M req/s wall | M req/s per core |"
echo "|----------------------------------------------|--------|--------|------|------|"
row "blkrr convert native -> load (plain)"       "'$BLKRR' convert '$native' -o '$WORK/o1.load' -q --overwrite"
row "blkrr convert native -> load.gz (level 1)"  "'$BLKRR' convert '$native' -o '$WORK/o2.load.gz' --gzip-level 1 -q --overwrite"
row "blkrr convert load.gz -> load (plain)"      "'$BLKRR' convert '$big' -o '$WORK/o3.load' -q --overwrite"
row "blkrr convert load.gz -> load.gz (level 1)" "'$BLKRR' convert '$big' -o '$WORK/o4.load.gz' --gzip-level 1 -q --overwrite"
row "zcat \\| awk rewrite (plain)"               "zcat '$big' | $awk_rewrite > '$WORK/a1.load'"
row "zcat \\| awk rewrite \\| gzip -1"           "zcat '$big' | $awk_rewrite | gzip -1 > '$WORK/a2.load.gz'"
row "zcat > /dev/null (decompression alone)"     "zcat '$big' > /dev/null"
echo
# The outputs must agree: same data lines from both converters.
if cmp -s <(grep -v '^start' "$WORK/o3.load" | grep ' ; ') <(grep -v '^start' "$WORK/a1.load"); then
  echo "blkrr and awk outputs: identical data lines"
else
  echo "blkrr and awk outputs differ (awk normalises field widths differently)"
fi
rm -f "$WORK"/o?.load* "$WORK"/a?.load*
