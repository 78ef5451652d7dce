#!/bin/sh
# blkrr capture smoke tests for the kernel matrix (scripts/kernel-matrix.sh).
# Runs in a busybox guest (as the guest's /init calls it) and on the host.
#   checks.sh KERNEL DEV BLKRR MATRIX_IO WORKDIR
# Prints one line per check:  MATRIX KERNEL CHECK PASS|FAIL|SKIP DETAILS
# and kernel facts for docs/kernels.md:  FACT KERNEL NAME VALUE
# Plain POSIX sh + awk: busybox ash runs it as well as bash/dash.
#   checks.sh --tp-facts BTFFILE KERNEL WORKDIR  (only the tracepoint prototypes)
if [ "$1" = --tp-facts ]; then
  K=$3 W=$4
  set -- --tp-facts "$2"
else
  K=$1 DEV=$2 BLKRR=$3 IO=$4 W=$5
fi
if [ -z "$W" ]; then
  echo "usage: checks.sh KERNEL DEV BLKRR MATRIX_IO WORKDIR" >&2
  exit 2
fi
N=64 # writes, and as many reads, per load
mkdir -p "$W" || exit 1

one_line() { tr '\n\t' '  ' | sed 's/  */ /g' | cut -c1-400; }
result() { echo "MATRIX $K $1 $2 $(printf '%s' "$3" | one_line)"; }
fact() { echo "FACT $K $1 $(printf '%s' "$2" | one_line)"; }
tail_of() { tail -n 3 "$1" 2>/dev/null | one_line; }

# wait_for FILE PATTERN PID SECONDS: 0 when PATTERN is in FILE, 1 when PID
# exited first, 2 on time-out.
wait_for() {
  i=0
  while [ "$i" -lt $(($4 * 10)) ]; do
    grep -q "$2" "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { grep -q "$2" "$1" 2>/dev/null && return 0; return 1; }
    sleep 0.1
    i=$((i + 1))
  done
  return 2
}

# stop PID: SIGTERM (asynchronous commands of a script ignore SIGINT), wait; exit status in $rc.
stop() {
  kill -TERM "$1" 2>/dev/null
  wait "$1"
  rc=$?
}

# tp_facts BTFFILE: the prototypes of the block tracepoints (arguments after ctx).
tp_facts() {
  bpftool btf dump file "$1" format c 2>/dev/null | grep 'typedef void (\*btf_trace_block_' >"$W/tp.txt"
  for tp in block_rq_issue block_rq_complete block_rq_requeue block_rq_insert \
    block_io_start block_io_done; do
    p=$(grep "btf_trace_${tp})(" "$W/tp.txt" | sed 's/.*)(void \*, *//; s/);$//')
    if [ -n "$p" ]; then fact "tp:$tp" "$p"; else fact "tp:$tp" absent; fi
  done
}

# Kernel facts: BTF, lockdown, BPF features (and the block tracepoint prototypes
# unless MATRIX_TP_ON_HOST is set: the guest leaves them to the host, faster).
probe_facts() {
  if [ -r /sys/kernel/btf/vmlinux ]; then fact btf yes; else fact btf no; fi
  fact lockdown "$(cat /sys/kernel/security/lockdown 2>/dev/null || echo unknown)"
  if ! command -v bpftool >/dev/null 2>&1; then
    fact bpftool "absent: no tracepoint prototypes or BPF feature probe"
    return
  fi
  [ -n "${MATRIX_TP_ON_HOST:-}" ] || [ ! -r /sys/kernel/btf/vmlinux ] || tp_facts /sys/kernel/btf/vmlinux
  bpftool feature probe kernel 2>/dev/null >"$W/feat.txt"
  for f in 'program_type tracing' 'program_type raw_tracepoint' 'map_type ringbuf'; do
    if grep -q "eBPF $f is available" "$W/feat.txt"; then fact "$f" yes; else fact "$f" no; fi
  done
}

check_features() {
  "$BLKRR" features >"$W/feat.out" 2>&1
  rc=$?
  if grep -q "unknown command 'features'" "$W/feat.out"; then
    result features SKIP "this blkrr has no 'features' command"
    return
  fi
  sed "s/^/FEATURES $K /" "$W/feat.out"
  if [ $rc -eq 0 ]; then result features PASS "blkrr features exit 0"; else
    result features FAIL "blkrr features exit $rc: $(tail_of "$W/feat.out")"
  fi
}

# expected IOFILE COMM: "OP SECTOR BYTES PID COMM" lines that matrix_io issued.
expected() {
  awk -v comm="$2" '$1 == "pid" { pid = $2; next } { print $1, $2, $3, pid, comm }' "$1"
}

