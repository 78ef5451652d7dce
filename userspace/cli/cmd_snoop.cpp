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
#include "cli/snoop_args.h"
#include "core/device.h"
#include "core/request_json.h"
#include "core/signals.h"
#include "live/top_model.h"
#include "live/snoop_format.h"

namespace blkrr::cli {
namespace {

using namespace blkrr::live;

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

// The filters of the command line; opens the devices (the maps of the
// volumes among them in *volume_maps) and looks the process up.
Result<CaptureConfig> snoop_capture_config(const SnoopArgs& a,
                                           std::vector<VolumeMap>* volume_maps) {
  CaptureConfig cfg;
  BLKRR_TRY(select_devices(a.devices, cfg, volume_maps));
  add_stack_attribution(cfg, *volume_maps, "snoop");
  if (a.has_pid) {
    BLKRR_TRY(require_process(a.pid));
    cfg.tgid = a.pid;
  }
  if (!a.comm.empty()) cfg.comm = a.comm;
  cfg.emit_events = true;
  cfg.queue_time = a.queue;
  return cfg;
}

// One line (or JSON object) per request on standard output, and the counts
// said at exit.
class RequestPrinter {
 public:
  RequestPrinter(const Capture& capture, const SnoopArgs& a, const SnoopOptions& opt)
      : capture_(capture), a_(a), opt_(opt) {}

  // The column titles, or with --json a header object first (like `dump -j`:
  // what the capture runs with).
  void header() const {
    if (!a_.json) {
      std::printf("%s\n", snoop_header(opt_).c_str());
      return;
    }
    nlohmann::json h = requests_header("blkrr snoop");
    h["origin_ns"] = opt_.base_ns;
    h["capture_features"] = capture_.features();
    std::printf("%s\n", json_line(h).c_str());
  }

  void print(const Request& r) {
    if (!out_ok) return;  // standard output failed: nothing more reaches it
    if (!r.completed()) {
      // Its completion never reached the program (the kernel skipped it): the
      // request happened and is shown with "-" for end and latency. Requests
      // that may still be on the device when we stop are not shown.
      RequestExtra x = capture_.current_extra();
      if (x.at_stop && !x.disk_idle_at_stop) {
        ++running_at_exit;
        return;
      }
      ++lost;
    }
    std::string line = format(r) + '\n';
    if (std::fputs(line.c_str(), stdout) < 0) failed(errno);
    ++shown;
  }

  void failed(int err) {
    out_ok = false;
    out_errno = err;
  }

  uint64_t lost = 0, running_at_exit = 0, shown = 0;
  bool out_ok = true;
  int out_errno = 0;  // the failed write's

 private:
  std::string format(const Request& r) {
    const std::string& dev = namer_.name(r.part ? r.part : r.dev);
    std::optional<uint64_t> queue_ns;
    uint64_t insert_ns = a_.queue ? capture_.current_extra().insert_ns : kNoTime;
    bool issued = !(r.rec_flags & kRecIssueNotSeen);
    if (insert_ns != kNoTime && issued && insert_ns <= r.issue_ns)
      queue_ns = r.issue_ns - insert_ns;
    if (!a_.json) return snoop_line(r, dev, opt_, queue_ns);
    nlohmann::json j = snoop_json(r, dev, opt_, queue_ns);
    if (insert_ns != kNoTime) j["insert_ns"] = insert_ns;
    return json_line(j);
  }

  const Capture& capture_;
  const SnoopArgs& a_;
  const SnoopOptions& opt_;
  DeviceNamer namer_;
};

// Polls the capture from `start` until the deadline (0: none), a stop signal
// or a failed write, saying the losses once a second.
Status poll_until_stop(Capture& capture, StopSignals& signals, uint64_t start, uint64_t deadline,
                       const Capture::EventFn& print, RequestPrinter& out, LossReporter& losses) {
  uint64_t last_report = start;
  while (out.out_ok) {
    uint64_t now = mono_ns();
    if (deadline && now >= deadline) break;
    int timeout_ms = 100;
    if (deadline)
      timeout_ms = static_cast<int>(std::min<uint64_t>(100, (deadline - now) / 1000000 + 1));
    auto n = capture.poll(timeout_ms, print);
    if (!n) return n.error();
    if (std::fflush(stdout) != 0) {  // reader went away, or a full disk
      out.failed(errno);
      break;
    }
    if (signals.pending()) break;
    if (mono_ns() - last_report >= 1'000'000'000) {
      losses.report(capture.counters(), false);
      last_report = mono_ns();
    }
  }
  return {};
}

// The requests not shown whole, on stderr.
void print_exit_counts(const RequestPrinter& out) {
  if (out.lost)
    std::fprintf(stderr,
                 "blkrr snoop: %" PRIu64
                 " requests shown without end and latency: the kernel did not run the "
                 "completion program for them (record flag completion-not-seen)\n",
                 out.lost);
  if (out.running_at_exit)
    std::fprintf(stderr, "blkrr snoop: %" PRIu64 " requests still in flight at exit not shown\n",
                 out.running_at_exit);
}

Result<int> run_snoop(const SnoopArgs& a) {
  std::vector<VolumeMap> volume_maps;
  auto cfg = snoop_capture_config(a, &volume_maps);
  if (!cfg) return cfg.error();
  // Before the capture starts its thread.
  StopSignals signals({.mode = StopSignals::Mode::kBlock, .hangup = true});
  auto cap = Capture::start(*cfg);
  if (!cap) return cap.error();
  Capture& capture = **cap;
  // Without queue time the capture said why (one line); QUE shows "-".
  SnoopOptions opt{a.issue, a.majmin, a.queue, mono_ns()};
  uint64_t deadline = a.duration_ns ? opt.base_ns + a.duration_ns : 0;
  RequestPrinter out(capture, a, opt);
  out.header();
  // A volume's requests are shown as the volume saw them (cli/record_volumes.h).
  VolumeRecords volumes(std::move(volume_maps), *cfg);
  const std::function<void(const Request&)> show = [&out](const Request& r) { out.print(r); };
  Capture::EventFn print = [&](const Request& r) { volumes.translate(r, show); };

  std::vector<std::string> watched;
  for (const auto& d : cfg->devices) watched.push_back(d.part ? d.part->name : d.disk_name);
  LossReporter losses(watched);
  BLKRR_TRY(poll_until_stop(capture, signals, opt.base_ns, deadline, print, out, losses));
  auto st = capture.stop(print);
  std::fflush(stdout);
  if (!st) return st.error();
  Counters c = capture.counters();
  losses.report(c, true);
  if (a.json)  // ... and a counters object last
    std::printf(
        "%s\n",
        json_line({{"type", "counters"}, {"requests", out.shown}, {"counters", c}}).c_str());
  print_exit_counts(out);
  if (out.out_errno)
    return Error::system("cannot write to standard output", out.out_errno)
        .append("; stopped after " + std::to_string(out.shown) +
                " requests (the last ones, still buffered, may not have arrived)");
  std::fprintf(stderr, "blkrr snoop: %" PRIu64 " requests shown\n", out.shown);
  return 0;
}

}  // namespace

Result<int> cmd_snoop(int argc, char** argv) {
  auto a = parse_snoop_args(argc, argv);
  if (!a) return a.error();
  if (a->help_printed) return 0;
  return run_snoop(*a);
}

}  // namespace blkrr::cli
