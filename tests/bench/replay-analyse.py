#!/usr/bin/env python3
"""Analysis steps of tests/bench/replay.sh (not meant to be run alone).

  timing RATE SECS QFILE COMM LABEL ROUND [SCHEDFILE]  one run -> one JSON line
  table RESULTS.jsonl                                   per-round and median tables
  own OWN.jsonl                                         blkrr's own delays, medians
  fullspeed DIR                                         fullspeed IOPS table
"""
import json
import re
import statistics
import sys
from collections import defaultdict


def pct(sorted_vals, p):
    k = p / 100 * (len(sorted_vals) - 1)
    lo = int(k)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (k - lo)


def first_attempts(qfile, comm):
    """Q times of the replayer's reads; io-wq re-queues counted apart."""
    times, retries = [], 0
    for line in open(qfile):
        f = line.split()
        if len(f) < 4 or "A" in f[1] or "R" not in f[1]:
            continue  # read-ahead: libblkid's probe; not a read
        if f[3].startswith("[iou-wrk"):
            retries += 1
            continue
        if not f[3].startswith("[" + comm):
            continue  # udev or another task probing the device
        times.append(float(f[0]))
    times.sort()
    return times, retries


SCHED = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): sched_switch: "
                   r"prev_comm=(.*) prev_pid=(\d+) .* next_comm=(.*) next_pid=(\d+) ")


def stall_holders(schedfile, comm, t0, t1):
    """Tasks that held the CPU of the replayer's thread between t0 and t1 (s)."""
    events = []
    for line in open(schedfile):
        m = SCHED.match(line)
        if m:
            events.append((float(m.group(4)), int(m.group(3)), m.group(5), m.group(7)))
    # The CPU the replayer last ran on before t0.
    cpu = None
    for t, c, prev, nxt in events:
        if t > t0:
            break
        if nxt.startswith(comm) or prev.startswith(comm):
            cpu = c
    if cpu is None:
        return "replayer's CPU not found"
    held = defaultdict(float)
    cur, since = None, t0
    for t, c, prev, nxt in events:
        if c != cpu:
            continue
        if t <= t0:
            cur = nxt
            continue
        if t > t1:
            break
        if cur is not None:
            held[cur] += t - max(since, t0)
        cur, since = nxt, t
    if cur is not None:
        held[cur] += t1 - max(since, t0)
    top = sorted(held.items(), key=lambda kv: -kv[1])[:4]
    return f"cpu{cpu}: " + ", ".join(f"{name} {sec * 1e6:.0f} us" for name, sec in top)


def timing(args):
    rate, secs, qfile, comm, label, rnd = int(args[0]), float(args[1]), args[2], args[3], args[4], int(args[5])
    n = int(rate * secs)
    q, retries = first_attempts(qfile, comm)
    out = {"label": label, "rate": rate, "round": rnd, "q": len(q), "n": n, "retries": retries}
    if len(q) == n:
        errs = [((q[i] - q[0]) - i / rate) * 1e6 for i in range(n)]
        s = sorted(errs)
        out.update(p50=pct(s, 50), p99=pct(s, 99), p999=pct(s, 99.9), max=s[-1],
                   span=((q[-1] - q[0]) / ((n - 1) / rate) - 1) * 100)
        if len(args) > 6:
            worst = max(range(n), key=lambda i: errs[i])
            start = worst
            while start > 0 and errs[start - 1] > 50:
                start -= 1
            due = q[0] + start / rate
            out["stall_us"] = errs[worst]
            out["stall_holders"] = stall_holders(args[6], comm, due, q[worst])
    print(json.dumps(out))


def fmt(v):
    return "-" if v is None else f"{v:.0f}"


def table(args):
    rows = [json.loads(line) for line in open(args[0])]
    print("\n| round | replayer | IOPS | issue error p50 (µs) | p99 (µs) | p99.9 (µs) | max (µs) | span error | io-wq re-queues |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "p99" not in r:
            print(f"| {r['round']} | {r['label']} | {r['rate']} | Q events {r['q']} of {r['n']} | | | | | {r['retries']} |")
            continue
        print(f"| {r['round']} | {r['label']} | {r['rate']} | {fmt(r['p50'])} | {fmt(r['p99'])} | "
              f"{fmt(r['p999'])} | {fmt(r['max'])} | {r['span']:+.4f} % | {r['retries']} |")
    stalls = [r for r in rows if "stall_holders" in r]
    if stalls:
        print("\nWorst late stretch of each run and what held the replay thread's CPU meanwhile:\n")
        for r in stalls:
            print(f"- round {r['round']}, {r['label']}, {r['rate']} IOPS: {r['stall_us']:.0f} µs late; {r['stall_holders']}")
    groups = defaultdict(list)
    for r in rows:
        groups[(r["rate"], r["label"])].append(r)
    print(f"\nMedians over the rounds:\n")
    print("| IOPS | replayer | p50 (µs) | p99 (µs) | p99.9 (µs) | max (µs) | span error | complete runs |")
    print("|---|---|---|---|---|---|---|---|")
    for (rate, label), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        ok = [r for r in rs if "p99" in r]
        med = lambda k: statistics.median(r[k] for r in ok) if ok else None
        span = f"{med('span'):+.4f} %" if ok else "-"
        print(f"| {rate} | {label} | {fmt(med('p50'))} | {fmt(med('p99'))} | {fmt(med('p999'))} | "
              f"{fmt(med('max'))} | {span} | {len(ok)} of {len(rs)} |")


def own(args):
    rows = [json.loads(line) for line in open(args[0])]
    by = defaultdict(list)
    for r in rows:
        by[r["rate"]].append(r["d"])
    print("| IOPS | delay p50 (µs) | p99 (µs) | p99.9 (µs) | max (µs) | runs (p99) |")
    print("|---|---|---|---|---|---|")
    for rate in sorted(by):
        ds = by[rate]
        m = lambda k: statistics.median(d[k] for d in ds)
        print(f"| {rate} | {m('median'):.1f} | {m('p99'):.1f} | {m('p99.9'):.1f} | {m('max'):.0f} | "
              + " / ".join(f"{d['p99']:.0f}" for d in ds) + " |")


def fullspeed(args):
    w = args[0]
    j = json.load(open(f"{w}/fs-u.json"))
    n = j["requests"]["completed"]
    cpu = sum(map(float, open(f"{w}/fs-u.time").read().split())) * 1e6 / n
    rows = [("blkrr", j["achieved"]["iops"], cpu)]
    for name, tag in [("fio iolog replay_no_stall=1", "fio"), ("fio io_uring randread", "fio-rr")]:
        f = json.load(open(f"{w}/fs-{tag}.json"))["jobs"][0]
        ios = f["read"]["total_ios"]
        c = (f["usr_cpu"] + f["sys_cpu"]) / 100 * f["job_runtime"] / 1000 * 1e6 / ios
        rows.append((name, f["read"]["iops"], c))
    print("| replayer | IOPS | ratio to fio iolog | ratio to fio randread | CPU µs/request |")
    print("|---|---|---|---|---|")
    for name, iops, c in rows:
        print(f"| {name} | {iops:.0f} | {iops / rows[1][1]:.3f} | {iops / rows[2][1]:.3f} | {c:.2f} |")


if __name__ == "__main__":
    {"timing": timing, "table": table, "own": own, "fullspeed": fullspeed}[sys.argv[1]](sys.argv[2:])