# compare EXPECTED ACTUAL: exact multiset equality; prints a summary, 0 when equal.
compare() {
  awk 'NR == FNR { want[$0]++; n++; next }
       { if (want[$0] > 0) { want[$0]--; got++ } else { extra++; if (ex == "") ex = $0 } }
       END { miss = 0; for (k in want) if (want[k] > 0) { miss += want[k]; if (mx == "") mx = k }
             printf "%d expected, %d matched, %d missing%s, %d extra%s\n", n, got, miss,
               (mx != "" ? " (e.g. " mx ")" : ""), extra + 0, (ex != "" ? " (e.g. " ex ")" : "")
             exit (miss > 0 || extra > 0) }' "$1" "$2"
}

# JSON field extraction (flat objects, as blkrr writes them).
JF='function jf(s, k,   i, r) {
  i = index(s, "\"" k "\":"); if (!i) return "";
  r = substr(s, i + length(k) + 3); sub(/^ +/, "", r);
  if (substr(r, 1, 1) == "\"") { r = substr(r, 2); return substr(r, 1, index(r, "\"") - 1) }
  match(r, /^[^,}]*/); return substr(r, 1, RLENGTH) }
function opl(o) { return o == "read" ? "R" : o == "write" ? "W" : o }'

# insn_facts NAME ERRFILE: the verifier's processed instructions of each
# program (BLKRR_BPF_VERIFIER_STATS=1), as facts insns:NAME:PROGRAM.
insn_facts() {
  awk '$1 == "blkrr:" && $2 == "verifier:" && $4 == "processed" { print $3, $5 }' "$2" |
    while read -r prog n; do fact "insns:$1:$prog" "$n"; done
}

check_record() {
  BLKRR_BPF_VERIFIER_STATS=1 "$BLKRR" record -d "$DEV" -o "$W/rec.blkrr" >"$W/rec.out" 2>"$W/rec.err" &
  pid=$!
  if ! wait_for "$W/rec.err" "Ctrl-C stops" $pid 120; then
    stop $pid
    result record FAIL "record did not start (exit $rc): $(tail_of "$W/rec.err")"
    return
  fi
  "$IO" "$DEV" mtx-rec $N 2048 >"$W/rec.io" 2>"$W/rec.ioerr" ||
    { stop $pid; result record FAIL "matrix_io: $(tail_of "$W/rec.ioerr")"; return; }
  sleep 0.5
  stop $pid
  insn_facts record "$W/rec.err"
  [ $rc -eq 0 ] || { result record FAIL "record exit $rc: $(tail_of "$W/rec.err")"; return; }
  "$BLKRR" dump --json "$W/rec.blkrr" >"$W/rec.json" 2>"$W/rec.dumperr" ||
    { result record FAIL "dump --json: $(tail_of "$W/rec.dumperr")"; return; }
  expected "$W/rec.io" mtx-rec >"$W/rec.want"
  iopid=$(awk '$1 == "pid" { print $2 }' "$W/rec.io")
  awk "$JF"' index($0, "\"sector\":") && (jf($0, "comm") == "mtx-rec" || jf($0, "pid") == p) {
      print opl(jf($0, "op")), jf($0, "sector"), jf($0, "bytes"), jf($0, "pid"), jf($0, "comm") }' \
    p="$iopid" "$W/rec.json" >"$W/rec.got"
  if sum=$(compare "$W/rec.want" "$W/rec.got"); then
    result record PASS "$sum (sector, bytes, op, pid, comm)"
  else
    result record FAIL "$sum"
  fi
}

check_top() {
  BLKRR_BPF_VERIFIER_STATS=1 "$BLKRR" top --json -d "$DEV" 0.5 >"$W/top.out" 2>"$W/top.err" &
  pid=$!
  if ! wait_for "$W/top.out" '"seq":1' $pid 120; then
    stop $pid
    result top FAIL "top did not start (exit $rc): $(tail_of "$W/top.err")"
    return
  fi
  "$IO" "$DEV" mtx-top $N 65536 >"$W/top.io" 2>"$W/top.ioerr" ||
    { stop $pid; result top FAIL "matrix_io: $(tail_of "$W/top.ioerr")"; return; }
  iopid=$(awk '$1 == "pid" { print $2 }' "$W/top.io")
  sleep 1.5
  stop $pid
  insn_facts top "$W/top.err"
  # Sum over the intervals the rows of the I/O process (one row per direction).
  sum=$(awk "$JF"' { n = split($0, o, "{"); for (i = 1; i <= n; i++)
      if (jf(o[i], "pid") == p) {
        req += jf(o[i], "requests"); t += jf(o[i], "disk_time_ns"); b += jf(o[i], "bytes") } }
      END { printf "%d %d %d\n", req, t, b }' p="$iopid" "$W/top.out")
  # shellcheck disable=SC2086  # three numbers into $1 $2 $3
  set -- $sum
  want=$(awk '$1 != "pid" { b += $3; n++ } END { printf "%d %d\n", n, b }' "$W/top.io")
  detail="pid $iopid: $1 requests, $3 bytes, disk time $2 ns (issued: $want)"
  if [ "$1 $3" = "$want" ] && [ "$2" -gt 0 ]; then result top PASS "$detail"; else
    result top FAIL "$detail; exit $rc $(tail_of "$W/top.err")"
  fi
}

