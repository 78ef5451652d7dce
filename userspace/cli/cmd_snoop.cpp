// blkrr snoop: one line per completed block request, with its latency and
// its adaptive disk time (iosnoop -o on Solaris, biosnoop on bcc). Lost
// events are reported on stderr with their counts, never silently.
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <cstdio>
#include <optional>

#include "core/clock.h"
#include "capture/capture.h"
#include "cli/capture_options.h"
#include "cli/commands.h"
#include "cli/record_volumes.h"
#include "core/args.h"
#include "core/device.h"
#include "core/request_json.h"
#include "core/signals.h"
#include "live/top_model.h"
#include "live/snoop_format.h"

namespace blkrr::cli {
namespace {

using namespace blkrr::live;

struct SnoopArgs {
  std::vector<std::string> devices;
  uint32_t pid = 0;
  bool has_pid = false;
  std::string comm;
  bool issue = false, old_start = false, majmin = false, queue = false, json = false;
  uint64_t duration_ns = 0;  // 0: until a signal
};

Result<bool> parse_args(int argc, char** argv, SnoopArgs& a) {
  ArgParser p(argv[0],
              "[-d DEV]... [-p PID] [-n COMM] [--issue] [--majmin] [-Q] [-j] [-D TIME | duration]",
              "One line per completed block request: who created it, where, how big, its\n"
              "latency (issue to completion) and its adaptive disk time (DTIME: the part of\n"
              "the device's busy time charged to it; summed over requests it is the busy\n"
              "time). Runs for `duration` (e.g. 10, 1.5s, 2m) or until Ctrl-C. Needs root.");
  p.common_strings(CommonOpt::kDevice, "only this disk or partition (repeatable)", &a.devices);
  p.common(CommonOpt::kPid, "only requests created by this process (all its threads)",
           [&a](std::string_view v) -> Status {
             auto r = parse_pid(v);
             if (!r) return r.error();
             a.pid = *r;
             a.has_pid = true;
             return {};
           });
  p.common_string(CommonOpt::kComm, "only requests created by tasks named COMM (exact)", &a.comm);
  p.flag(0, "issue", &a.issue, "add ISSUE(s), the issue time (s since snoop started)");
  p.flag(0, "start", &a.old_start,
         "the old spelling of --issue (deprecated: --start TIME is where replay begins)");
  p.flag(0, "majmin", &a.majmin, "add MAJ and MIN of the device");
  p.flag('Q', "queue", &a.queue, "add QUE(ms), I/O scheduler insert to issue (- if not queued)");
  p.common_flag(CommonOpt::kJson, &a.json,
                "JSON lines: a header object, then one object per request (docs/json.md)");
  p.common(CommonOpt::kDuration, "stop after this time (e.g. 10, 1.5s, 1m30s; or as `duration`)",
           [&a](std::string_view v) -> Status {
             auto d = parse_run_duration("-D", v);
             if (!d) return d.error();
             a.duration_ns = *d;
             return {};
           });
  p.removed('s', "--issue (the issue time column)");
  p.removed('t', "nothing: TIME(s), the completion time, is always shown");
  p.removed('N', "--majmin");
  std::vector<std::string> pos;
  p.positionals("[duration]", &pos, 0, 1);
  p.examples(
      "  blkrr snoop                      every request on every disk\n"
      "  blkrr snoop -d sda2 --issue 10   partition sda2 with issue times, for 10 s\n"
      "  blkrr snoop -n postgres -j       one JSON line per request of postgres\n"
      "  blkrr snoop -Q -d sda            with the time spent in sda's I/O scheduler\n");
  auto r = p.parse(argc, argv);
  if (!r || !*r) return r;
  BLKRR_TRY(take_positional_duration(pos, a.duration_ns));
  if (a.old_start) {
    std::fprintf(stderr, "blkrr snoop: --start is now --issue (the ISSUE(s) column)\n");
    a.issue = true;
  }
  BLKRR_TRY(check_comm(a.comm));
  return true;
}

// Reports loss counters that grew since the last call, on stderr.
class LossReporter {
 public:
  // In plain words, with the devices watched (the counters are not per
  // device); --json keeps the counters' names.
  explicit LossReporter(std::vector<std::string> devices) : devices_(std::move(devices)) {}
  void report(const Counters& now, bool final_report) {
    Counters grew = delta_.update(now);
    for (const auto& [name, n] : grew) {
      if (!is_loss_counter(name)) continue;
      std::string where;
      for (size_t i = 0; i < devices_.size(); ++i) where += (i ? ", " : " on ") + devices_[i];
      std::fflush(stdout);
      std::fprintf(stderr, "blkrr snoop: LOST%s %" PRIu64 "%s: %s\n",
                   final_report ? " (at exit)" : "", n, where.c_str(),
                   std::string(loss_meaning(name)).c_str());
    }
  }

