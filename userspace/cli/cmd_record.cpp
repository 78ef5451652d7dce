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
#include "cli/record_args.h"
#include "cli/record_flight.h"
#include "cli/record_output.h"
#include "cli/record_summary.h"
#include "cli/record_volumes.h"
#include "core/args.h"
#include "core/device.h"
#include "core/device_stack.h"
#include "core/disktime_stream.h"
#include "core/io_guard.h"
#include "core/progress.h"
#include "core/signals.h"
#include "core/units.h"
#include "live/top_model.h"
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

// blkrr-<host>-<UTC time>: the default file name (+ .blkrr) or stem.
std::string default_stem() {
  time_t t = time(nullptr);
  tm utc{};
  gmtime_r(&t, &utc);
  char ts[32];
  strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &utc);
  return "blkrr-" + hostname() + "-" + ts;
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
      return Error(ErrorKind::kInterrupted,
                   "interrupted while waiting for --start-at: nothing was recorded");
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

// The capture's configuration from the arguments, checked before anything
// loads (the instant, the process, the cgroup, the output).
Result<CaptureConfig> capture_config(RecordArgs& a, std::vector<VolumeMap>& volumes) {
  if (a.ringbuf_mb == 0 || a.ringbuf_mb > 2048)
    return Error(ErrorKind::kUsage, "--ringbuf-mb must be 1..2048");
  if (a.start_at != 0) {  // refuse an instant in the past before loading anything
    ClockPair now = read_clock_pair();
    auto at = start_instant_for_unix(a.start_at, now.mono_ns, now.real_ns, 0);
    if (!at) return at.error();
  }
  CaptureConfig cfg;
  cfg.ringbuf_mb = static_cast<uint32_t>(a.ringbuf_mb);
  cfg.lean = a.lean;
  cfg.user_disk_time = true;  // the kernel takes no device lock where it can (docs/capture.md)
  BLKRR_TRY(select_devices(a.devs, cfg, &volumes));
  add_stack_attribution(cfg, volumes, "record");
  for (const auto& d : cfg.devices) BLKRR_TRY(require_nonempty_device(d, "-d " + d.spec));
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
  if (a.flight.ring_ns && a.output.out.empty()) a.output.out = default_stem();
  BLKRR_TRY(check_output_plan(a.output, default_stem()));
  BLKRR_TRY(check_flight_plan(a.flight, a.output, a.lean));
  // Before the capture loads: a writable directory, never a block device.
  // Rotated pieces and the flight recorder's windows get new names; the stem is no file.
  bool stem = a.output.rotating() || a.flight.ring_ns;
  BLKRR_TRY(check_outputs({{a.output.out, "-o"}}, {},
                          a.output.overwrite || stem ? Existing::kReplace : Existing::kRefuse));
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
  std::string last;  // a volume's pieces share its spec: named once
  for (const auto& s : cfg.devices) {
    if (s.spec != last) devspec += (devspec.empty() ? "" : ",") + s.spec;
    last = s.spec;
  }
  h.settings["devices"] = devspec.empty() ? "all" : devspec;
  // Devices recorded at the bio level, and why (docs/capture.md).
  for (const auto& b : cfg.bio_level) h.settings["bio_level." + b.name] = b.why;
  if (cfg.tgid) h.settings["pid"] = std::to_string(*cfg.tgid);
  if (cfg.comm) h.settings["comm"] = *cfg.comm;
  if (cfg.cgroup_id)
    h.settings["cgroup"] = a.cgroup + " (id " + std::to_string(*cfg.cgroup_id) + ")";
  h.settings["ringbuf_mb"] = std::to_string(a.ringbuf_mb);
  if (a.lean) h.settings["lean"] = "no disk time, no cgroup ids";
  if (a.start_at != 0) h.settings["start_at"] = strfmt("%.3f", a.start_at);
  if (a.output.rotate_ns) h.settings["rotate"] = fmt_duration_ns(a.output.rotate_ns);
  if (a.output.rotate_bytes) h.settings["rotate_size"] = std::to_string(a.output.rotate_bytes);
  if (const FlightPlan& f = a.flight; f.ring_ns) {
    h.settings["ring"] = fmt_duration_ns(static_cast<double>(f.ring_ns));
    h.settings["ring_memory"] = std::to_string(f.ring_bytes);
    if (f.trigger_latency_ns)
      h.settings["trigger_latency"] = fmt_duration_ns(static_cast<double>(f.trigger_latency_ns));
    if (f.trigger_util > 0) h.settings["trigger_util"] = strfmt("%g", f.trigger_util);
    h.settings["post"] = fmt_duration_ns(static_cast<double>(f.post_ns));
    h.settings["holdoff"] = fmt_duration_ns(static_cast<double>(f.holdoff_ns));
  }
  return h;
}

// One recording from its start to its trailers: records go through the
// user-space disk time (when the capture has it) into the output (a file,
// standard output, or rotated pieces), a block is flushed at least every
// second, a progress line on a terminal.
class Recording {
 public:
  // before_start: requests dropped while waiting for --start-at.
  Recording(const RecordArgs& a, Capture& cap, RecordSink& out, const TraceHeader& h,
            VolumeRecords& volumes, uint64_t before_start)
      : a_(a),
        cap_(cap),
        out_(out),
        h_(h),
        volumes_(volumes),
        user_dt_(cap.disk_time_in_user_space()),
        before_start_(before_start) {}