check_snoop() {
  "$BLKRR" snoop --json -d "$DEV" >"$W/snoop.out" 2>"$W/snoop.err" &
  pid=$!
  # snoop --json prints nothing until a request: ping until one shows up.
  i=0
  while ! grep -q '"mtx-ping"' "$W/snoop.out" 2>/dev/null; do
    if ! kill -0 $pid 2>/dev/null || [ $i -ge 120 ]; then
      stop $pid; result snoop FAIL "snoop did not start (exit $rc): $(tail_of "$W/snoop.err")"; return
    fi
    "$IO" "$DEV" mtx-ping 1 1024 >/dev/null 2>&1
    sleep 1
    i=$((i + 1))
  done
  "$IO" "$DEV" mtx-snoop $N 131072 >"$W/snoop.io" 2>"$W/snoop.ioerr" ||
    { stop $pid; result snoop FAIL "matrix_io: $(tail_of "$W/snoop.ioerr")"; return; }
  sleep 0.5
  stop $pid
  expected "$W/snoop.io" mtx-snoop >"$W/snoop.want"
  awk "$JF"' jf($0, "comm") == "mtx-snoop" {
      print opl(jf($0, "op")), jf($0, "sector"), jf($0, "bytes"), jf($0, "pid"), jf($0, "comm") }' \
    "$W/snoop.out" >"$W/snoop.got"
  if sum=$(compare "$W/snoop.want" "$W/snoop.got"); then
    result snoop PASS "$sum"
  else
    result snoop FAIL "$sum; exit $rc $(tail_of "$W/snoop.err")"
  fi
}

# A small blkreplay load: N writes then N reads of 8 KiB, 2 ms apart.
make_load() {
  awk -v n=$N 'BEGIN { print "start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0"
      for (i = 0; i < 2 * n; i++)
        printf "%17.9f ; %12u ; %4u ;%2s ; 0.0 ; 0.0\n", i * 0.002, 262144 + (i % n) * 64, 16,
          i < n ? "W" : "R" }' | gzip >"$1"
}

check_replay() {
  make_load "$W/small.load.gz"
  "$BLKRR" replay "$W/small.load.gz" "$DEV" --force --validate --quiet --overwrite \
    --json-file "$W/replay.json" \
    >"$W/replay.out" 2>"$W/replay.err"
  rc=$?
  pct=$(awk "$JF"' { v = jf($0, "completeness_pct"); if (v != "") { print v; exit } }' \
    "$W/replay.json" 2>/dev/null)
  verdict=$(awk "$JF"' { v = jf($0, "verdict"); if (v != "") { print v; exit } }' \
    "$W/replay.json" 2>/dev/null)
  detail="verdict ${verdict:-none}, completeness ${pct:-none} %, exit $rc"
  case "$rc:$verdict:$pct" in
  0:complete:100 | 0:complete:100.0) result replay-validate PASS "$detail" ;;
  *) result replay-validate FAIL "$detail: $(tail_of "$W/replay.err")" ;;
  esac
}

# flat FILE: a JSON file on one line without blanks (for grep -o).
flat() { tr -d ' \n' <"$1"; }

# The scsi_debug disk (model "scsi_debug"), once its module is in; "" if none.
scsi_debug_disk() {
  for b in /sys/block/sd*; do
    grep -q scsi_debug "$b/device/model" 2>/dev/null && { echo "/dev/${b##*/}"; return; }
  done
}

# Reads of 8 sectors, 5 ms apart: COUNT at sector FIRST + 8 i (blkreplay load).
read_load() {
  awk -v n="$2" -v first="$3" 'BEGIN {
      print "start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0"
      for (i = 0; i < n; i++) printf "%17.9f ; %12u ; 8 ; R ; 0.0 ; 0.0\n", i * 0.005, first + 8 * i }' |
    gzip >"$1"
}

