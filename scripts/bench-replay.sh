#!/bin/bash
# Replay timing benchmark (issue 5): synthetic 4 KiB random-read loads at
# 1k/10k/50k IOPS replayed on a loop device over /dev/shm by blkrr (io_uring
# and threads engines) and by fio (iolog v3 replay), with the actual issue
# time of every request taken from the kernel's blk tracer (Q events, read
# out of tracefs after each run). Then fullspeed IOPS: blkrr vs fio
# replay_no_stall=1 of the same load vs fio io_uring randread at QD 32.
#
# usage: sudo scripts/bench-replay.sh [BLKRR_BINARY]
#   SECONDS_PER_RUN=3 (the issue asks for 5)   RATES="1000 10000 50000"
set -euo pipefail

BLKRR=${1:-$(dirname "$0")/../build/userspace/cli/blkrr}
SECS=${SECONDS_PER_RUN:-3}
RATES=${RATES:-"1000 10000 50000"}
T=/sys/kernel/tracing
WORK=$(mktemp -d /dev/shm/blkrr-bench.XXXXXX)
[ "$(id -u)" = 0 ] || { echo "bench-replay: needs root (loop device, tracefs)" >&2; exit 2; }
command -v fio >/dev/null || { echo "bench-replay: fio not installed" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-replay: needs GNU time (/usr/bin/time, package time)" >&2; exit 2; }
[ -x "$BLKRR" ] || { echo "bench-replay: no blkrr binary at $BLKRR" >&2; exit 2; }
[ -e $T/trace ] || mount -t tracefs nodev $T

truncate -s 1G "$WORK/dev.img"
LOOP=$(losetup -f --show "$WORK/dev.img")
NAME=$(basename "$LOOP")
cleanup() {
  echo 0 > $T/tracing_on 2>/dev/null || true
  echo 0 > /sys/block/$NAME/trace/enable 2>/dev/null || true
  echo nop > $T/current_tracer 2>/dev/null || true
  echo local > $T/trace_clock 2>/dev/null || true
  losetup -d "$LOOP" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
dd if=/dev/urandom of="$LOOP" bs=1M count=1024 oflag=direct status=none  # allocate the tmpfs pages
partx -d "$LOOP" 2>/dev/null || true  # forget partitions a former user of this loop number left

# load generator: evenly spaced 4 KiB reads at random 4 KiB-aligned offsets
gen() {  # rate seconds -> $WORK/load-RATE.load.gz and .iolog
  python3 - "$1" "$2" "$WORK" "$LOOP" <<'PY'
import gzip, random, sys
rate, secs, work, dev = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
n = int(rate * secs)
rnd = random.Random(rate)
blocks = (1 << 30) // 4096
with gzip.open(f"{work}/load-{rate}.load.gz", "wt") as f, open(f"{work}/load-{rate}.iolog", "w") as g:
    f.write("start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n")
    g.write(f"fio version 3 iolog\n0 {dev} add\n0 {dev} open\n")
    for i in range(n):
        t_ns = i * 1_000_000_000 // rate
        b = rnd.randrange(blocks)
        f.write(f"{t_ns // 10**9:9d}.{t_ns % 10**9:09d} ; {b * 8:12d} ; 8 ; R ; 0.0 ; 0.0\n")
        g.write(f"{t_ns // 1000} {dev} read {b * 4096} 4096\n")  # fio 3.33: v3 times in µs
    g.write(f"{n * 1_000_000 // rate} {dev} close\n")
PY
}

trace_on() {
  echo 0 > $T/tracing_on; echo blk > $T/current_tracer; echo 131072 > $T/buffer_size_kb
  echo mono > $T/trace_clock  # the default "local" clock is not synchronised across CPUs
  echo > $T/trace; echo 1 > /sys/block/$NAME/trace/enable; echo 1 > $T/tracing_on
}
trace_off() {  # -> $1: "time rwbs sector comm" of every Q event
  echo 0 > $T/tracing_on
  awk '$0 ~ / [0-9]+,[0-9]+ +Q / {t=""; for(i=1;i<=NF;i++) { if ($i ~ /^[0-9]+\.[0-9]+:$/) {t=$i; sub(":","",t)}; if ($i=="Q") {print t, $(i+1), $(i+2), $NF; break} } }' $T/trace > "$1"
  echo 0 > /sys/block/$NAME/trace/enable; echo nop > $T/current_tracer
}

analyse() {  # rate qfile label comm-prefix
  python3 - "$1" "$2" "$3" "$SECS" "$4" <<'PY'
import sys
rate, qfile, label, secs, comm = int(sys.argv[1]), sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
n = int(rate * secs)
# First attempts only: read-ahead ("RA") is libblkid's safety probe; Q events
# of io_uring's io-wq workers ("[iou-wrk-N]") re-queue a request whose first,
# non-blocking attempt got EAGAIN from the block layer (counted as retries).
q, retries = [], 0
for l in open(qfile):
    f = l.split()
    if len(f) < 4 or "A" in f[1] or "R" not in f[1]:
        continue
    if f[3].startswith("[iou-wrk"):
        retries += 1
        continue
    if not f[3].startswith("[" + comm):
        continue  # not the replayer (e.g. udev probing the device after the previous run)
    q.append(float(f[0]))
q.sort()
if len(q) != n:
    print(f"| {label} | {rate} | Q events {len(q)} of {n} | | | | | {retries} |")
    sys.exit()
errs = sorted(((q[i] - q[0]) - i / rate) * 1e6 for i in range(n))
def pct(p):
    k = p / 100 * (len(errs) - 1); lo = int(k); hi = min(lo + 1, len(errs) - 1)
    return errs[lo] + (errs[hi] - errs[lo]) * (k - lo)
span = (q[-1] - q[0]) / ((n - 1) / rate) - 1
print(f"| {label} | {rate} | {pct(50):.0f} | {pct(99):.0f} | {pct(99.9):.0f} | {errs[-1]:.0f} | {span*100:+.4f} % | {retries} |")
PY
}

echo "# blkrr replay benchmark: $(uname -r), $(nproc) CPUs, loop device over /dev/shm, ${SECS}s per run"
echo "# blkrr: $BLKRR; $(fio --version); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| replayer | IOPS | issue error p50 (µs) | p99 (µs) | p99.9 (µs) | max (µs) | span error | io-wq retries |"
echo "|---|---|---|---|---|---|---|---|"
COMM=$(basename "$BLKRR" | cut -c1-15)
RT=${RT_PRIO:-10}
for R in $RATES; do
  gen "$R" "$SECS"
  trace_on
  "$BLKRR" replay "$WORK/load-$R.load.gz" "$LOOP" --quiet --cmode conflicts --queue-depth 256 --json-file "$WORK/u-$R.json"
  trace_off "$WORK/q.txt"; analyse "$R" "$WORK/q.txt" "blkrr uring" "$COMM"
  trace_on
  "$BLKRR" replay "$WORK/load-$R.load.gz" "$LOOP" --quiet --cmode conflicts --queue-depth 256 --realtime "$RT" --spin-us 20 --json-file "$WORK/ur-$R.json"
  trace_off "$WORK/q.txt"; analyse "$R" "$WORK/q.txt" "blkrr uring --realtime $RT --spin-us 20" "$COMM"
  trace_on
  "$BLKRR" replay "$WORK/load-$R.load.gz" "$LOOP" --quiet --cmode conflicts --queue-depth 256 --engine threads --threads 32 --realtime "$RT" --spin-us 20 --json-file "$WORK/t-$R.json"
  trace_off "$WORK/q.txt"; analyse "$R" "$WORK/q.txt" "blkrr threads 32 --realtime $RT" "$COMM"
  trace_on
  fio --name=replay --read_iolog="$WORK/load-$R.iolog" --ioengine=io_uring --iodepth=256 --direct=1 --output=/dev/null
  trace_off "$WORK/q.txt"; analyse "$R" "$WORK/q.txt" "fio iolog" fio
  trace_on
  chrt -f "$RT" fio --name=replay --read_iolog="$WORK/load-$R.iolog" --ioengine=io_uring --iodepth=256 --direct=1 --output=/dev/null
  trace_off "$WORK/q.txt"; analyse "$R" "$WORK/q.txt" "fio iolog (chrt -f $RT)" fio
done

echo
echo "| fullspeed (4 KiB random reads, ${RATES##* } IOPS load, QD 32) | IOPS | ratio to fio iolog | ratio to fio randread | CPU µs/request (process) | replay thread ns/request | reader thread ns/request |"
echo "|---|---|---|---|---|---|---|"
R=${RATES##* }
cputime() {  # output-file command...: user+sys seconds of the command into the file
  local out=$1; shift
  /usr/bin/time -f "%U %S" -o "$out" "$@"
}
cputime "$WORK/fs-u.time" "$BLKRR" replay "$WORK/load-$R.load.gz" "$LOOP" --quiet --timing fullspeed --queue-depth 32 --cmode conflicts --json-file "$WORK/fs-u.json"
cputime "$WORK/fs-t.time" "$BLKRR" replay "$WORK/load-$R.load.gz" "$LOOP" --quiet --timing fullspeed --queue-depth 32 --cmode conflicts --engine threads --threads 32 --json-file "$WORK/fs-t.json"
fio --name=nostall --read_iolog="$WORK/load-$R.iolog" --replay_no_stall=1 --ioengine=io_uring --iodepth=32 --direct=1 --output-format=json --output="$WORK/fs-fio.json"
fio --name=randread --filename="$LOOP" --rw=randread --bs=4k --ioengine=io_uring --iodepth=32 --direct=1 --time_based --runtime="$SECS" --output-format=json --output="$WORK/fs-fio-rr.json"
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
rows = []
for name, tag in [("blkrr uring", "u"), ("blkrr threads (32)", "t")]:
    j = json.load(open(f"{w}/fs-{tag}.json"))
    n = j["requests"]["completed"]
    cpu = sum(map(float, open(f"{w}/fs-{tag}.time").read().split())) * 1e6 / n
    c = j.get("cpu", {})
    rows.append((name, j["achieved"]["iops"], f"{cpu:.2f}",
                 f"{c.get('replay_thread_ns_per_request', 0):.0f}",
                 f"{c.get('reader_thread_ns_per_request', 0):.0f}"))
for name, tag in [("fio iolog replay_no_stall=1", "fio"), ("fio io_uring randread", "fio-rr")]:
    j = json.load(open(f"{w}/fs-{tag}.json"))["jobs"][0]
    n = j["read"]["total_ios"]
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100 * j["job_runtime"] / 1000 * 1e6 / n
    rows.append((name, j["read"]["iops"], f"{cpu:.2f}", "", ""))
f, r = rows[2][1], rows[3][1]
for name, v, cpu, rt, rd in rows:
    print(f"| {name} | {v:.0f} | {v / f:.3f} | {v / r:.3f} | {cpu} | {rt} | {rd} |")
PY
echo
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
