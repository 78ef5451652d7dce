#include "live/snoop_format.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/request_json.h"
#include "core/units.h"

namespace blkrr::live {

namespace {

constexpr int kTimeWidth = 10, kCommWidth = 14, kDeviceWidth = 9, kSectorWidth = 11,
              kBytesWidth = 7, kLatWidth = 7, kDtWidth = 6, kQueueWidth = 7, kPidWidth = 7;

// `v` with as many of `decimals` as fit in `width` (fewer for large values).
std::string fixed_fit(double v, int decimals, int width) {
  char buf[64];
  for (int d = decimals;; --d) {
    int n = std::snprintf(buf, sizeof buf, "%.*f", d, v);
    if (n <= width || d == 0) return buf;
  }
}

// Seconds since `base`, microseconds while they fit the column.
std::string secs(uint64_t t, uint64_t base) {
  uint64_t d = t >= base ? t - base : 0;
  return fixed_fit(static_cast<double>(d) / 1e9, 6, kTimeWidth);
}

// Milliseconds, microseconds while they fit `width`.
std::string ms(uint64_t ns, int width) {
  return fixed_fit(static_cast<double>(ns) / 1e6, 3, width);
}

bool issue_known(const Request& r) {
  return !(r.rec_flags & kRecIssueNotSeen);
}

}  // namespace

std::string snoop_header(const SnoopOptions& opt) {
  std::string h = strfmt("%*s ", kTimeWidth, "TIME(s)");
  if (opt.issue) h += strfmt("%*s ", kTimeWidth, "ISSUE(s)");
  h += strfmt("%-*s %*s %-*s ", kCommWidth, "COMM", kPidWidth, "PID", kDeviceWidth, "DEVICE");
  if (opt.majmin) h += strfmt("%4s %4s ", "MAJ", "MIN");
  h += strfmt("%s %*s %*s ", "D", kSectorWidth, "SECTOR", kBytesWidth, "BYTES");
  if (opt.queue) h += strfmt("%*s ", kQueueWidth, "QUE(ms)");
  h += strfmt("%*s %*s", kLatWidth, "LAT(ms)", kDtWidth, "DT(ms)");
  return h;
}

std::string snoop_line(const Request& r, const std::string& device, const SnoopOptions& opt,
                       std::optional<uint64_t> queue_ns) {
  std::string l =
      strfmt("%*s ", kTimeWidth, r.completed() ? secs(r.complete_ns, opt.base_ns).c_str() : "-");
  if (opt.issue)
    l += strfmt("%*s ", kTimeWidth, issue_known(r) ? secs(r.issue_ns, opt.base_ns).c_str() : "-");
  std::string comm(r.comm_view());
  if (comm.size() > static_cast<size_t>(kCommWidth)) comm.resize(kCommWidth);  // as biosnoop
  l += strfmt("%-*s %*u %-*s ", kCommWidth, comm.c_str(), kPidWidth, r.tgid, kDeviceWidth,
              device.c_str());
  if (opt.majmin) {
    DevT d = r.part ? r.part : r.dev;
    l += strfmt("%4u %4u ", dev_major(d), dev_minor(d));
  }
  l +=
      strfmt("%c %*" PRIu64 " %*u ", op_letter(r.op), kSectorWidth, r.sector, kBytesWidth, r.bytes);
  if (opt.queue)
    l += strfmt("%*s ", kQueueWidth, queue_ns ? ms(*queue_ns, kQueueWidth).c_str() : "-");
  l += strfmt("%*s ", kLatWidth,
              issue_known(r) && r.completed() ? ms(r.latency_ns(), kLatWidth).c_str() : "-");
  l += strfmt("%*s", kDtWidth, ms(r.disk_time_ns, kDtWidth).c_str());
  return l;
}

nlohmann::json snoop_json(const Request& r, const std::string& device, const SnoopOptions& opt,
                          std::optional<uint64_t> queue_ns) {
  RequestJsonContext c;
  c.origin_ns = opt.base_ns;
  c.device = device;
  c.with_queue = opt.queue;
  c.queue_ns = queue_ns;
  return request_json(r, c);
}

}  // namespace blkrr::live
