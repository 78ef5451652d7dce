// blkrr record: capture the block requests of devices into a native trace.
// Runs until -D expires or SIGINT/SIGTERM/SIGHUP, then drains the capture, writes the
// trailer with every counter and prints a summary. A block is flushed at
// least every second, so a kill -9 or a full disk loses at most ~1 s.
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>

#include "core/clock.h"
#include "capture/capture.h"
#include "cli/capture_options.h"
#include "cli/commands.h"
#include "cli/record_summary.h"
#include "core/args.h"
#include "core/device.h"
#include "core/disktime_stream.h"
#include "core/io_guard.h"
#include "core/progress.h"
#include "core/signals.h"
#include "core/units.h"
#include "live/model.h"
#include "core/start_at.h"
#include "core/trace_format.h"
#include "core/version.h"

namespace blkrr::cli {
namespace {

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string default_output() {
  time_t t = time(nullptr);
  tm utc{};
  gmtime_r(&t, &utc);
  char ts[32];
  strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &utc);
  return "blkrr-" + hostname() + "-" + ts + ".blkrr";
}

// --start-at: the capture is loaded before the agreed instant (loading takes
// time that would differ between hosts); until then its records are drained
// and dropped, then the thread sleeps to the instant itself. Ctrl-C (or
// SIGTERM) while waiting ends the command: nothing was recorded.
Result<uint64_t> wait_for_start(Capture& cap, double start_at, uint64_t& dropped,
                                StopSignals& signals) {
  ClockPair now = read_clock_pair();
  auto at = start_instant_for_unix(start_at, now.mono_ns, now.real_ns, 1'000'000);
  if (!at)
    return at.error().context("the capture took until " + std::to_string(now.real_ns / 1e9) +
                              " to start; choose a later --start-at");
  auto drop = [&](const Request&) { dropped++; };
  constexpr uint64_t kMargin = 5'000'000;  // poll's millisecond timeouts end before this
  for (;;) {
    if (signals.pending())
      return Error("interrupted while waiting for --start-at: nothing was recorded", 130);
    uint64_t mono = read_clock_pair().mono_ns;
    if (mono + kMargin >= *at) break;
    int timeout = static_cast<int>(std::min<uint64_t>(200, (*at - mono - kMargin) / 1'000'000));
    auto n = cap.poll(std::max(timeout, 1), drop);
    if (!n) return n.error();
  }
  sleep_until_monotonic(*at);
  return *at;
}

// How long a record waits for the records of requests issued before its
// completion (a longer request arrives late and is charged the idle time it
// covered: the sum stays the busy union, core/disktime_stream.h).
constexpr uint64_t kDiskTimeDelayNs = 500'000'000;

std::vector<DeviceBusy> busy_from(const DiskTimeStream& dts) {
  std::vector<DeviceBusy> out;
  for (const auto& t : dts.totals()) out.push_back({t.dev, t.busy_ns, 0, t.completions});
  return out;
}

std::vector<DeviceBusy> device_busy_or_none(const Capture& cap) {
  auto busy = cap.device_busy();
  return busy ? *busy : std::vector<DeviceBusy>{};
}

// What the command line asks for.
struct RecordArgs {
  std::vector<std::string> devs;
  uint32_t pid = 0;
  bool have_pid = false;
  uint64_t ringbuf_mb = 64, duration_ns = 0;
  std::string comm, cgroup, out;
  bool quiet = false, lean = false;
  double start_at = 0;
};

// The options into `a`; false when --help or --version was printed.
Result<bool> parse_record_args(int argc, char** argv, RecordArgs& a) {
  ArgParser p(
      "blkrr record",
      "[-d DEV]... [-p PID] [-n COMM] [--cgroup PATH] [-D TIME] [-o FILE] "
      "[--start-at UNIX_TIME] [--ringbuf-mb N] [--lean] [-q]",
      "Record every block request of the selected devices (all devices by default) into a\n"
      "native trace: issue and completion time, device and partition, sector, size, operation\n"
      "and flags, the process that created the request, and its adaptive disk time.\n"
      "Stops after -D or on Ctrl-C/SIGTERM, then prints requests per device and operation,\n"
      "every drop counter, the file size and bytes per request. Needs root.");
  p.common_strings(CommonOpt::kDevice,
                   "device to record: /dev/sdX, sdX, MAJ:MIN or a partition (repeatable)", &a.devs);
  p.common(CommonOpt::kPid, "only requests created by this process (all its threads)",
           [&](std::string_view v) -> Status {
             auto n = parse_pid(v);
             if (!n) return n.error();
             a.pid = *n;
             a.have_pid = true;
             return {};
           });
  p.common_string(CommonOpt::kComm, "only requests created by tasks of this name (15 chars max)",
                  &a.comm);
  p.common_string(CommonOpt::kCgroup, "only requests created in this cgroup v2 directory",
                  &a.cgroup, "PATH");
  p.removed('c', "-n COMM (task name) or --cgroup PATH");
  p.common(CommonOpt::kDuration, "stop after this time (e.g. 60, 1.5s, 5m)",
           [&](std::string_view v) -> Status {
             auto d = parse_duration_ns(v);
             if (!d || *d == 0) return Error("-D: bad duration '" + std::string(v) + "'", 2);
             a.duration_ns = *d;
             return {};
           });
  p.option(0, "start-at", "UNIX_TIME",
           "load the capture now, record from this wall-clock instant on (several hosts in "
           "step; -D counts from it)",
           [&](std::string_view v) -> Status {
             auto t = parse_start_at(v);
             if (!t) return t.error();
             a.start_at = *t;
             return {};
           });
  p.common_string(CommonOpt::kOutput, "trace file (default blkrr-<host>-<UTC time>.blkrr)", &a.out);
  p.opt_u64(0, "ringbuf-mb", "N",
            "ring buffer size in MiB (default 64, rounded up to a power of 2)", &a.ringbuf_mb);
  p.flag(0, "lean", &a.lean,
         "no disk time and no cgroup ids (recorded as 0): the cheapest capture, with what\n"
         "replaying and validating a load needs");
  p.common_flag(CommonOpt::kQuiet, &a.quiet, "no progress line and no summary");
  p.examples(
      "  blkrr record -d sda -D 60 -o prod.blkrr      one minute of sda\n"
      "  blkrr record -d nvme0n1p2 -p 4242             one process on one partition, until Ctrl-C\n"
      "  blkrr record -d 8:0 --cgroup system.slice/mysql.service -o mysql.blkrr\n"
      "  blkrr record -d sda -D 600 --start-at $(date +%s -d '+1 min')   # same on every host");
  return p.parse(argc, argv);
}

// The capture's configuration from the arguments, checked before anything
// loads (the instant, the process, the cgroup, the output).
Result<CaptureConfig> capture_config(RecordArgs& a) {
  if (a.ringbuf_mb == 0 || a.ringbuf_mb > 2048) return Error("--ringbuf-mb must be 1..2048", 2);
  if (a.start_at != 0) {  // refuse an instant in the past before loading anything
    ClockPair now = read_clock_pair();
    auto at = start_instant_for_unix(a.start_at, now.mono_ns, now.real_ns, 0);
    if (!at) return at.error();
  }
  CaptureConfig cfg;
  cfg.ringbuf_mb = static_cast<uint32_t>(a.ringbuf_mb);
  cfg.lean = a.lean;
  cfg.user_disk_time = true;  // the kernel takes no device lock where it can (docs/capture.md)
  BLKRR_TRY(select_devices(a.devs, cfg));
  if (a.have_pid) {
    BLKRR_TRY(require_process(a.pid));
    cfg.tgid = a.pid;
  }
  if (!a.comm.empty()) cfg.comm = a.comm;
  if (!a.cgroup.empty()) {
    auto id = cgroup_id_of(a.cgroup);
    if (!id) return id.error();
    cfg.cgroup_id = *id;
  }
  if (a.out.empty()) a.out = default_output();
  // Before the capture loads: a writable directory, never a block device.
  BLKRR_TRY(check_outputs({{a.out, "-o"}}, {}));
  return cfg;
}

// The trace header: host, kernel, command line, the devices and the settings
// (the clock anchors are set when the recording starts).
Result<TraceHeader> trace_header(const RecordArgs& a, const CaptureConfig& cfg, int argc,
                                 char** argv) {
  TraceHeader h;
  h.host = hostname();
  utsname u{};
  if (uname(&u) == 0) h.kernel_release = u.release;
  h.tool_version = version();
  for (int i = 0; i < argc; i++) h.command_line += (i ? " " : "") + std::string(argv[i]);
  if (cfg.devices.empty()) {
    h.devices = list_devices();
  } else {
    std::map<DevT, bool> seen;
    for (const auto& s : cfg.devices) {
      if (seen[s.disk]) continue;
      seen[s.disk] = true;
      auto info = describe_device(s.disk);
      if (!info) return info.error();
      h.devices.push_back(*info);
    }
  }
  std::string devspec;
  for (const auto& s : cfg.devices) devspec += (devspec.empty() ? "" : ",") + s.spec;
  h.settings["devices"] = devspec.empty() ? "all" : devspec;
  if (cfg.tgid) h.settings["pid"] = std::to_string(*cfg.tgid);
  if (cfg.comm) h.settings["comm"] = *cfg.comm;
  if (cfg.cgroup_id)
    h.settings["cgroup"] = a.cgroup + " (id " + std::to_string(*cfg.cgroup_id) + ")";
  h.settings["ringbuf_mb"] = std::to_string(a.ringbuf_mb);
  if (a.lean) h.settings["lean"] = "no disk time, no cgroup ids";
  if (a.start_at != 0) h.settings["start_at"] = strfmt("%.3f", a.start_at);
  return h;
}

// One recording from its start to its trailer: records go through the
// user-space disk time (when the capture has it) into the trace, a block is
// flushed at least every second, a progress line on a terminal.
class Recording {
 public:
  Recording(const RecordArgs& a, Capture& cap, TraceWriter& w, const TraceHeader& h)
      : a_(a), cap_(cap), w_(w), h_(h), user_dt_(cap.disk_time_in_user_space()) {}

