#include "cli/record_summary.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/device.h"
#include "core/units.h"
#include "live/top_model.h"

namespace blkrr::cli {

void Tally::add(const Request& r) {
  auto& d = by_dev[r.part ? r.part : r.dev];
  d.requests++;
  d.bytes += r.bytes;
  if (!r.completed()) d.not_seen++;
  by_op[r.op]++;
  requests++;
  bytes += r.bytes;
  first_issue = std::min(first_issue, r.issue_ns);
  if (r.completed()) last_complete = std::max(last_complete, r.complete_ns);
}

namespace {

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

}  // namespace

std::string progress_text(const Tally& t, const Counters& c, double seconds,
                          const OutputProgress& out) {
  uint64_t lost = 0;
  for (const auto& [name, n] : c)
    if (live::is_loss_counter(name)) lost += n;
  std::string line = strfmt("recording: %s, %" PRIu64 " requests, %s, %" PRIu64 " lost; %s %s",
                            fmt_elapsed(seconds).c_str(), t.requests,
                            fmt_bytes(static_cast<double>(t.bytes)).c_str(), lost, out.path.c_str(),
                            fmt_bytes(static_cast<double>(out.bytes)).c_str());
  if (out.rotating)
    line += strfmt(", file %" PRIu64 ", %s written, %s on disk", out.files,
                   fmt_bytes(static_cast<double>(out.total_bytes)).c_str(),
                   fmt_bytes(static_cast<double>(out.on_disk)).c_str());
  return line + out.extra;
}

std::string drops_text(const Counters& c, bool verbose) {
  std::string s;
  for (const char* name : kDropCounters) {
    auto it = c.find(name);
    uint64_t n = it == c.end() ? 0 : it->second;
    if (n || verbose) s += strfmt(" %s=%" PRIu64, name, n);
  }
  auto noted = [&](const char* name, const char* why) {
    if (auto it = c.find(name); it != c.end() && it->second)
      s += strfmt(" %s=%" PRIu64 " (%s)", name, it->second, why);
  };
  noted("own_io_left_out", "the recorder's own writes");
  noted("not_kept_min_free", "writing paused by --min-free");
  noted("fault_skipped_completions", "injected");
  return "drops and anomalies:" + (s.empty() ? std::string(" none") : s);
}

void print_summary(FILE* to, const Tally& t, const Counters& c, const std::vector<DeviceBusy>& busy,
                   double seconds, const std::string& path, uint64_t file_bytes, bool verbose) {
  DeviceNamer namer;
  std::fprintf(to, "recorded %" PRIu64 " requests in %.1f s to %s\n", t.requests, seconds,
               path.c_str());
  std::fprintf(to, "%-12s %-8s %10s %14s %12s %7s\n", "DEVICE", "MAJ:MIN", "REQUESTS", "BYTES",
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
      std::fprintf(to, "%-12s %-8s %10" PRIu64 " %14" PRIu64 " %12.1f %6.1f%%\n",
                   namer.name(dev).c_str(), dev_to_string(dev).c_str(), s.requests, s.bytes,
                   busy_ms, seconds > 0 ? busy_ms / 10.0 / seconds : 0.0);
    else
      std::fprintf(to, "%-12s %-8s %10" PRIu64 " %14" PRIu64 " %12s %7s\n", namer.name(dev).c_str(),
                   dev_to_string(dev).c_str(), s.requests, s.bytes, "-", "-");
  }
  std::fprintf(to, "operations:");
  for (const auto& [op, n] : t.by_op)
    std::fprintf(to, " %s %" PRIu64, std::string(op_name(op)).c_str(), n);
  std::fprintf(to, "\n%s", drops_text(c, verbose).c_str());
  std::fprintf(
      to, "\nfile: %" PRIu64 " bytes, %.2f bytes/request\n", file_bytes,
      t.requests ? static_cast<double>(file_bytes) / static_cast<double>(t.requests) : 0.0);
}

}  // namespace blkrr::cli
