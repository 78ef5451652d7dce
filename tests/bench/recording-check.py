#!/usr/bin/env python3
"""Analysis step of tests/bench/recording.sh (not meant to be run alone).

  SAMPLES D_EVENTS DUMP_JSONL DUMP_STDERR KEEP TRACER_DROPS TRACER_STATE

Prints the RSS and CPU-per-request slopes of both recorders, the most pieces
and bytes on disk, and the comparison of the pieces with the blk tracer's
issues; exits 1 when a check fails.

The comparison: each traced issue (D event) is matched with a recorded
request of the same sector and size issued within MATCH_NS. What is left on
both sides is then paired by the same sector and size within PAIR_NS,
nearest first: such a pair is one request whose two stamps (blkrr's program
and the tracer's, two probes of the same tracepoint, each reading the clock)
are further apart, counted and shown, not a failure. It fails when a traced
issue stays without a recorded request, a recorded request is there twice,
more recorded requests stay untraced than the tracer says it dropped, or the
tracer was switched off by someone else.
"""
import json
import os
import sys
from collections import defaultdict

TICK_NS = 1e9 / os.sysconf("SC_CLK_TCK")
MATCH_NS = 1_000_000  # blkrr's issue time and the tracer's D event: the same tracepoint
PAIR_NS = 50_000_000  # the same request stamped further apart (a descheduled vCPU)


def slope(xs, ys):
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0


def per_minute(rows, cpu_col, req_col):
    """(minute midpoint in hours, CPU ns per request) over each ~60 s of samples."""
    out, start = [], 0
    for i in range(1, len(rows)):
        if rows[i][0] - rows[start][0] >= 60 or i == len(rows) - 1:
            dreq = rows[i][req_col] - rows[start][req_col]
            if dreq > 0 and rows[i][0] > rows[start][0]:
                cpu = (rows[i][cpu_col] - rows[start][cpu_col]) * TICK_NS / dreq
                out.append(((rows[i][0] + rows[start][0]) / 2 / 3600, cpu))
            start = i
    return out


def resources(path):
    rows = [list(map(float, line.split())) for line in open(path) if line.strip()]
    rows = [r for r in rows if len(r) == 10]
    if not rows:
        print("no samples")
        return 0, 0
    print(f"## resources ({len(rows)} samples over {rows[-1][0]:.0f} s)")
    print("| recorder | RSS first / last / max (MiB) | RSS slope (MiB/h) |"
          " CPU ns/request first min / last min / mean | CPU slope (ns/request per h) |")
    print("|---|---|---|---|---|")
    for name, rss, cpu, req in (("--rotate", 1, 2, 3), ("one file", 4, 5, 6)):
        mib = [r[rss] / 1024 for r in rows]
        hours = [r[0] / 3600 for r in rows]
        pm = per_minute(rows, cpu, req)
        total = (rows[-1][cpu] - rows[0][cpu]) * TICK_NS / max(1, rows[-1][req] - rows[0][req])
        print(f"| {name} | {mib[0]:.1f} / {mib[-1]:.1f} / {max(mib):.1f} |"
              f" {slope(hours, mib):+.2f} | {pm[0][1]:.0f} / {pm[-1][1]:.0f} / {total:.0f} |"
              f" {slope([p[0] for p in pm], [p[1] for p in pm]):+.1f} |" if pm else "| - | - |")
    closed = max(int(r[7]) for r in rows)
    opened = max(int(r[8]) for r in rows)
    print(f"- pieces on disk: at most {closed} closed and {opened} open,"
          f" at most {max(r[9] for r in rows) / 2**20:.1f} MiB in the folder")
    return closed, opened