  // Until -D, a stop signal or a write error.
  void run(StopSignals& signals) {
    t0_ = a_.start_at != 0 ? h_.mono_anchor_ns : clock_ns(CLOCK_MONOTONIC);
    uint64_t last_flush = t0_;
    ProgressLine progress(ProgressLine::wanted(a_.quiet));
    auto on_req = [this](const Request& r) { take(r); };
    while (!signals.pending() && !write_err_) {
      uint64_t now = clock_ns(CLOCK_MONOTONIC);
      if (a_.duration_ns && now - t0_ >= a_.duration_ns) break;
      int timeout = 200;
      if (a_.duration_ns)
        timeout =
            static_cast<int>(std::min<uint64_t>(200, (t0_ + a_.duration_ns - now) / 1'000'000 + 1));
      auto n = cap_.poll(timeout, on_req);
      if (!n) {
        write_err_ = n.error();
        break;
      }
      now = clock_ns(CLOCK_MONOTONIC);
      if (user_dt_ && now > kDiskTimeDelayNs)
        dts_.release(now - kDiskTimeDelayNs, [this](const Request& r) { write(r); });
      if (now - last_flush >= 1'000'000'000ull) {
        if (auto st = w_.flush(); !st) write_err_ = st.error();
        last_flush = now;
      }
      if (progress.due())
        progress.show(progress_text(tally_, cap_.counters(), seconds_since_start()));
    }
    progress.finish();
  }