 private:
  std::vector<std::string> devices_;
  CounterDelta delta_;
};

}  // namespace

Result<int> cmd_snoop(int argc, char** argv) {
  SnoopArgs a;
  auto pr = parse_args(argc, argv, a);
  if (!pr) return pr.error();
  if (!*pr) return 0;
  CaptureConfig cfg;
  std::vector<VolumeMap> volume_maps;
  BLKRR_TRY(select_devices(a.devices, cfg, &volume_maps));
  add_stack_attribution(cfg, volume_maps, "snoop");
  if (a.has_pid) {
    BLKRR_TRY(require_process(a.pid));
    cfg.tgid = a.pid;
  }
  if (!a.comm.empty()) cfg.comm = a.comm;
  cfg.emit_events = true;
  cfg.queue_time = a.queue;

  // Before the capture starts its thread.
  StopSignals signals({.mode = StopSignals::Mode::kBlock, .hangup = true});
  auto cap = Capture::start(cfg);
  if (!cap) return cap.error();
  Capture& capture = **cap;
  // Without queue time the capture said why (one line); QUE shows "-".
  SnoopOptions opt{a.issue, a.majmin, a.queue, mono_ns()};
  uint64_t deadline = a.duration_ns ? opt.base_ns + a.duration_ns : 0;

  DeviceNamer namer;
  uint64_t lost = 0, running_at_exit = 0, shown = 0;
  bool out_ok = true;
  int out_errno = 0;  // the failed write's
  // A volume's requests are shown as the volume saw them (cli/record_volumes.h).
  VolumeRecords volumes(std::move(volume_maps), cfg);
  const std::function<void(const Request&)> show = [&](const Request& r) {
    if (!out_ok) return;  // standard output failed: nothing more reaches it
    if (!r.completed()) {
      // Its completion never reached the program (the kernel skipped it): the
      // request happened and is shown with "-" for end and latency. Requests
      // that may still be on the device when we stop are not shown.
      RequestExtra x = capture.current_extra();
      if (x.at_stop && !x.disk_idle_at_stop) {
        ++running_at_exit;
        return;
      }
      ++lost;
    }
    const std::string& dev = namer.name(r.part ? r.part : r.dev);
    std::optional<uint64_t> queue_ns;
    uint64_t insert_ns = a.queue ? capture.current_extra().insert_ns : kNoTime;
    bool issued = !(r.rec_flags & kRecIssueNotSeen);
    if (insert_ns != kNoTime && issued && insert_ns <= r.issue_ns)
      queue_ns = r.issue_ns - insert_ns;
    std::string line;
    if (a.json) {
      nlohmann::json j = snoop_json(r, dev, opt, queue_ns);
      if (insert_ns != kNoTime) j["insert_ns"] = insert_ns;
      line = json_line(j);
    } else {
      line = snoop_line(r, dev, opt, queue_ns);
    }
    line += '\n';
    if (std::fputs(line.c_str(), stdout) < 0) {
      out_ok = false;
      out_errno = errno;
    }
    ++shown;
  };
  Capture::EventFn print = [&](const Request& r) { volumes.translate(r, show); };
  if (!a.json)
    std::printf("%s\n", snoop_header(opt).c_str());
  else {  // like `dump -j`: a header object first (what the capture runs with)
    nlohmann::json h = requests_header("blkrr snoop");
    h["origin_ns"] = opt.base_ns;
    h["capture_features"] = capture.features();
    std::printf("%s\n", json_line(h).c_str());
  }

  std::vector<std::string> watched;
  for (const auto& d : cfg.devices) watched.push_back(d.part ? d.part->name : d.disk_name);
  LossReporter losses(watched);
  uint64_t last_report = opt.base_ns;
  while (out_ok) {
    uint64_t now = mono_ns();
    if (deadline && now >= deadline) break;
    int timeout_ms = 100;
    if (deadline)
      timeout_ms = static_cast<int>(std::min<uint64_t>(100, (deadline - now) / 1000000 + 1));
    auto n = capture.poll(timeout_ms, print);
    if (!n) return n.error();
    if (std::fflush(stdout) != 0) {  // reader went away, or a full disk
      out_ok = false;
      out_errno = errno;
      break;
    }
    if (signals.pending()) break;
    if (mono_ns() - last_report >= 1'000'000'000) {
      losses.report(capture.counters(), false);
      last_report = mono_ns();
    }
  }
  auto st = capture.stop(print);
  std::fflush(stdout);
  if (!st) return st.error();
  Counters c = capture.counters();
  losses.report(c, true);
  if (a.json)  // ... and a counters object last
    std::printf("%s\n",
                json_line({{"type", "counters"}, {"requests", shown}, {"counters", c}}).c_str());
  if (lost)
    std::fprintf(stderr,
                 "blkrr snoop: %" PRIu64
                 " requests shown without end and latency: the kernel did not run the "
                 "completion program for them (record flag completion-not-seen)\n",
                 lost);
  if (running_at_exit)
    std::fprintf(stderr, "blkrr snoop: %" PRIu64 " requests still in flight at exit not shown\n",
                 running_at_exit);
  if (out_errno)
    return Error(std::string("cannot write to standard output: ") + std::strerror(out_errno) +
                 "; stopped after " + std::to_string(shown) +
                 " requests (the last ones, still buffered, may not have arrived)");
  std::fprintf(stderr, "blkrr snoop: %" PRIu64 " requests shown\n", shown);
  return 0;
}

}  // namespace blkrr::cli