def pieces(dump_path):
    """(oldest kept piece start, issues by (sector, blocks) sorted, duplicates)."""
    starts, by_key, seen, dups = [], defaultdict(list), set(), 0
    with open(dump_path) as f:
        for line in f:
            j = json.loads(line)
            kind = j.get("type")
            if "recording" in j and "pieces" in j["recording"]:  # the header
                starts += [p["piece_start_ns"] for p in j["recording"]["pieces"]]
            elif kind == "request" and j.get("issue_ns") is not None:
                ident = (j["issue_ns"], j["sector"], j["bytes"])
                if ident in seen:
                    dups += 1
                seen.add(ident)
                by_key[(j["sector"], j["bytes"] // 512)].append(j["issue_ns"])
    for v in by_key.values():
        v.sort()
    return (min(starts) if starts else 0), len(starts), by_key, dups


def compare(d_path, dump_path):
    w0, npieces, by_key, dups = pieces(dump_path)
    events = defaultdict(list)
    first = last = None
    for line in open(d_path):
        parts = line.split()
        if len(parts) != 3:
            continue
        t = int(round(float(parts[0]) * 1e9))
        first = t if first is None else min(first, t)
        last = t if last is None else max(last, t)
        events[(int(parts[1]), int(parts[2]))].append(t)
    if first is None:
        print("- blk tracer: no events")
        return False
    # Compared over the tracer's span inside the kept pieces, edges excluded
    # by the tracer's timestamp resolution.
    lo, hi = max(w0, first) + MATCH_NS, last - MATCH_NS
    missing = extra = traced = recorded = 0
    apart = []  # (recorded - traced ns, sector, blocks, traced t)
    for key in set(events) | set(by_key):
        ev = [t for t in events.get(key, []) if lo <= t <= hi]
        rec = [t for t in by_key.get(key, []) if lo - PAIR_NS <= t <= hi + PAIR_NS]
        traced += len(ev)
        used = [False] * len(rec)
        left = []
        j = 0
        for t in ev:
            while j < len(rec) and rec[j] < t - MATCH_NS:
                j += 1
            k = j
            while k < len(rec) and (used[k] or rec[k] < t - MATCH_NS):
                k += 1
            if k < len(rec) and rec[k] <= t + MATCH_NS:
                used[k] = True
            else:
                left.append(t)
        for t in left:  # the second pass: the nearest unused within PAIR_NS
            best = None
            for k, r in enumerate(rec):
                if not used[k] and abs(r - t) <= PAIR_NS and (
                        best is None or abs(r - t) < abs(rec[best] - t)):
                    best = k
            if best is None:
                missing += 1
            else:
                used[best] = True
                apart.append((rec[best] - t, key[0], key[1], t))
        for t, u in zip(rec, used):
            if lo <= t <= hi:
                recorded += 1
                if not u:
                    extra += 1
    span = (hi - lo) / 1e9
    print(f"- {npieces} pieces kept; compared over {span:.0f} s: {traced} issues traced,"
          f" {recorded} recorded, {missing} missing, {extra} not traced, {dups} twice,"
          f" {len(apart)} stamped more than {MATCH_NS / 1e6:.0f} ms apart")
    for d, sector, blocks, t in sorted(apart)[:10]:
        print(f"  - sector {sector} +{blocks}: traced at {t / 1e9:.6f} s,"
              f" recorded {d / 1e6:+.3f} ms from it")
    return missing, extra, dups, traced


def main():
    samples, d_path, dump_path, dump_err, keep, drops, state = sys.argv[1:8]
    closed, opened = resources(samples)
    missing, extra, dups, traced = compare(d_path, dump_path)
    ok = missing == 0 and dups == 0 and traced > 0
    # A dropped tracer event leaves a recorded request untraced: as many are allowed.
    if extra > int(drops):
        print(f"- {extra} recorded requests not traced, more than the tracer's"
              f" {drops} dropped events")
        ok = False
    gaps = [line.strip() for line in open(dump_err) if "gap" in line]
    for g in gaps:
        print("- " + g)
    if state.split() != ["blk", "1"]:
        print("- the blk tracer was switched off or changed by someone else")
        ok = False
    if closed > int(keep):
        print(f"- more than --keep {keep} closed pieces on disk")
        ok = False
    print("result: " + ("ok" if ok and not gaps else "FAILED"))
    sys.exit(0 if ok and not gaps else 1)


if __name__ == "__main__":
    main()