  // Drains the capture, writes the trailer with every counter, prints the summary.
  Result<int> finish(uint64_t before_start) {
    const double seconds = seconds_since_start();
    Status stopped = cap_.stop([this](const Request& r) { take(r); });
    dts_.finish([this](const Request& r) { write(r); });
    Counters counters = cap_.counters();
    std::vector<DeviceBusy> busy_v = user_dt_ ? busy_from(dts_) : device_busy_or_none(cap_);
    if (user_dt_) counters["disk_time_in_user_space"] = 1;
    for (const auto& b : busy_v) {
      counters["device_busy_ns." + dev_to_string(b.disk)] = b.busy_ns;
      counters["device_completions." + dev_to_string(b.disk)] = b.requests;
    }
    counters["records_written"] = w_.records_written();
    if (a_.start_at != 0) counters["before_start_at_dropped"] = before_start + before_start_;
    if (write_err_) {
      uint64_t kept = w_.records_written();
      (void)w_.close(counters);  // may fail too (disk full): the flushed blocks stay readable
      return Error(write_err_->message + "; the trace keeps what was flushed before (" +
                   std::to_string(kept) + " records or fewer, readable with 'blkrr dump')");
    }
    if (auto st = w_.close(counters); !st) return st.error();
    if (!stopped) return stopped.error();
    if (!a_.quiet) {
      std::error_code ec;
      uint64_t size = std::filesystem::file_size(a_.out, ec);
      print_summary(tally_, counters, busy_v, seconds, a_.out, ec ? 0 : size);
    }
    return 0;
  }

