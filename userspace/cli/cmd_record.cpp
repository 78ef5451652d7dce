// blkrr record: capture the block requests of devices into a native trace.
// Runs until -D expires or SIGINT/SIGTERM, then drains the capture, writes the
// trailer with every counter and prints a summary. A block is flushed at
// least every second, so a kill -9 or a full disk loses at most ~1 s.
#include <linux/magic.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include "core/clock.h"
#include "capture/capture.h"
#include "cli/capture_options.h"
#include "cli/commands.h"
#include "core/args.h"
#include "core/io_guard.h"
#include "core/device.h"
#include "core/disktime_stream.h"
#include "core/start_at.h"
#include "core/trace_format.h"
#include "core/version.h"

namespace blkrr::cli {
namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) {
  g_stop = 1;
}

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

// cgroup v2 directory -> cgroup id (the directory's inode number).
Result<uint64_t> cgroup_id_of(const std::string& arg) {
  std::vector<std::string> tries = {arg};
  if (arg.empty() || arg[0] != '/') {
    tries.push_back("/sys/fs/cgroup/" + arg);
    tries.push_back("/sys/fs/cgroup/unified/" + arg);
  }
  for (const auto& p : tries) {
    struct stat st {};
    if (stat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    struct statfs fs {};
    if (statfs(p.c_str(), &fs) != 0 || fs.f_type != CGROUP2_SUPER_MAGIC)
      return Error(
          "--cgroup '" + p + "' is not a cgroup v2 directory (blkrr filters on cgroup v2 ids)", 2);
    return static_cast<uint64_t>(st.st_ino);
  }
  return Error("--cgroup '" + arg +
                   "': no such cgroup directory (give its path, e.g. "
                   "/sys/fs/cgroup/system.slice/mysql.service)",
               2);
}

struct DevStats {
  uint64_t requests = 0, bytes = 0, not_seen = 0;
};

// Everything the summary needs, accumulated as records arrive.
struct Tally {
  std::map<DevT, DevStats> by_dev;  // by partition (== disk when none)
  std::map<Op, uint64_t> by_op;
  uint64_t requests = 0;
  uint64_t first_issue = UINT64_MAX, last_complete = 0;
  void add(const Request& r) {
    auto& d = by_dev[r.part ? r.part : r.dev];
    d.requests++;
    d.bytes += r.bytes;
    if (!r.completed()) d.not_seen++;
    by_op[r.op]++;
    requests++;
    first_issue = std::min(first_issue, r.issue_ns);
    if (r.completed()) last_complete = std::max(last_complete, r.complete_ns);
  }
};

constexpr const char* kDropCounters[] = {
    "ringbuf_reserve_failed",
    "inflight_map_full",
    "completion_without_issue",
    "completion_not_seen_reissued",
    "completion_not_seen_checked",
    "completion_not_seen_idle",
    "completion_from_io_done",
    "completion_not_seen_swept",
    "completion_not_seen_at_stop",
    "partial_completions",
    "requeues",
    "prog_recursion_misses",
    "pending_clamped",
    "devstate_map_full",
};

void print_summary(const Tally& t, const Counters& c, const std::vector<DeviceBusy>& busy,
                   double seconds, const std::string& path, uint64_t file_bytes) {
  DeviceNamer namer;
  std::printf("recorded %" PRIu64 " requests in %.1f s to %s\n", t.requests, seconds, path.c_str());
  std::printf("%-12s %-8s %10s %14s %12s %7s\n", "DEVICE", "MAJ:MIN", "REQUESTS", "BYTES",
              "BUSY(ms)", "%UTIL");
  for (const auto& [dev, s] : t.by_dev) {
    double busy_ms = 0;
    bool disk = false;
    for (const auto& b : busy)
      if (b.disk == dev) {
        busy_ms = static_cast<double>(b.busy_ns) / 1e6;
        disk = true;
      }
    if (disk)
      std::printf("%-12s %-8s %10" PRIu64 " %14" PRIu64 " %12.1f %6.1f%%\n",
                  namer.name(dev).c_str(), dev_to_string(dev).c_str(), s.requests, s.bytes, busy_ms,
                  seconds > 0 ? busy_ms / 10.0 / seconds : 0.0);
    else
      std::printf("%-12s %-8s %10" PRIu64 " %14" PRIu64 " %12s %7s\n", namer.name(dev).c_str(),
                  dev_to_string(dev).c_str(), s.requests, s.bytes, "-", "-");
  }
  std::printf("operations:");
  for (const auto& [op, n] : t.by_op)
    std::printf(" %s %" PRIu64, std::string(op_name(op)).c_str(), n);
  std::printf("\ndrops and anomalies:");
  for (const char* name : kDropCounters) {
    auto it = c.find(name);
    std::printf(" %s=%" PRIu64, name, it == c.end() ? 0 : it->second);
  }
  if (auto it = c.find("fault_skipped_completions"); it != c.end() && it->second)
    std::printf(" fault_skipped_completions=%" PRIu64 " (injected)", it->second);
  std::printf("\nfile: %" PRIu64 " bytes, %.2f bytes/request\n", file_bytes,
              t.requests ? static_cast<double>(file_bytes) / static_cast<double>(t.requests) : 0.0);
}

// --start-at: the capture is loaded before the agreed instant (loading takes
// time that would differ between hosts); until then its records are drained
// and dropped, then the thread sleeps to the instant itself.
Result<uint64_t> wait_for_start(Capture& cap, double start_at, uint64_t& dropped) {
  ClockPair now = read_clock_pair();
  auto at = start_instant_for_unix(start_at, now.mono_ns, now.real_ns, 1'000'000);
  if (!at)
    return at.error().context("the capture took until " + std::to_string(now.real_ns / 1e9) +
                              " to start; choose a later --start-at");
  auto drop = [&](const Request&) { dropped++; };
  constexpr uint64_t kMargin = 5'000'000;  // poll's millisecond timeouts end before this
  for (;;) {
    uint64_t mono = read_clock_pair().mono_ns;
    if (mono + kMargin >= *at) break;
    int timeout = static_cast<int>(std::min<uint64_t>(200, (*at - mono - kMargin) / 1'000'000));
    auto n = cap.poll(std::max(timeout, 1), drop);
    if (!n) return n.error();
    if (g_stop) return Error("interrupted before --start-at", 130);
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

}  // namespace

Result<int> cmd_record(int argc, char** argv) {
  std::vector<std::string> devs;
  uint32_t pid = 0;
  uint64_t ringbuf_mb = 64, duration_ns = 0;
  std::string comm, cgroup, out;
  bool have_pid = false, quiet = false, lean = false;
  double start_at = 0;
  ArgParser p(
      "blkrr record",
      "[-d DEV]... [-p PID] [-c COMM] [--cgroup PATH] [-D SECONDS] [-o FILE] "
      "[--start-at UNIX_TIME] [--ringbuf-mb N] [--lean] [-q]",
      "Record every block request of the selected devices (all devices by default) into a\n"
      "native trace: issue and completion time, device and partition, sector, size, operation\n"
      "and flags, the process that created the request, and its adaptive disk time.\n"
      "Stops after -D or on Ctrl-C/SIGTERM, then prints requests per device and operation,\n"
      "every drop counter, the file size and bytes per request. Needs root.");
  p.opt_strings('d', "device", "DEV",
                "device to record: /dev/sdX, sdX, MAJ:MIN or a partition (repeatable)", &devs);
  p.option('p', "pid", "PID", "only requests created by this process (tgid)",
           [&](std::string_view v) -> Status {
             auto n = parse_pid(v);
             if (!n) return n.error();
             pid = *n;
             have_pid = true;
             return {};
           });
  p.opt_string('c', "comm", "COMM", "only requests created by tasks of this name (15 chars max)",
               &comm);
  p.opt_string(0, "cgroup", "PATH", "only requests created in this cgroup v2 directory", &cgroup);
  p.option('D', "duration", "SECONDS", "stop after this time (e.g. 60, 1.5s, 5m)",
           [&](std::string_view v) -> Status {
             auto d = parse_duration_ns(v);
             if (!d || *d == 0) return Error("-D: bad duration '" + std::string(v) + "'", 2);
             duration_ns = *d;
             return {};
           });
  p.option(0, "start-at", "UNIX_TIME",
           "load the capture now, record from this wall-clock instant on (several hosts in "
           "step; -D counts from it)",
           [&](std::string_view v) -> Status {
             auto t = parse_start_at(v);
             if (!t) return t.error();
             start_at = *t;
             return {};
           });
  p.opt_string('o', "output", "FILE", "trace file (default blkrr-<host>-<UTC time>.blkrr)", &out);
  p.opt_u64(0, "ringbuf-mb", "N",
            "ring buffer size in MiB (default 64, rounded up to a power of 2)", &ringbuf_mb);
  p.flag(0, "lean", &lean,
         "no disk time and no cgroup ids (recorded as 0): the cheapest capture, with what\n"
         "replaying and validating a load needs");
  p.flag('q', "quiet", &quiet, "no progress line and no summary");
  p.examples(
      "  blkrr record -d sda -D 60 -o prod.blkrr      one minute of sda\n"
      "  blkrr record -d nvme0n1p2 -p 4242             one process on one partition, until Ctrl-C\n"
      "  blkrr record -d 8:0 --cgroup system.slice/mysql.service -o mysql.blkrr\n"
      "  blkrr record -d sda -D 600 --start-at $(date +%s -d '+1 min')   # same on every host");
  auto pr = p.parse(argc, argv);
  if (!pr) return pr.error();
  if (!*pr) return 0;
  if (ringbuf_mb == 0 || ringbuf_mb > 2048) return Error("--ringbuf-mb must be 1..2048", 2);
  if (start_at != 0) {  // refuse an instant in the past before loading anything
    ClockPair now = read_clock_pair();
    auto at = start_instant_for_unix(start_at, now.mono_ns, now.real_ns, 0);
    if (!at) return at.error();
  }

  CaptureConfig cfg;
  cfg.ringbuf_mb = static_cast<uint32_t>(ringbuf_mb);
  cfg.lean = lean;
  cfg.user_disk_time = true;  // the kernel takes no device lock where it can (docs/capture.md)
  BLKRR_TRY(select_devices(devs, cfg));
  if (have_pid) {
    BLKRR_TRY(require_process(pid));
    cfg.tgid = pid;
  }
  if (!comm.empty()) cfg.comm = comm;
  if (!cgroup.empty()) {
    auto id = cgroup_id_of(cgroup);
    if (!id) return id.error();
    cfg.cgroup_id = *id;
  }
  if (out.empty()) out = default_output();
  // Before the capture loads: a writable directory, never a block device.
  BLKRR_TRY(check_outputs({{out, "-o"}}, {}));

  // Header: host, kernel, clock anchors, the devices and the settings.
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
  if (cfg.cgroup_id) h.settings["cgroup"] = cgroup + " (id " + std::to_string(*cfg.cgroup_id) + ")";
  h.settings["ringbuf_mb"] = std::to_string(ringbuf_mb);
  if (lean) h.settings["lean"] = "no disk time, no cgroup ids";

  BLKRR_TRY(capture_preflight());
  auto cap = Capture::start(cfg);
  if (!cap) return cap.error();
  // What the capture runs with on this kernel (docs/kernels.md).
  for (const auto& [k, v] : (*cap)->features()) h.settings["capture." + k] = v;
  h.settings["attribution"] = h.settings["capture.attribution"];
  uint64_t before_start = 0;  // requests issued before --start-at (not recorded)
  if (start_at != 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", start_at);
    h.settings["start_at"] = buf;
    if (!quiet)
      std::fprintf(stderr, "blkrr record: capture loaded; waiting for --start-at %s\n", buf);
    auto at = wait_for_start(**cap, start_at, before_start);
    if (!at) return at.error();
  }
  // The anchors: the recording starts here (at --start-at, as late as the wake-up was).
  const ClockPair anchor = read_clock_pair();
  h.real_anchor_ns = anchor.real_ns;
  h.mono_anchor_ns = anchor.mono_ns;
  TraceWriter::Options wopts;
  // zlib's run-length strategy on column-elided blocks: the cheapest
  // compression per request for ~8 bytes/request (docs/performance.md, record).
  wopts.rle = true;
  // Not atomic: a killed or crashed recording keeps every block so far under
  // its own name (the reader reports the missing trailer).
  wopts.atomic = false;
  auto w = TraceWriter::create(out, h, wopts);
  if (!w) return w.error().context("output not writable");

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  g_stop = 0;

  if (!quiet)
    std::fprintf(stderr, "blkrr record: recording %s to %s; Ctrl-C stops\n",
                 h.settings["devices"].c_str(), out.c_str());

  Tally tally;
  std::optional<Error> write_err;
  auto write_req = [&](const Request& r) {
    if (write_err) return;
    tally.add(r);
    if (auto st = w->append(r); !st) write_err = st.error();
  };
  // Disk time in user space: records wait kDiskTimeDelayNs for the requests
  // issued before their completion that complete later.
  const bool user_dt = (*cap)->disk_time_in_user_space();
  DiskTimeStream dts;
  auto on_req = [&](const Request& r) {
    if (start_at != 0 && r.issue_ns < h.mono_anchor_ns) {
      before_start++;
      return;
    }
    if (user_dt)
      dts.add(r);
    else
      write_req(r);
  };
  const uint64_t t0 = start_at != 0 ? h.mono_anchor_ns : clock_ns(CLOCK_MONOTONIC);
  uint64_t last_flush = t0;
  while (!g_stop && !write_err) {
    uint64_t now = clock_ns(CLOCK_MONOTONIC);
    if (duration_ns && now - t0 >= duration_ns) break;
    int timeout = 200;
    if (duration_ns)
      timeout = static_cast<int>(std::min<uint64_t>(200, (t0 + duration_ns - now) / 1'000'000 + 1));
    auto n = (*cap)->poll(timeout, on_req);
    if (!n) {
      write_err = n.error();
      break;
    }
    now = clock_ns(CLOCK_MONOTONIC);
    if (user_dt && now > kDiskTimeDelayNs) dts.release(now - kDiskTimeDelayNs, write_req);
    if (now - last_flush >= 1'000'000'000ull) {
      if (auto st = w->flush(); !st) write_err = st.error();
      last_flush = now;
    }
  }
  const double seconds = static_cast<double>(clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
  Status stopped = (*cap)->stop(on_req);
  dts.finish(write_req);
  Counters counters = (*cap)->counters();
  std::vector<DeviceBusy> busy_v = user_dt ? busy_from(dts) : device_busy_or_none(**cap);
  if (user_dt) counters["disk_time_in_user_space"] = 1;
  for (const auto& b : busy_v) {
    counters["device_busy_ns." + dev_to_string(b.disk)] = b.busy_ns;
    counters["device_completions." + dev_to_string(b.disk)] = b.requests;
  }
  counters["records_written"] = w->records_written();
  if (start_at != 0) counters["before_start_at_dropped"] = before_start;
  if (write_err) {
    uint64_t kept = w->records_written();
    (void)w->close(counters);  // may fail too (disk full): the flushed blocks stay readable
    return Error(write_err->message + "; the trace keeps what was flushed before (" +
                 std::to_string(kept) + " records or fewer, readable with 'blkrr dump')");
  }
  if (auto st = w->close(counters); !st) return st.error();
  if (!stopped) return stopped.error();
  if (!quiet) {
    std::error_code ec;
    uint64_t size = std::filesystem::file_size(out, ec);
    print_summary(tally, counters, busy_v, seconds, out, ec ? 0 : size);
  }
  return 0;
}

}  // namespace blkrr::cli
