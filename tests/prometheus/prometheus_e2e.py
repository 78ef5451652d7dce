#!/usr/bin/env python3
"""A real Prometheus scraping blkrr's exporter, queried with the dashboard's PromQL.

Starts Debian's prometheus on loopback (a free port, storage in a temporary
directory, 1 s scrapes and rule evaluations) scraping `blkrr top --prometheus`
on a scratch loop device over /dev/shm (or, with --target, an exporter already
running, e.g. the packaged blkrr-exporter). Drives a paced load of known rate
on the loop device, then evaluates every PromQL expression of
docs/grafana-blkrr.json (Grafana's variables substituted) through
/api/v1/query and checks the labels and values of the series against what the
load did. Then loads the alerting rules (windows and `for:` shortened to
seconds, expressions unchanged), saturates the device with fio and waits for
BlkrrDeviceSaturated to fire in /api/v1/alerts.

Root, prometheus, losetup and fio needed; exit 77 (skip) otherwise.
"""
import argparse
import ctypes
import json
import mmap
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

SCRAPE_S = 1
RATE_INTERVAL = "4s"  # Grafana: max($__interval + scrape interval, 4 x scrape interval)
LOAD_COMM = "blkrr-promload"
WRITE_BS, READ_BS = 65536, 16384
TICK_S = 0.0025  # a 64 KiB write each tick (400/s), a 16 KiB read every second tick (200/s)
LOAD_S = 10.0
TOLERANCE = 0.02  # rates within 2 % of the load's


class Failure(Exception):
    pass


