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
#include "cli/top_args.h"
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

namespace {

// The filters of the command line; opens the devices and looks the process up.
Result<CaptureConfig> top_capture_config(const TopArgs& a) {
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
  return cfg;
}

// The names of devices, processes and cgroups, cached over the run.
struct TopNames {
  DeviceNamer devices;
  ProcCache procs;
  CgroupNamer cgroups;
  Lookups lookups() {
    Lookups lk;
    lk.device_name = [this](DevT d) { return devices.name(d); };
    lk.cgroup_name = [this](uint64_t id) { return cgroups.name(id); };
    lk.proc = [this](uint32_t pid) { return procs.get(pid); };
    return lk;
  }
};

// One interval's counters from the kernel. Tasks that exited have their
// entries removed from the kernel map (so that it does not fill up) and their
// final values counted in this interval.
Result<Sample> take_sample(Capture& capture, ProcCache& procs) {
  Sample s;
  auto agg = capture.aggregates();
  if (!agg) return agg.error().context("reading the in-kernel counters");
  // The devices' busy time right after the processes' disk time: both from
  // (nearly) one instant, so that the processes' shares sum to the busy time.
  auto busy = capture.device_busy();
  if (!busy) return busy.error().context("reading the per-device state");
  s.agg = std::move(*agg);
  for (const auto& e : s.agg) procs.touch(e.key.pid);  // new pids, while they live
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
  return s;
}

// One interval on standard output, as a JSON line or a screen; the errno of
// a failed write, 0 if it went out.
int show_snapshot(const Snapshot& snap, const TopArgs& a, bool tty,
                  std::set<std::string>& explained_losses) {
  std::string out;
  if (a.json) {
    out = snapshot_json(snap).dump() + "\n";
  } else {
    ScreenOptions opt;
    opt.sort = a.sort;
    opt.utc = a.utc;
    size_t rows = 0;
    opt.width = terminal_width(STDOUT_FILENO, &rows);
    opt.clear = tty && !a.rolling;
    opt.max_rows = a.top_n;
    opt.explained = &explained_losses;
    if (opt.clear) opt.height = rows;
    out = render_screen(snap, opt);
  }
  if (std::fputs(out.c_str(), stdout) < 0) return errno;  // a line longer than the buffer
  if (std::fflush(stdout) != 0) return errno;             // reader went away, or a full disk
  return 0;
}

Result<int> run_top(const TopArgs& a) {
  auto cfg = top_capture_config(a);
  if (!cfg) return cfg.error();
  // Block the stop signals before any thread starts (capture sweeper, server).
  StopSignals signals({.mode = StopSignals::Mode::kBlock, .hangup = true});
  auto cap = Capture::start(*cfg);
  if (!cap) return cap.error();
  Capture& capture = **cap;
  uint64_t start = mono_ns();

  TopNames names;
  Lookups lk = names.lookups();
  TopModel model(a.by, a.sort, lk);
  auto ds0 = read_diskstats();
  model.set_start(start, ds0 ? std::optional(std::move(*ds0)) : std::nullopt);

  std::unique_ptr<MetricsServer> server;
  MetricsAccumulator metrics({a.by == GroupBy::kCgroup, a.prometheus_pid}, lk);
  if (a.prometheus) {
    auto s = MetricsServer::start(*a.prometheus);
    if (!s) return s.error().context("--prometheus");
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
    auto s = take_sample(capture, names.procs);
    if (!s) return s.error();
    Snapshot snap = model.update(*s);
    snap.capture_features = capture.features();
    for (const auto& d : snap.devices) devices_seen.insert(d.name);
    names.procs.next_generation();
    names.cgroups.rescan();  // cgroups created since: walk again on the next miss
    if (server) {
      metrics.add(snap);
      server->set_body(metrics.exposition());
    }
    if (a.quiet) continue;
    if ((out_errno = show_snapshot(snap, a, tty, explained_losses)) != 0) break;
  }
  if (server) server->stop();
  keys.reset();  // the terminal's mode back before the last words
  print_loss_summary(capture.counters(), devices_seen);
  if (out_errno) return Error::system("cannot write to standard output", out_errno);
  return 0;
}

}  // namespace

Result<int> cmd_top(int argc, char** argv) {
  auto a = parse_top_args(argc, argv);
  if (!a) return a.error();
  if (a->help_printed) return 0;
  return run_top(*a);
}

}  // namespace blkrr::cli
