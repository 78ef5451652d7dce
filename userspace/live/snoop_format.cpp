#include "live/snoop_format.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

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
  std::string h;
  if (opt.start) h += "       START ";
  if (opt.end) h += "         END ";
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
  std::snprintf(buf, sizeof buf, "%9s %10s", "LAT(ms)", "DTIME(\xc2\xb5s)");
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
  if (opt.start) col(issue_known(r) ? secs(r.issue_ns, opt.base_ns) : "-", 12);
  if (opt.end) col(r.completed() ? secs(r.complete_ns, opt.base_ns) : "-", 12);
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
  std::snprintf(buf, sizeof buf, "%10" PRIu64, r.disk_time_ns / 1000);
  l += buf;
  return l;
}

nlohmann::json snoop_json(const Request& r, const std::string& device, const SnoopOptions& opt,
                          std::optional<uint64_t> queue_ns) {
  DevT d = r.part ? r.part : r.dev;
  nlohmann::json j = {{"comm", std::string(r.comm_view())},
                      {"pid", r.tgid},
                      {"tid", r.pid},
                      {"cgroup_id", r.cgroup_id},
                      {"device", device},
                      {"major", dev_major(d)},
                      {"minor", dev_minor(d)},
                      {"disk", dev_to_string(r.dev)},
                      {"dir", std::string(1, op_letter(r.op))},
                      {"op", std::string(op_name(r.op))},
                      {"rwbs", rwbs(r.op, r.flags)},
                      {"sector", r.sector},
                      {"bytes", r.bytes},
                      {"disk_time_ns", r.disk_time_ns},
                      {"error", r.error}};
  if (issue_known(r)) {
    j["start_ns"] = r.issue_ns;
    j["start_s"] = static_cast<double>(r.issue_ns - std::min(r.issue_ns, opt.base_ns)) / 1e9;
  }
  if (r.completed()) {
    j["end_ns"] = r.complete_ns;
    j["end_s"] = static_cast<double>(r.complete_ns - std::min(r.complete_ns, opt.base_ns)) / 1e9;
  }
  if (issue_known(r) && r.completed()) j["latency_ns"] = r.latency_ns();
  if (opt.queue) j["queue_ns"] = queue_ns ? nlohmann::json(*queue_ns) : nlohmann::json(nullptr);
  if (r.rec_flags) j["record_flags"] = rec_flags_to_string(r.rec_flags);
  return j;
}

}  // namespace blkrr::live