# Faults of the device under replay (guests whose kernel has scsi_debug; the
# host has no modules): reads from sector 4096 fail (medium error), the
# replay counts and lists the failed requests with their errno, goes on and
# validates; then the disk is deleted mid-replay: a clear error, exit 1,
# the results so far written.
check_faults() {
  if [ ! -s /modules/faults/order ]; then
    result device-faults SKIP "no scsi_debug module for this kernel (host: modules not loadable)"
    return
  fi
  while read -r m; do
    case $m in
    *scsi_debug*) insmod "/modules/faults/$m" dev_size_mb=16 opts=2 medium_error_start=4096 \
      medium_error_count=64 2>"$W/faults.insmod" ;;
    *) insmod "/modules/faults/$m" 2>/dev/null ;;
    esac
  done </modules/faults/order
  i=0
  while [ -z "$(scsi_debug_disk)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  sd=$(scsi_debug_disk)
  [ -n "$sd" ] || { result device-faults FAIL "no scsi_debug disk: $(tail_of "$W/faults.insmod")"; return; }
  # 32 reads from sector 4096 (the first 8 in the failing range), 32 from 8192.
  read_load "$W/bad.load" 32 4096
  zcat "$W/bad.load" >"$W/both.load"
  read_load "$W/good.load" 32 8192
  zcat "$W/good.load" | tail -n +2 | awk '{ $1 = sprintf("%17.9f", $1 + 0.2) } 1' >>"$W/both.load"
  "$BLKRR" replay "$W/both.load" "$sd" --force --validate --quiet --json-file "$W/faults.json" \
    -o "$W/faults.replay.gz" >"$W/faults.out" 2>"$W/faults.err"
  rc=$?
  j=$(flat "$W/faults.json" 2>/dev/null)
  by=$(printf '%s' "$j" | grep -o '"by_errno":{[^}]*}')
  failed=$(printf '%s' "$j" | grep -o '"errors":[0-9]*' | head -n 1 | cut -d: -f2)
  sectors=$(printf '%s' "$j" | grep -o '"listed":\[[^]]*\]' | grep -o '"sector":[0-9]*' |
    cut -d: -f2 | sort -n | tr '\n' ' ')
  verdict=$(printf '%s' "$j" | grep -o '"verdict":"[a-z]*"' | head -n 1)
  done_n=$(printf '%s' "$j" | grep -o '"done":[0-9]*' | head -n 1 | cut -d: -f2)
  detail="exit $rc, errors ${failed:-none} $by at sectors ${sectors:-none}, done ${done_n:-none}, ${verdict:-no verdict}"
  # Which reads fail is scsi_debug's (on 6.1, 11 to 15 reads from sector 4096 on): the
  # first failed read is at 4096, none of the 32 reads from 8192 fails, every
  # failed one is counted and listed, the others done.
  first=${sectors%% *}
  last=$(printf '%s' "$sectors" | awk '{ print $NF }')
  if [ "$rc" = 1 ] && [ "${failed:-0}" -gt 0 ] && [ "$((failed + done_n))" = 64 ] &&
    [ "$first" = 4096 ] && [ "${last:-0}" -lt 8192 ] && [ -n "$verdict" ] && [ -n "$by" ]; then
    result device-faults PASS "$detail"
  else
    result device-faults FAIL "$detail: $(tail_of "$W/faults.err")"
  fi
  # 2000 reads over 10 s; the disk deleted after 2 s.
  read_load "$W/long.load" 2000 16384
  "$BLKRR" replay "$W/long.load" "$sd" --force --quiet --json-file "$W/gone.json" \
    -o "$W/gone.replay.gz" >"$W/gone.out" 2>"$W/gone.err" &
  pid=$!
  sleep 2
  echo 1 >"/sys/block/${sd#/dev/}/device/delete"
  wait $pid
  rc=$?
  j=$(flat "$W/gone.json" 2>/dev/null)
  lines=$(zcat "$W/gone.replay.gz" 2>/dev/null | grep -c '^ *[0-9]')
  gone=$(printf '%s' "$j" | grep -o '"device_gone":[a-z]*')
  detail="exit $rc, $gone, $lines result lines, $(grep -o 'went away[^(]*' "$W/gone.err" | head -n 1)"
  if [ "$rc" = 1 ] && [ "$gone" = '"device_gone":true' ] && [ "${lines:-0}" -gt 0 ] &&
    grep -q "went away during the replay" "$W/gone.err"; then
    result device-gone PASS "$detail"
  else
    result device-gone FAIL "$detail: $(tail_of "$W/gone.err")"
  fi
}

# timed NAME FUNCTION: runs FUNCTION, then a FACT with its seconds.
uptime_s() { awk '{ print $1 }' /proc/uptime; }
timed() {
  t0=$(uptime_s)
  $2
  fact "seconds:$1" "$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')"
}

# Sourced by stacks.sh for the functions above.
[ -n "${MATRIX_LIB_ONLY:-}" ] && return 0
[ "${1:-}" = --tp-facts ] && { tp_facts "$2"; exit; }
timed probe probe_facts
timed features check_features
timed record check_record
timed top check_top
timed snoop check_snoop
timed replay check_replay
timed faults check_faults
echo "MATRIX-END $K"
