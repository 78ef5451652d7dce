// blkrr top: which processes keep the disks busy. Per-process (or per-comm,
// per-cgroup) requests, bytes and adaptive disk time, aggregated in the
// kernel and read once per interval: no per-request traffic to user space.
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>

#include "core/clock.h"
#include "capture/capture.h"
#include "cli/capture_options.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/device.h"
#include "core/signals.h"
#include "live/exited.h"
#include "live/http_server.h"
#include "live/json_out.h"
#include "live/model.h"
#include "live/procinfo.h"
#include "live/prometheus.h"
#include "live/screen.h"

namespace blkrr::cli {
namespace {

using namespace blkrr::live;

struct TopArgs {
  std::vector<std::string> devices;
  uint32_t pid = 0;
  bool has_pid = false;
  bool rolling = false, disktime = false, percent = false, bytes = false;
  bool json = false, quiet = false, prometheus_pid = false, utc = false;
  uint64_t top_n = 0;
  std::string sort, by = "pid", prometheus;
  uint64_t interval_ns = 1'000'000'000;
  uint64_t count = 0;  // 0: until a signal
};

Result<bool> parse_args(int argc, char** argv, TopArgs& a) {
  ArgParser p(argv[0],
              "[-d DEV]... [-p PID] [-C] [--bytes | --disktime | --percent] [-r N] "
              "[-s io|bytes|time] [--by pid|comm|cgroup] [-j] [--prometheus ADDR:PORT] "
              "[interval [count]]",
              "Per-process disk utilisation, refreshed every interval (default 1 s). The disk\n"
              "time of a request is Brendan Gregg's adaptive disk I/O time: the device's busy\n"
              "time split between the requests in flight, so the values of all processes add\n"
              "up to the device's busy time (%I/O is per single disk: two disks fully busy\n"
              "are 200 %). Counters are kept in the kernel; processes that exit during an\n"
              "interval still appear for it. Needs root (eBPF).");
  p.common_strings(CommonOpt::kDevice, "only this disk or partition (repeatable)", &a.devices);
  p.common(CommonOpt::kPid, "only this process", [&a](std::string_view v) -> Status {
    auto r = parse_pid(v);
    if (!r) return r.error();
    a.pid = *r;
    a.has_pid = true;
    return {};
  });
  p.flag('C', "rolling", &a.rolling,
         "rolling output: do not clear the screen (biotop -C, iotop -b)");
  p.flag(0, "bytes", &a.bytes, "show BYTES/s, bytes per second in binary units (the default)");
  p.flag(0, "disktime", &a.disktime, "show DISKTIME, the adaptive disk time of the interval");
  p.flag(0, "percent", &a.percent, "show %I/O, disk time as a percentage of one disk");
  p.opt_u64('r', "maxrows", "N", "show at most N rows (biotop -r)", &a.top_n);
  p.opt_string('s', "sort", "KEY",
               "sort by io (requests), bytes or time (disk time); default: "
               "the shown value",
               &a.sort);
  p.opt_string(0, "by", "WHAT", "one row per pid (default), comm or cgroup", &a.by);
  p.common_flag(CommonOpt::kJson, &a.json,
                "one JSON object per interval (one per line) instead of the screen");
  p.opt_string(0, "prometheus", "ADDR:PORT",
               "serve /metrics (Prometheus text format) on ADDR:PORT until SIGTERM", &a.prometheus);
  p.flag(0, "prometheus-pid", &a.prometheus_pid,
         "add a pid label to the metrics (one series per process: high cardinality)");
  p.common_flag(CommonOpt::kQuiet, &a.quiet, "print nothing (with --prometheus)");
  p.flag(0, "utc", &a.utc, "header time in UTC");
  // iotop's letters that blkrr spells otherwise, and blkrr top's old ones.
  p.removed('b', "-C (iotop -b: no screen clearing) or --bytes");
  p.removed('P', "--by pid, the default (iotop -P: processes), or --percent");
  p.removed('t', "-r N (at most N rows)");
  p.removed('n', "the count as the second argument (blkrr top 1 10), as biotop; -n is --comm");
  p.removed('o', "--disktime (top lists only processes that did I/O, as iotop -o does)");
  std::vector<std::string> pos;
  p.positionals("[interval [count]]", &pos, 0, 2);
  p.examples(
      "  blkrr top                          bytes per process, every second\n"
      "  blkrr top --percent -d sda 5       %I/O on sda every 5 seconds\n"
      "  blkrr top --disktime -C -r 10 1 60 disk time, top 10, rolling, one minute\n"
      "  blkrr top --by cgroup -j 10        per cgroup, JSON lines every 10 s\n"
      "  blkrr top -q --prometheus :9111    only serve /metrics on port 9111\n");
  auto r = p.parse(argc, argv);
  if (!r || !*r) return r;
  if (int(a.disktime) + int(a.percent) + int(a.bytes) > 1)
    return Error(ErrorKind::kUsage, "--bytes, --disktime and --percent are exclusive");
  if (!pos.empty()) {
    auto iv = parse_duration_ns(pos[0]);
    if (!iv || *iv < 10'000'000)
      return Error(ErrorKind::kUsage, std::string("bad interval '") + pos[0] +
                                          "' (seconds, at least 0.01; e.g. 1, 0.5, 250ms)");
    a.interval_ns = *iv;
  }
  if (pos.size() > 1) {
    auto c = parse_u64(pos[1]);
    if (!c || *c == 0)
      return Error(ErrorKind::kUsage,
                   std::string("bad count '") + pos[1] + "' (a positive integer)");
    a.count = *c;
  }
  // iotop's -d SEC: a number that names no device was meant as the interval.
  for (const auto& d : a.devices)
    if (parse_double(d) && !resolve_device(d))
      return Error(
          ErrorKind::kUsage,
          std::string("-d ")
              .append(d)
              .append(": no such device; -d names a device (as biosnoop's), the interval is an "
                      "argument: blkrr top ")
              .append(d));
  if (a.quiet && a.prometheus.empty())
    return Error(ErrorKind::kUsage, "-q without --prometheus would show nothing");
  return true;
}

void print_loss_summary(const Counters& c) {
  std::string s;
  for (const auto& [name, n] : c)
    if (n && is_loss_counter(name)) s += " " + name + "=" + std::to_string(n);
  if (!s.empty())
    std::fprintf(stderr, "blkrr top: not everything was counted:%s (see docs/top.md)\n", s.c_str());
}

}  // namespace

Result<int> cmd_top(int argc, char** argv) {
  TopArgs a;
  auto pr = parse_args(argc, argv, a);
  if (!pr) return pr.error();
  if (!*pr) return 0;
  auto by = parse_group_by(a.by);
  if (!by) return Error(ErrorKind::kUsage, by.error().message);
  ValueMode mode = a.disktime  ? ValueMode::kDiskTime
                   : a.percent ? ValueMode::kPercent
                               : ValueMode::kBytes;
  SortKey sort = mode == ValueMode::kBytes ? SortKey::kBytes : SortKey::kTime;
  if (!a.sort.empty()) {
    auto s = parse_sort_key(a.sort);
    if (!s) return Error(ErrorKind::kUsage, s.error().message);
    sort = *s;
  }
  std::optional<ListenAddress> listen;
  if (!a.prometheus.empty()) {
    auto l = parse_listen_address(a.prometheus);
    if (!l) return Error(ErrorKind::kUsage, "--prometheus: " + l.error().message);
    listen = *l;
  }
  CaptureConfig cfg;
  BLKRR_TRY(select_devices(a.devices, cfg));
  if (a.has_pid) {
    BLKRR_TRY(require_process(a.pid));
    cfg.tgid = a.pid;
  }
  cfg.emit_events = false;
  cfg.aggregate = true;

  // Block the stop signals before any thread starts (capture sweeper, server).
  StopSignals signals({.mode = StopSignals::Mode::kBlock, .hangup = true});
  auto cap = Capture::start(cfg);
  if (!cap) return cap.error();
  Capture& capture = **cap;
  uint64_t start = mono_ns();

  DeviceNamer namer;
  ProcCache procs;
  CgroupNamer cgroups;
  Lookups lk;
  lk.device_name = [&namer](DevT d) { return namer.name(d); };
  lk.cgroup_name = [&cgroups](uint64_t id) { return cgroups.name(id); };
  lk.proc = [&procs](uint32_t pid) { return procs.get(pid); };
  TopModel model(*by, sort, lk);
  auto ds0 = read_diskstats();
  model.set_start(start, ds0 ? std::optional(std::move(*ds0)) : std::nullopt);

  std::unique_ptr<MetricsServer> server;
  MetricsAccumulator metrics({*by == GroupBy::kCgroup, a.prometheus_pid}, lk);
  if (listen) {
    auto s = MetricsServer::start(*listen);
    if (!s) return Error("--prometheus: " + s.error().message);
    server = std::move(*s);
    server->set_body(metrics.exposition());
  }

  bool tty = !a.json && isatty(STDOUT_FILENO);
  std::set<std::string> explained_losses;  // each loss reason is explained once
  int out_errno = 0;                       // a failed write to standard output
  for (uint64_t n = 1; a.count == 0 || n <= a.count; ++n) {
    uint64_t deadline = start + n * a.interval_ns;
    uint64_t now = mono_ns();
    if (signals.wait(deadline > now ? deadline - now : 0)) break;
    Sample s;
    auto agg = capture.aggregates();
    if (!agg) return agg.error().context("reading the in-kernel counters");
    s.agg = std::move(*agg);
    for (const auto& e : s.agg) procs.touch(e.key.pid);  // new pids, while they live
    // Tasks that exited: remove their entries from the kernel map (so that it
    // does not fill up) and count their final values in this interval.
    auto gone = exited_keys(s.agg, [](uint32_t pid, uint32_t tid) { return task_alive(pid, tid); });
    if (!gone.empty()) {
      auto taken = capture.take_aggregates(gone);
      if (!taken) return taken.error().context("removing the counters of exited tasks");
      s.released = fold_taken(s.agg, *taken);
    }
    auto busy = capture.device_busy();
    if (!busy) return busy.error().context("reading the per-device state");
    s.mono_ns = mono_ns();
    s.wall_ns = realtime_ns();
    s.busy = std::move(*busy);
    s.counters = capture.counters();
    if (auto d = read_diskstats()) s.diskstats = std::move(*d);
    if (auto l = read_loadavg()) s.loadavg = *l;
    Snapshot snap = model.update(s);
    snap.capture_features = capture.features();
    procs.next_generation();
    cgroups.rescan();  // cgroups created since: walk again on the next miss
    if (server) {
      metrics.add(snap);
      server->set_body(metrics.exposition());
    }
    if (a.quiet) continue;
    if (a.json) {
      std::string line = snapshot_json(snap).dump() + "\n";
      if (std::fputs(line.c_str(), stdout) < 0) {  // a line longer than the buffer
        out_errno = errno;
        break;
      }
    } else {
      ScreenOptions opt;
      opt.mode = mode;
      opt.utc = a.utc;
      size_t rows = 0;
      opt.width = terminal_width(STDOUT_FILENO, &rows);
      opt.clear = tty && !a.rolling;
      opt.max_rows = a.top_n;
      opt.explained = &explained_losses;
      size_t fixed = 4 + explained_losses.size() + snap.lost.size();  // header, notes, titles
      if (!opt.max_rows && opt.clear && rows > fixed) opt.max_rows = rows - fixed;
      std::string out = render_screen(snap, opt);
      if (std::fputs(out.c_str(), stdout) < 0) {
        out_errno = errno;
        break;
      }
    }
    if (std::fflush(stdout) != 0) {  // reader went away, or a full disk
      out_errno = errno;
      break;
    }
  }
  if (server) server->stop();
  print_loss_summary(capture.counters());
  if (out_errno)
    return Error(std::string("cannot write to standard output: ") + std::strerror(out_errno));
  return 0;
}

}  // namespace blkrr::cli
