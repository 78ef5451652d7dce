#!/bin/sh
# Measures `blkrr report` on the shipped 80k-request load and on synthetic
# 270k-request load/replay results, and the peer fio_generate_plots (fio's
# gnuplot report script) on the same 270k latencies written as a fio log.
#   tests/bench/report.sh BUILD_DIR [N_BIG]   (N_BIG e.g. 10000000: memory run)
set -eu
BUILD=${1:?usage: tests/bench/report.sh BUILD_DIR [N_BIG]}
BIG=${2:-0}
B="$BUILD/userspace/cli/blkrr"
HERE=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d /tmp/blkrr-bench-report.XXXXXX)
trap 'rm -rf "$W"' EXIT

# Synthetic replay results: N requests over one hour, 10% reads, 4-64 KiB,
# lognormal latencies, exponential delays (seeded, reproducible).
gen() {  # gen N FILE
  python3 - "$1" "$2" <<'PY'
import gzip, random, sys
n = int(sys.argv[1]); random.seed(7)
with gzip.open(sys.argv[2], "wt", compresslevel=1) as f:
    f.write("synthetic replay for the report benchmark\n")
    f.write("orig_start ; sector; length ; op ;  replay_delay; replay_duration\n")
    t = 0.0; step = 3600.0 / n; pos = 0
    for i in range(n):
        t += random.expovariate(1 / step)
        pos = random.randrange(0, 1 << 30) if random.random() < 0.3 else pos + 64
        f.write("%.9f ; %d ; %d ; %s ; %.9f ; %.9f\n" % (
            t, pos, random.choice((8, 16, 32, 128)), "R" if random.random() < 0.1 else "W",
            random.expovariate(5000), random.lognormvariate(-7, 1.2)))
PY
}

run() {  # run LABEL command...
  label=$1; shift
  /usr/bin/time -f "$label: %e s wall, %U s user, %M KiB max RSS" "$@" >/dev/null 2>"$W/time.txt" || {
    cat "$W/time.txt"; exit 1; }
  tail -1 "$W/time.txt"
}

gen 270000 "$W/syn270k.replay.gz"
run "report 80k load (linux-mysql, static)" "$B" report -q "$HERE/tests/data/linux-mysql.load.gz" --overwrite -o "$W/r80"
run "report 270k replay (dynamic)" "$B" report -q "$W/syn270k.replay.gz" --overwrite -o "$W/r270d"
run "report 270k replay (static + dynamic)" "$B" report -q --static --dynamic "$W/syn270k.replay.gz" --overwrite -o "$W/r270sd"
run "report 270k without gnuplot (analyses + data only)" "$B" report -q --gnuplot /nonexistent "$W/syn270k.replay.gz" --overwrite -o "$W/r270n"
run "re-report 270k --bins 100 from saved data" "$B" report -q -o "$W/r270d" --bins 100

# Peer: fio_generate_plots (fio's gnuplot report script) on the same requests
# as fio logs: lat/clat (latency), slat (delay), per-second iops and bw.
mkdir -p "$W/fio"
python3 - "$W/syn270k.replay.gz" "$W/fio" <<'PY'
import gzip, sys, collections
d = sys.argv[2]
lat = open(d + "/syn_lat.1.log", "w"); clat = open(d + "/syn_clat.1.log", "w")
slat = open(d + "/syn_slat.1.log", "w")
iops = collections.Counter(); bw = collections.Counter()
with gzip.open(sys.argv[1], "rt") as f:
    for line in f:
        p = line.split(";")
        if len(p) != 6 or p[0].strip().startswith("orig"): continue
        t, sec, ln, op, dl, dur = (x.strip() for x in p)
        ms = int((float(t) + float(dl)) * 1000); rw = 0 if op in "Rr" else 1
        tail = ", %d, %d, %d\n" % (rw, int(ln) * 512, int(sec) * 512)
        lat.write("%d, %d" % (ms, int(float(dur) * 1e9)) + tail)
        clat.write("%d, %d" % (ms, int(float(dur) * 1e9)) + tail)
        slat.write("%d, %d" % (ms, int(float(dl) * 1e9)) + tail)
        iops[ms // 1000] += 1; bw[ms // 1000] += int(ln) // 2
for name, c in (("iops", iops), ("bw", bw)):
    with open("%s/syn_%s.1.log" % (d, name), "w") as o:
        for s in sorted(c): o.write("%d, %d, 0, 0, 0\n" % (s * 1000, c[s]))
PY
if command -v fio_generate_plots >/dev/null; then
  (cd "$W/fio" && run "peer: fio_generate_plots on the same 270k latencies" fio_generate_plots syn)
fi

if [ "$BIG" -gt 0 ]; then
  gen "$BIG" "$W/big.replay.gz"
  run "report $BIG-request replay (static + dynamic)" "$B" report -q --static --dynamic "$W/big.replay.gz" --overwrite -o "$W/rbig"
fi
