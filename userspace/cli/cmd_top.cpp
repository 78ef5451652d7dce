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
#include "live/keys.h"
#include "live/top_model.h"
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
  std::string comm;
  bool rolling = false, disktime = false, percent = false, bytes = false;
  bool json = false, quiet = false, prometheus_pid = false, utc = false;
  uint64_t top_n = 0;
  std::string sort, by = "pid", prometheus;
  uint64_t interval_ns = 1'000'000'000;
  uint64_t count = 0;  // 0: until a signal
};

Result<bool> parse_args(int argc, char** argv, TopArgs& a) {
  ArgParser p(argv[0],
              "[-d DEV]... [-p PID] [-n COMM] [-C] [-s read|write|bytes|io|lat|time] [-r N] "
              "[--by pid|comm|cgroup] [-j] [--prometheus ADDR:PORT] [interval [count]]",
              "Per-process disk I/O, refreshed every interval (default 1 s): per process and\n"
              "device its reads and writes per second, IOPS, average latency (issue to\n"
              "completion), disk time and %I/O. The disk time of a request is Brendan Gregg's\n"
              "adaptive disk I/O time: the device's busy time split between the requests in\n"
              "flight, so the values of all processes add up to the device's busy time (%I/O\n"
              "is per single disk: two disks fully busy are 200 %). Counters are kept in the\n"
              "kernel; processes that exit during an interval still appear for it. q quits\n"
              "(when standard input is a terminal), as Ctrl-C does. Needs root (eBPF).");
  p.common_strings(CommonOpt::kDevice, "only this disk or partition (repeatable)", &a.devices);
  p.common(CommonOpt::kPid, "only this process", [&a](std::string_view v) -> Status {
    auto r = parse_pid(v);
    if (!r) return r.error();
    a.pid = *r;
    a.has_pid = true;
    return {};
  });
  p.common_string(CommonOpt::kComm, "only requests created by tasks named COMM (exact)", &a.comm);
  p.flag('C', "rolling", &a.rolling,
         "rolling output: do not clear the screen (biotop -C, iotop -b)");
  p.flag(0, "bytes", &a.bytes, "sort by READ/s + WRITE/s (-s bytes; every column is shown)");
  p.flag(0, "disktime", &a.disktime, "sort by DISKTIME (-s time, the default)");
  p.flag(0, "percent", &a.percent, "sort by %I/O, the same order as DISKTIME (-s time)");
  p.opt_u64('r', "maxrows", "N", "show at most N rows (biotop -r)", &a.top_n);
  p.opt_string('s', "sort", "KEY",
               "sort by read (READ/s), write (WRITE/s), bytes (both), io (IOPS), lat (AVGLAT) "
               "or time (DISKTIME and %I/O, the default); the column's title ends in '>'",
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
  p.removed('o', "--disktime (top lists only processes that did I/O, as iotop -o does)");
  std::vector<std::string> pos;
  p.positionals("[interval [count]]", &pos, 0, 2);
  p.examples(
      "  blkrr top                          every process doing I/O, every second\n"
      "  blkrr top -d sda -s write 5        sda, the heaviest writers first, every 5 s\n"
      "  blkrr top -n fio -C -r 10 1 60     fio's tasks, top 10, rolling, one minute\n"
      "  blkrr top --by cgroup -j 10        per cgroup, JSON lines every 10 s\n"
      "  blkrr top -q --prometheus :9111    only serve /metrics on port 9111\n");
  auto r = p.parse(argc, argv);
  if (!r || !*r) return r;
  if (int(a.disktime) + int(a.percent) + int(a.bytes) + int(!a.sort.empty()) > 1)
    return Error(ErrorKind::kUsage,
                 "-s, --bytes, --disktime and --percent each choose the sort column: give one");
  if (a.bytes) a.sort = "bytes";
  if (a.disktime || a.percent) a.sort = "time";
  BLKRR_TRY(check_comm(a.comm));
  if (!a.comm.empty() && parse_u64(a.comm))  // iotop's -n NUM
    std::fprintf(stderr,
                 "blkrr top: -n %s shows the tasks named '%s'; for %s refreshes (iotop's -n) "
                 "write blkrr top 1 %s\n",
                 a.comm.c_str(), a.comm.c_str(), a.comm.c_str(), a.comm.c_str());
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

// At exit, in plain words, what was lost over the whole run and what it
// means for the figures shown (--json has the counters by name).
void print_loss_summary(const Counters& c, const std::set<std::string>& seen) {
  std::vector<std::string> devices(seen.begin(), seen.end());
  for (const auto& [name, n] : c)
    if (n && is_loss_counter(name))
      std::fprintf(stderr, "blkrr top: not counted: %s (docs/top.md)\n",
                   loss_sentence(name, n, devices).c_str());
}

}  // namespace

Result<int> cmd_top(int argc, char** argv) {
  TopArgs a;
  auto pr = parse_args(argc, argv, a);
  if (!pr) return pr.error();
  if (!*pr) return 0;
  auto by = parse_group_by(a.by);
  if (!by) return Error(ErrorKind::kUsage, by.error().message);
  SortKey sort = SortKey::kTime;  // iotop's default: the share of the disk's time
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
  std::vector<VolumeMap> volume_maps;
  BLKRR_TRY(select_devices(a.devices, cfg, &volume_maps));
  add_stack_attribution(cfg, volume_maps, "top");
  if (a.has_pid) {
    BLKRR_TRY(require_process(a.pid));
    cfg.tgid = a.pid;
  }
  if (!a.comm.empty()) cfg.comm = a.comm;
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
  auto keys = QuitKey::open(STDIN_FILENO);  // q quits, when stdin is a terminal
  std::set<std::string> explained_losses;   // each loss reason is explained once
  std::set<std::string> devices_seen;       // named in the losses at exit
  int out_errno = 0;                        // a failed write to standard output
  for (uint64_t n = 1; a.count == 0 || n <= a.count; ++n) {
    uint64_t deadline = start + n * a.interval_ns;
    uint64_t now = mono_ns();
    if (wait_for_stop(signals, keys.get(), deadline > now ? deadline - now : 0) !=
        WaitEnd::kTimeout)
      break;
    Sample s;
    auto agg = capture.aggregates();
    if (!agg) return agg.error().context("reading the in-kernel counters");
    // The devices' busy time right after the processes' disk time: both from
    // (nearly) one instant, so that the processes' shares sum to the busy time.
    auto busy = capture.device_busy();
    if (!busy) return busy.error().context("reading the per-device state");
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
    s.mono_ns = mono_ns();
    s.wall_ns = realtime_ns();
    s.busy = std::move(*busy);
    s.counters = capture.counters();
    if (auto d = read_diskstats()) s.diskstats = std::move(*d);
    if (auto l = read_loadavg()) s.loadavg = *l;
    Snapshot snap = model.update(s);
    snap.capture_features = capture.features();
    for (const auto& d : snap.devices) devices_seen.insert(d.name);
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
      opt.sort = sort;
      opt.utc = a.utc;
      size_t rows = 0;
      opt.width = terminal_width(STDOUT_FILENO, &rows);
      opt.clear = tty && !a.rolling;
      opt.max_rows = a.top_n;
      opt.explained = &explained_losses;
      if (opt.clear) opt.height = rows;
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
  keys.reset();  // the terminal's mode back before the last words
  print_loss_summary(capture.counters(), devices_seen);
  if (out_errno)
    return Error(std::string("cannot write to standard output: ") + std::strerror(out_errno));
  return 0;
}

}  // namespace blkrr::cli