 private:
  // A record from the capture: dropped before --start-at, otherwise through
  // the disk-time stream (records wait kDiskTimeDelayNs for the requests
  // issued before their completion that complete later) or straight out.
  void take(const Request& r) {
    if (a_.start_at != 0 && r.issue_ns < h_.mono_anchor_ns) {
      before_start_++;
      return;
    }
    if (user_dt_)
      dts_.add(r);
    else
      write(r);
  }
  void write(const Request& r) {
    if (write_err_) return;
    tally_.add(r);
    if (auto st = w_.append(r); !st) write_err_ = st.error();
  }
  double seconds_since_start() const {
    return static_cast<double>(clock_ns(CLOCK_MONOTONIC) - t0_) / 1e9;
  }

  const RecordArgs& a_;
  Capture& cap_;
  TraceWriter& w_;
  const TraceHeader& h_;
  const bool user_dt_;
  DiskTimeStream dts_;
  Tally tally_;
  std::optional<Error> write_err_;
  uint64_t t0_ = 0, before_start_ = 0;
};

// The trace file: written block by block, not atomically, so that a killed
// or crashed recording keeps every block so far under its own name (the
// reader reports the missing trailer).
Result<TraceWriter> open_trace(const std::string& out, const TraceHeader& h) {
  TraceWriter::Options wopts;
  // zlib's run-length strategy on column-elided blocks: the cheapest
  // compression per request for ~8 bytes/request (docs/performance.md, record).
  wopts.rle = true;
  wopts.atomic = false;
  auto w = TraceWriter::create(out, h, wopts);
  if (!w) return w.error().context("output not writable");
  return w;
}

}  // namespace

Result<int> cmd_record(int argc, char** argv) {
  RecordArgs a;
  auto parsed = parse_record_args(argc, argv, a);
  if (!parsed) return parsed.error();
  if (!*parsed) return 0;
  auto cfg = capture_config(a);
  if (!cfg) return cfg.error();
  auto h = trace_header(a, *cfg, argc, argv);
  if (!h) return h.error();

  BLKRR_TRY(capture_preflight());
  auto cap = Capture::start(*cfg);
  if (!cap) return cap.error();
  // What the capture runs with on this kernel (docs/kernels.md).
  for (const auto& [k, v] : (*cap)->features()) h->settings["capture." + k] = v;
  h->settings["attribution"] = h->settings["capture.attribution"];
  // Ctrl-C, SIGTERM or SIGHUP (a closed terminal) ends the recording, or the
  // wait for --start-at (until then, they kill).
  StopSignals signals({.hangup = true});
  uint64_t before_start = 0;  // requests issued before --start-at (not recorded)
  if (a.start_at != 0) {
    if (!a.quiet)
      std::fprintf(stderr, "blkrr record: capture loaded; waiting for --start-at %s\n",
                   h->settings["start_at"].c_str());
    auto at = wait_for_start(**cap, a.start_at, before_start, signals);
    if (!at) return at.error();
  }
  // The anchors: the recording starts here (at --start-at, as late as the wake-up was).
  const ClockPair anchor = read_clock_pair();
  h->real_anchor_ns = anchor.real_ns;
  h->mono_anchor_ns = anchor.mono_ns;
  auto w = open_trace(a.out, *h);
  if (!w) return w.error();
  if (!a.quiet)
    std::fprintf(stderr, "blkrr record: recording %s to %s; Ctrl-C stops\n",
                 h->settings["devices"].c_str(), a.out.c_str());
  Recording rec(a, **cap, *w, *h);
  rec.run(signals);
  return rec.finish(before_start);
}

}  // namespace blkrr::cli
