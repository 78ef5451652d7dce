#include "validate/pairing.h"

#include <ctime>

#include "core/args.h"

namespace blkrr::validate {
namespace {

std::optional<std::string> info_value(const std::string& line, const std::string& key) {
  const std::string prefix = "INFO: " + key + " ";
  if (line.rfind(prefix, 0) != 0) return std::nullopt;
  return line.substr(prefix.size());
}

// "2026-11-27 08:40:01 UTC"
std::string utc_text(uint64_t unix_ns) {
  std::time_t t = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

bool trace_has_device(const TraceExtent& t, DevT dev) {
  for (const auto& d : t.devices) {
    if (d.dev == dev) return true;
    for (const auto& p : d.partitions)
      if (p.dev == dev) return true;
  }
  return false;
}

std::string trace_devices_text(const TraceExtent& t) {
  std::string s;
  for (const auto& d : t.devices)
    s += (s.empty() ? "" : ", ") + d.name + " (" + dev_to_string(d.dev) + ")";
  return s;
}

}  // namespace

ReplayOrigin origin_from_info(const std::vector<std::string>& info_lines) {
  ReplayOrigin o;
  for (const auto& l : info_lines) {
    if (auto v = info_value(l, "host")) {
      o.host = v->substr(0, v->find(' '));
    } else if (auto d = info_value(l, "device_number")) {
      size_t c = d->find(':');
      auto ma = parse_u64(d->substr(0, c)), mi = parse_u64(d->substr(c + 1));
      if (c != std::string::npos && ma && mi && *ma < 4096 && *mi < (1u << 20))
        o.device = make_dev(static_cast<uint32_t>(*ma), static_cast<uint32_t>(*mi));
    } else if (auto t = info_value(l, "opened_unix_ns")) {
      if (auto n = parse_u64(*t)) o.opened_unix_ns = *n;
    } else if (auto dt = info_value(l, "device")) {
      o.device_text = *dt;
    }
  }
  return o;
}

Status check_pairing(const ReplayOrigin& r, uint64_t replay_span_ns, const TraceExtent& t,
                     bool device_chosen) {
  // Device numbers mean something only on one host.
  const bool same_host = !r.host.empty() && r.host == t.host;
  if (!device_chosen && same_host && r.device && !t.devices.empty() &&
      !trace_has_device(t, *r.device))
    return Error(ErrorKind::kUsage,
                 "the trace is of another device: it records " + trace_devices_text(t) + " on " +
                     t.host + ", the replay ran on " + dev_to_string(*r.device) +
                     (r.device_text.empty() ? "" : " (" + r.device_text + ")") +
                     "; give the trace recorded on the replay's device while it ran");
  if (!r.opened_unix_ns || !t.first_unix_ns || !t.last_unix_ns) return {};
  const uint64_t run_from = *r.opened_unix_ns, run_to = run_from + replay_span_ns;
  const bool before = *t.last_unix_ns + kPairingSlackNs < run_from;
  const bool after = *t.first_unix_ns > run_to + kPairingSlackNs;
  if (!before && !after) return {};
  return Error(ErrorKind::kUsage,
               std::string("the trace was recorded ") + (before ? "before" : "after") +
                   " the replay: its requests span " + utc_text(*t.first_unix_ns) + " to " +
                   utc_text(*t.last_unix_ns) + ", the replay ran from " + utc_text(run_from) +
                   " to " + utc_text(run_to) +
                   "; record the device while the replay runs (or use replay --validate)");
}

}  // namespace blkrr::validate
