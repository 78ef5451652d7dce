#include "live/snoop_format.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/request_json.h"

namespace blkrr::live {

namespace {

std::string secs(uint64_t t, uint64_t base) {
  char buf[32];
  uint64_t d = t >= base ? t - base : 0;
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%06" PRIu64, d / uint64_t{1000000000},
                (d % uint64_t{1000000000}) / 1000);
  return buf;
}

std::string ms3(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, ns / uint64_t{1000000},
                (ns % uint64_t{1000000}) / 1000);
  return buf;
}

bool issue_known(const Request& r) {
  return !(r.rec_flags & kRecIssueNotSeen);
}

}  // namespace

std::string snoop_header(const SnoopOptions& opt) {
  char buf[256];
  std::string h = "     TIME(s) ";
  if (opt.start) h += "    START(s) ";
  std::snprintf(buf, sizeof buf, "%-16s %7s %-10s ", "COMM", "PID", "DEVICE");
  h += buf;
  if (opt.majmin) {
    std::snprintf(buf, sizeof buf, "%4s %4s ", "MAJ", "MIN");
    h += buf;
  }
  std::snprintf(buf, sizeof buf, "%s %12s %8s ", "D", "SECTOR", "BYTES");
  h += buf;
  if (opt.queue) {
    std::snprintf(buf, sizeof buf, "%9s ", "QUE(ms)");
    h += buf;
  }
  std::snprintf(buf, sizeof buf, "%9s %9s", "LAT(ms)", "DTIME(ms)");
  h += buf;
  return h;
}

std::string snoop_line(const Request& r, const std::string& device, const SnoopOptions& opt,
                       std::optional<uint64_t> queue_ns) {
  char buf[256];
  std::string l;
  auto col = [&](const std::string& s, int w) {
    std::snprintf(buf, sizeof buf, "%*s ", w, s.c_str());
    l += buf;
  };
  col(r.completed() ? secs(r.complete_ns, opt.base_ns) : "-", 12);
  if (opt.start) col(issue_known(r) ? secs(r.issue_ns, opt.base_ns) : "-", 12);
  std::string comm(r.comm_view());
  std::snprintf(buf, sizeof buf, "%-16s %7u %-10s ", comm.c_str(), r.tgid, device.c_str());
  l += buf;
  if (opt.majmin) {
    DevT d = r.part ? r.part : r.dev;
    std::snprintf(buf, sizeof buf, "%4u %4u ", dev_major(d), dev_minor(d));
    l += buf;
  }
  std::snprintf(buf, sizeof buf, "%c %12" PRIu64 " %8u ", op_letter(r.op), r.sector, r.bytes);
  l += buf;
  if (opt.queue) col(queue_ns ? ms3(*queue_ns) : "-", 9);
  col(issue_known(r) && r.completed() ? ms3(r.latency_ns()) : "-", 9);
  std::snprintf(buf, sizeof buf, "%9s", ms3(r.disk_time_ns).c_str());
  l += buf;
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