  // Until -D, a stop signal or a write error.
  void run(StopSignals& signals) {
    t0_ = a_.start_at != 0 ? h_.mono_anchor_ns : clock_ns(CLOCK_MONOTONIC);
    ProgressLine progress(ProgressLine::wanted(a_.quiet));
    auto on_req = [this](const Request& r) { take(r); };
    const CountersNow counters_now = [this] { return cumulative_counters(); };
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
      if (write_err_) break;
      if (auto st = out_.tick(now, cap_, counters_now); !st) write_err_ = st.error();
      if (progress.due()) progress.show(progress_line());
    }
    progress.finish();
  }

  // Drains the capture, writes the trailers with every counter, prints the summary.
  Result<int> finish() {
    const double seconds = seconds_since_start();
    Status stopped = cap_.stop([this](const Request& r) { take(r); });
    dts_.finish([this](const Request& r) { write(r); });
    Counters counters = cumulative_counters();
    if (write_err_) {
      const std::string kept = out_.kept_after_error();
      out_.abandon(counters);
      return write_err_->append("; " + kept);
    }
    if (auto st = out_.finish(counters); !st) return st.error();
    if (!stopped) return stopped.error();
    if (!a_.quiet) {
      counters["records_written"] = out_.records_written();
      FILE* to = a_.to_stdout() ? stderr : stdout;
      print_summary(to, tally_, counters, busy_, seconds, out_.summary_target(),
                    out_.bytes_written(), a_.verbose);
    }
    return 0;
  }

 private:
  // The capture's counters and the disk totals so far (a piece's trailer
  // holds what they grew by while it was the last to close).
  Counters cumulative_counters() {
    Counters counters = cap_.counters();
    busy_ = user_dt_ ? busy_from(dts_) : device_busy_or_none(cap_);
    if (user_dt_) counters["disk_time_in_user_space"] = 1;
    for (const auto& b : busy_) {
      counters["device_busy_ns." + dev_to_string(b.disk)] = b.busy_ns;
      counters["device_completions." + dev_to_string(b.disk)] = b.requests;
    }
    if (a_.start_at != 0) counters["before_start_at_dropped"] = before_start_;
    if (out_.not_kept()) counters["not_kept_min_free"] = out_.not_kept();
    if (own_left_out_) counters["own_io_left_out"] = own_left_out_;
    volumes_.add_counters(counters);
    return counters;
  }
  std::string progress_line() {
    return progress_text(tally_, cap_.counters(), seconds_since_start(), out_.progress());
  }
  // A record from the capture: dropped before --start-at, otherwise through
  // the disk-time stream (records wait kDiskTimeDelayNs for the requests
  // issued before their completion that complete later) or straight out.
  void take(const Request& r) {
    if (a_.start_at != 0 && r.issue_ns < h_.mono_anchor_ns) {
      before_start_++;
      return;
    }
    // The recorder's own writes (a trace on a recorded disk): its blocks are
    // written back by its own threads (TraceWriter own_writeback), so the
    // requests carry its process id; not recorded, counted.
    if (r.tgid == self_) {
      own_left_out_++;
      return;
    }
    if (write_err_) return;
    if (auto st = out_.received(r); !st) {
      write_err_ = st.error();
      return;
    }
    if (user_dt_)
      dts_.add(r);
    else
      write(r);
  }
  // A volume's requests as the volume saw them (cli/record_volumes.h).
  void write(const Request& r) {
    volumes_.translate(r, [this](const Request& v) {
      if (write_err_) return;
      tally_.add(v);
      if (auto st = out_.write(v); !st) write_err_ = st.error();
    });
  }
  double seconds_since_start() const {
    return static_cast<double>(clock_ns(CLOCK_MONOTONIC) - t0_) / 1e9;
  }

  const RecordArgs& a_;
  Capture& cap_;
  RecordSink& out_;
  const TraceHeader& h_;
  VolumeRecords& volumes_;
  const bool user_dt_;
  uint64_t before_start_, t0_ = 0, own_left_out_ = 0;
  const uint32_t self_ = static_cast<uint32_t>(getpid());
  DiskTimeStream dts_;
  Tally tally_;
  std::vector<DeviceBusy> busy_;
  std::optional<Error> write_err_;
};

}  // namespace

Result<int> cmd_record(int argc, char** argv) {
  RecordArgs a;
  auto parsed = parse_record_args(argc, argv, a);
  if (!parsed) return parsed.error();
  if (!*parsed) return 0;
  std::vector<VolumeMap> volume_maps;
  auto cfg = capture_config(a, volume_maps);
  if (!cfg) return cfg.error();
  auto h = trace_header(a, *cfg, argc, argv);
  if (!h) return h.error();
  VolumeRecords volumes(std::move(volume_maps), *cfg);
  BLKRR_TRY(volumes.describe(*h));

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
  std::unique_ptr<RecordSink> sink;
  std::string target;
  if (a.flight.ring_ns) {
    const uint64_t hold = (*cap)->disk_time_in_user_space() ? kDiskTimeDelayNs : 0;
    uint64_t min_free = a.output.min_free;
    if (min_free == OutputPlan::kMinFreeDefault) {
      auto sp = space_of(dir_of(a.output.out));
      min_free = sp ? default_min_free(sp->size) : 0;
    }
    sink = std::make_unique<FlightRecorder>(a.flight, a.output.out, *h, anchor.mono_ns, hold,
                                            min_free);
    target = "memory (--ring " + h->settings["ring"] + "; SIGUSR1 writes the window)";
  } else {
    auto out = RecordOutput::open(a.output, *h, anchor.mono_ns);
    if (!out) return out.error();
    target = (*out)->current_path();
    sink = std::move(*out);
  }
  if (!a.quiet)
    std::fprintf(stderr, "blkrr record: recording %s to %s; Ctrl-C stops\n",
                 h->settings["devices"].c_str(), target.c_str());
  Recording rec(a, **cap, *sink, *h, volumes, before_start);
  rec.run(signals);
  return rec.finish();
}

}  // namespace blkrr::cli