def say(msg):
    print("prometheus-e2e: " + msg, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_json(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.load(r)


class Prometheus:
    def __init__(self, prom, workdir, target, rules):
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        cfg = os.path.join(workdir, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: %ds\n  evaluation_interval: %ds\n"
                    % (SCRAPE_S, SCRAPE_S))
            if rules:
                f.write("rule_files:\n  - %s\n" % rules)
            f.write("scrape_configs:\n  - job_name: blkrr\n    static_configs:\n"
                    "      - targets: ['%s']\n" % target)
        self.log = open(os.path.join(workdir, "prometheus.log"), "w")
        self.proc = subprocess.Popen(
            [prom, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(workdir, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % self.port, "--web.enable-lifecycle"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def wait_ready(self, what, check, bound_s=30):
        end = time.time() + bound_s
        while time.time() < end:
            if self.proc.poll() is not None:
                raise Failure("prometheus exited (%d): see its log" % self.proc.returncode)
            try:
                if check():
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise Failure("prometheus: %s not within %d s" % (what, bound_s))

    def query(self, expr, at, kind="vector"):
        url = self.base + "/api/v1/query?" + urllib.parse.urlencode({"query": expr, "time": at})
        js = http_json(url)
        if js.get("status") != "success" or js["data"]["resultType"] != kind:
            raise Failure("query %s: %s" % (expr, js))
        return js["data"]["result"]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ---------------------------------------------------------------- the load

def run_load(dev, seconds, out):
    """The paced load (a child process named LOAD_COMM): writes its log to out."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, LOAD_COMM.encode(), 0, 0, 0)  # PR_SET_NAME
    fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
    size = os.lseek(fd, 0, os.SEEK_END)
    wbuf, rbuf = mmap.mmap(-1, WRITE_BS), mmap.mmap(-1, READ_BS)
    wbuf.write(os.urandom(WRITE_BS))
    ops = []  # (completion wall time, direction, bytes, seconds in the system call)
    start = time.time()
    t0 = time.monotonic()
    i = 0
    while i * TICK_S < seconds:
        delay = t0 + i * TICK_S - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        a = time.monotonic()
        if os.pwritev(fd, [wbuf], (i * WRITE_BS) % size) != WRITE_BS:
            raise OSError("short write")
        b = time.monotonic()
        ops.append((start + (b - t0), "write", WRITE_BS, b - a))
        if i % 2 == 0:
            if os.preadv(fd, [rbuf], (i * READ_BS + size // 2) % size) != READ_BS:
                raise OSError("short read")
            c = time.monotonic()
            ops.append((start + (c - t0), "read", READ_BS, c - b))
        i += 1
    os.close(fd)
    with open(out, "w") as f:
        json.dump({"start": start, "end": start + (time.monotonic() - t0), "ops": ops}, f)


def load_rates(log, lo, hi, seconds):
    """Requests and bytes of each direction completed in (lo, hi], per `seconds`."""
    r = {}
    for t, d, n, _ in log["ops"]:
        if lo < t <= hi:
            req, by = r.get(d, (0, 0))
            r[d] = (req + 1, by + n)
    return {d: (req / seconds, by / seconds) for d, (req, by) in r.items()}


def rate_window(prom, at):
    """What rate(X[4s]) at `at` divides: the counters of the first and last
    scrape in the window are those of the exporter's refreshes at wall times
    r0 and r1 (blkrr_top_last_refresh_timestamp_seconds), and Prometheus
    divides their difference by the scrapes' distance t1 - t0. Returns
    (r0, r1, t1 - t0)."""
    m = prom.query("blkrr_top_last_refresh_timestamp_seconds[%s]" % RATE_INTERVAL, at, "matrix")
    if len(m) != 1 or len(m[0]["values"]) < 2:
        raise Failure("refresh times in the window: %s" % m)
    (t0, r0), (t1, r1) = m[0]["values"][0], m[0]["values"][-1]
    return float(r0), float(r1), float(t1) - float(t0)


# ------------------------------------------------------------ the dashboard

def dashboard_queries(path, device):
    """Every (panel title, PromQL) of the dashboard with Grafana's variables substituted."""
    with open(path) as f:
        dash = json.load(f)
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get("targets", []):
                expr = t["expr"]
                expr = expr.replace("$__rate_interval", RATE_INTERVAL)
                expr = expr.replace("$__interval", "%ds" % SCRAPE_S)
                expr = expr.replace("$device", device)
                if "$" in re.sub(r"\{\{[^}]*\}\}", "", expr):
                    raise Failure("a Grafana variable is left in: " + expr)
                out.append((p.get("title", "?"), expr))
            walk(p.get("panels", []))
    walk(dash["panels"])
    return out


def near(got, want, what):
    if want <= 0 or abs(got - want) > TOLERANCE * want:
        raise Failure("%s: %.6g, the load did %.6g (more than %g %% apart)"
                      % (what, got, want, TOLERANCE * 100))
    return "%s %.6g vs %.6g (%+.2f %%)" % (what, got, want, 100 * (got - want) / want)


def series(result, labels):
    """The result's series as {tuple of the label values: value}; each must have exactly labels."""
    got = {}
    for s in result:
        m = {k: v for k, v in s["metric"].items() if k not in ("job", "instance", "__name__")}
        if set(m) != set(labels):
            raise Failure("series with labels %s, expected %s" % (sorted(s["metric"]), labels))
        got[tuple(m[k] for k in labels)] = float(s["value"][1])
    if not got:
        raise Failure("no series")
    return got


def check_expr(expr, result, ctx):
    """Checks one dashboard expression's result; returns what was compared."""
    dev, rates = ctx["device"], ctx["rates"]
    req = {d: rates[d][0] for d in rates}
    byt = {d: rates[d][1] for d in rates}
    if "blkrr_disk_time_seconds_total" in expr:
        s = series(result, ["device", "comm"])
        ctx["disk_time_pct"] = s[(dev, LOAD_COMM)]
        # Other processes may touch the device in the window (udev's probe
        # after a close, a monitoring agent): their disk time is part of the
        # device's busy time too.
        ctx["others_pct"] = {c: v for (d, c), v in s.items() if d == dev and c != LOAD_COMM}
        if not 0 < ctx["disk_time_pct"] <= 100 + 100 * TOLERANCE:
            raise Failure("disk time %.3g %%" % ctx["disk_time_pct"])
        others = "".join(", %s %.3g %%" % kv for kv in sorted(ctx["others_pct"].items()))
        return "disk time of %s on %s %.3g %%%s" % (LOAD_COMM, dev, ctx["disk_time_pct"], others)
    if "blkrr_io_latency_seconds_total" in expr:
        s = series(result, ["device", "comm", "direction"])
        notes = []
        for d in ("write", "read"):
            v = s[(dev, LOAD_COMM, d)]
            # The kernel's issue-to-completion is inside the load's system call
            # (the margin: means of different sets, in the kernel and here).
            if not 0 < v <= 1.25 * ctx["syscall_mean"][d]:
                raise Failure("mean %s latency %.3g s, the system calls took %.3g s"
                              % (d, v, ctx["syscall_mean"][d]))
            notes.append("%s %.1f us (system call %.1f us)" % (d, v * 1e6,
                                                                ctx["syscall_mean"][d] * 1e6))
        return "mean latency " + ", ".join(notes)
    for metric, table, unit in (("blkrr_io_bytes_total", byt, "B/s"),
                                ("blkrr_io_requests_total", req, "requests/s")):
        if metric in expr:
            s = series(result, ["device", "comm", "direction"])
            return "; ".join(near(s[(dev, LOAD_COMM, d)], table[d], "%s %s" % (d, unit))
                             for d in ("write", "read"))
    if "blkrr_device_busy_seconds_total" in expr:
        v = series(result, ["device"])[(dev,)]
        ctx["busy_pct"] = v
        if not 0 < v <= 100 + 100 * TOLERANCE:
            raise Failure("busy %.3g %%" % v)
        return "busy %.3g %%" % v
    if "blkrr_device_io_ticks_seconds_total" in expr:
        v = series(result, ["device"])[(dev,)]
        if not 0 < v <= 100 + 100 * TOLERANCE:
            raise Failure("io_ticks %.3g %%" % v)
        return "io_ticks %.3g %%" % v
    if "blkrr_device_in_flight" in expr:
        v = series(result, ["device"])[(dev,)]
        if v < 0 or v != int(v) or v > 64:
            raise Failure("in flight %g" % v)
        return "in flight %g" % v
    if "blkrr_device_requests_total" in expr:
        v = series(result, ["device"])[(dev,)]
        return near(v, sum(req.values()), "completed/s")
    if "blkrr_capture_lost_total" in expr:
        s = series(result, ["reason"])
        if len(s) < 6:
            raise Failure("%d loss reasons exported, every one expected from 0" % len(s))
        return "lost/s by reason: %s" % {k[0]: v for k, v in s.items() if v} if any(
            s.values()) else "%d reasons, none lost" % len(s)
    if "blkrr_top_last_refresh_timestamp_seconds" in expr:
        v = list(series(result, []).values())[0]
        if not 0 <= v < ctx["interval_s"] + 2 * SCRAPE_S:
            raise Failure("seconds since the last refresh %.3g" % v)
        return "last refresh %.2f s before the evaluation time" % v
    if "blkrr_top_refreshes_total" in expr:
        v = list(series(result, []).values())[0]
        return near(v, ctx["refresh_rate"], "refreshes/s")
    if "histogram_quantile" in expr:
        s = series(result, ["device", "direction"])
        q = float(re.search(r"histogram_quantile\(([0-9.]+)", expr).group(1))
        for d in ("write", "read"):
            v = s[(dev, d)]
            # Buckets double: the quantile is within a factor of 2 (docs/top.md);
            # the system call contains the request.
            if not 1e-6 <= v <= 2 * ctx["syscall_max"][d]:
                raise Failure("p%g %s %.3g s, longest system call %.3g s"
                              % (q * 100, d, v, ctx["syscall_max"][d]))
            ctx.setdefault("quantiles", {})[(q, d)] = v
        return "p%g " % (q * 100) + ", ".join(
            "%s %.1f us" % (d, s[(dev, d)] * 1e6) for d in ("write", "read"))
    raise Failure("no check for this expression: add one")


# ------------------------------------------------------------------ set-up

class LoopDevice:
    def __init__(self, size_mib=256):
        fd, self.file = tempfile.mkstemp(prefix="blkrr-prom-", dir="/dev/shm")
        os.ftruncate(fd, size_mib << 20)
        os.close(fd)
        self.path = subprocess.check_output(["losetup", "-f", "--show", self.file],
                                            text=True).strip()
        self.name = os.path.basename(self.path)

    def close(self):
        subprocess.call(["losetup", "-d", self.path])
        os.unlink(self.file)


def start_exporter(blkrr, dev, interval_s, workdir):
    port = free_port()
    log = open(os.path.join(workdir, "exporter.log"), "w")
    proc = subprocess.Popen([blkrr, "top", "-q", "--prometheus", "127.0.0.1:%d" % port,
                             "-d", dev, str(interval_s)], stdout=log, stderr=subprocess.STDOUT)
    return proc, "127.0.0.1:%d" % port


def shortened_rules(rules, workdir):
    """The rules with their windows and `for:` in seconds instead of minutes."""
    with open(rules) as f:
        text = f.read()
    text = re.sub(r"\[(\d+)m\]", r"[\1s]", text)
    text = re.sub(r"for: (\d+)m", "for: 3s", text)
    out = os.path.join(workdir, "blkrr-alerts-short.yml")
    with open(out, "w") as f:
        f.write(text)
    return out


def paced_load(dev, workdir):
    out = os.path.join(workdir, "load.json")
    subprocess.check_call([sys.executable, os.path.abspath(__file__), "--load", dev, str(LOAD_S),
                           out])
    with open(out) as f:
        return json.load(f)


def check_dashboard(prom, args, dev_name, log, interval_s):
    # Evaluated 7 s into the 10 s load: the 4 s window and the exporter's
    # refresh before each scrape lie inside it.
    at = log["start"] + 7.0
    r0, r1, span = rate_window(prom, at)
    lo, hi = r0, r1
    ctx = {"device": dev_name, "rates": load_rates(log, r0, r1, span), "interval_s": interval_s,
           "syscall_mean": {}, "syscall_max": {},
           # rate() of the refresh counter: the refreshes between the two the
           # window's scrapes hold (3 or 4 in a 3 s span), over the span.
           "refresh_rate": round((r1 - r0) / interval_s) / span}
    for d in ("write", "read"):
        lat = [x[3] for x in log["ops"] if x[1] == d and lo < x[0] <= hi]
        ctx["syscall_mean"][d] = sum(lat) / len(lat)
        ctx["syscall_max"][d] = max(lat)
    say("load between the refreshes at %.3f and %.3f s, over the scrapes' %.3f s: %s"
        % (r0 - log["start"], r1 - log["start"], span,
           ", ".join("%s %.2f requests/s, %.0f B/s" % (d, r[0], r[1])
                     for d, r in sorted(ctx["rates"].items()))))
    values = prom.base + "/api/v1/label/device/values?" + urllib.parse.urlencode(
        {"match[]": "blkrr_device_requests_total"})
    if dev_name not in http_json(values)["data"]:
        raise Failure("$device: label_values(blkrr_device_requests_total, device) lacks " + dev_name)
    queries = dashboard_queries(args.dashboard, dev_name)
    for title, expr in queries:
        try:
            say("%s: %s" % (title, check_expr(expr, prom.query(expr, at), ctx)))
        except Failure as e:
            raise Failure("%s\n  %s\n  %s" % (title, expr, e))
    # Every request of the load counted, exactly, once the last refresh after
    # it was scraped: as a request of the load or as lost (docs/top.md: a
    # completion the kernel did not deliver is counted as lost, not guessed).
    want = {d: sum(1 for x in log["ops"] if x[1] == d) for d in ("write", "read")}
    expr = 'blkrr_io_requests_total{device="%s",comm="%s"}' % (dev_name, LOAD_COMM)
    deadline = log["end"] + interval_s + 8 * SCRAPE_S
    while True:
        now = time.time()
        got = {k[2]: v for k, v in series(prom.query(expr, now),
                                          ["device", "comm", "direction"]).items()}
        lost = sum(series(prom.query("blkrr_capture_lost_total", now), ["reason"]).values())
        missing = sum(want.values()) - sum(got.values())
        if got == want or (0 < missing <= lost) or now > deadline:
            break
        time.sleep(0.5)
    if got == want:
        counted = "request counters exact (%s)" % want
    elif 0 < missing <= lost and all(got[d] <= want[d] for d in want):
        counted = "%s counted, %d of %s lost and counted as lost" % (got, missing, want)
    else:
        raise Failure("blkrr_io_requests_total of the load: %s, %g lost, the load did %s"
                      % (got, lost, want))
    # Adaptive disk time divides the busy time among the requests: over all
    # processes it sums to the device's busy time, and the load's share is
    # what the others did not take.
    others = sum(ctx["others_pct"].values())
    total = (ctx["disk_time_pct"] + others) / ctx["busy_pct"]
    share = ctx["disk_time_pct"] / ctx["busy_pct"]
    if abs(total - 1) > TOLERANCE:
        raise Failure("the disk time of all processes on %s is %.3g of its busy time (%s: %.3g %%, "
                      "others: %s)" % (dev_name, total, LOAD_COMM, ctx["disk_time_pct"],
                                       ctx["others_pct"]))
    if share < 1 - TOLERANCE - others / ctx["busy_pct"]:
        raise Failure("the load's disk time is %.3g of the device's busy time, the other "
                      "processes' %.3g" % (share, others / ctx["busy_pct"]))
    say("%d dashboard expressions checked; %s; the disk time of all processes is %.4f of the "
        "device's busy time, the load's %.4f" % (len(queries), counted, total, share))


def fire_saturated(prom, dev):
    """fio keeps the device busy until BlkrrDeviceSaturated fires for it."""
    def alerts():
        return [a for a in http_json(prom.base + "/api/v1/alerts")["data"]["alerts"]
                if a["labels"].get("device") == dev.name]
    if alerts():
        raise Failure("alerts before the saturating load: %s" % alerts())
    start = time.time()
    fio = subprocess.Popen(["fio", "--name=saturate", "--filename=" + dev.path, "--direct=1",
                            "--rw=randread", "--bs=1m", "--ioengine=libaio", "--iodepth=32",
                            "--numjobs=2", "--time_based", "--runtime=40", "--group_reporting"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.time() - start < 40:
            firing = {a["labels"]["alertname"]: a for a in alerts() if a["state"] == "firing"}
            if "BlkrrDeviceSaturated" in firing:
                for name, a in sorted(firing.items()):
                    # 64 requests of 1 MiB queued: the p99 alert may fire too.
                    if name not in ("BlkrrDeviceSaturated", "BlkrrLatencyP99High"):
                        raise Failure("firing for %s: %s" % (dev.name, a))
                    say("%s firing %.1f s after the load began: %s"
                        % (name, time.time() - start, a["annotations"]["summary"]))
                return
            time.sleep(0.5)
        raise Failure("BlkrrDeviceSaturated did not fire within 40 s of saturating %s"
                      % dev.path)
    finally:
        fio.terminate()
        fio.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--blkrr", help="the blkrr binary (starts blkrr top --prometheus)")
    ap.add_argument("--target", help="ADDR:PORT of an exporter already running (all devices)")
    ap.add_argument("--interval", type=float, default=1.0, help="the exporter's refresh interval")
    ap.add_argument("--dashboard", help="the Grafana dashboard (docs/grafana-blkrr.json)")
    ap.add_argument("--rules", help="alerting rules: check one fires")
    ap.add_argument("--prometheus", default="prometheus")
    ap.add_argument("--load", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.load:
        run_load(args.load[0], float(args.load[1]), args.load[2])
        return 0
    if not args.dashboard or not (args.blkrr or args.target):
        ap.error("--dashboard and one of --blkrr, --target are needed")
    prom_bin = shutil.which(args.prometheus)
    missing = [p for p in ("losetup", "fio") if not shutil.which(p)]
    if os.geteuid() != 0 or not prom_bin or missing:
        print("SKIPPED: needs root, prometheus (scripts/install-deps.sh) and %s"
              % ", ".join(missing or ["losetup", "fio"]))
        return 77
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="blkrr-prom-")
    dev = LoopDevice()
    exporter = prom = None
    try:
        if args.target:
            target = args.target
        else:
            exporter, target = start_exporter(args.blkrr, dev.name, args.interval, work)
        rules = shortened_rules(args.rules, work) if args.rules else None
        prom = Prometheus(prom_bin, work, target, rules)
        prom.wait_ready("ready", lambda: urllib.request.urlopen(prom.base + "/-/ready",
                                                                timeout=2).status == 200)
        prom.wait_ready("target up", lambda: [
            float(s["value"][1]) for s in prom.query('up{job="blkrr"}', time.time())] == [1.0])
        say("prometheus on %s scrapes %s (%.1f s)" % (prom.base, target, time.time() - t0))
        check_dashboard(prom, args, dev.name, paced_load(dev.path, work), args.interval)
        if rules:
            fire_saturated(prom, dev)
        say("passed in %.1f s" % (time.time() - t0))
        return 0
    except (Failure, OSError, subprocess.CalledProcessError) as e:
        for name in ("prometheus.log", "exporter.log"):
            p = os.path.join(work, name)
            if os.path.exists(p):
                with open(p) as f:
                    print("---- %s (last lines)\n%s" % (name, "".join(f.readlines()[-15:])))
        print("prometheus-e2e: FAILED: %s" % e)
        return 1
    finally:
        if prom:
            prom.stop()
        if exporter:
            exporter.terminate()
            exporter.wait()
        dev.close()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
