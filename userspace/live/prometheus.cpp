#include "live/prometheus.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include <sys/utsname.h>

#include "core/version.h"

namespace blkrr::live {

std::string escape_label(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string_view direction_label(Op op) {
  switch (op) {
    case Op::kRead:
      return "read";
    case Op::kWrite:
    case Op::kWriteZeroes:
    case Op::kZoneAppend:
      return "write";
    case Op::kFlush:
      return "flush";
    case Op::kDiscard:
    case Op::kSecureErase:
      return "discard";
    default:
      return "other";
  }
}

std::string ns_to_seconds(uint64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%09" PRIu64, ns / uint64_t{1000000000},
                ns % uint64_t{1000000000});
  return buf;
}

void MetricsAccumulator::add(const Snapshot& s) {
  ++intervals_;
  last_wall_ns_ = s.wall_ns;
  for (const auto& e : s.deltas) {
    const AggKey& k = e.key;
    std::string device = lk_.device_name ? lk_.device_name(k.dev) : dev_to_string(k.dev);
    std::string who;
    if (opt_.by_cgroup) {
      who = lk_.cgroup_name ? lk_.cgroup_name(k.cgroup_id) : std::to_string(k.cgroup_id);
    } else {
      auto end = std::find(k.comm.begin(), k.comm.end(), '\0');
      who.assign(k.comm.begin(), end);
    }
    std::string dir(direction_label(k.dir));
    Key key{device, dir, who, opt_.pid_label ? std::to_string(k.pid) : std::string()};
    AggValue& v = series_[key];
    v.requests += e.value.requests;
    v.bytes += e.value.bytes;
    v.disk_time_ns += e.value.disk_time_ns;
    v.latency_ns += e.value.latency_ns;
    AggValue& h = latency_[{device, dir}];
    h.requests += e.value.requests;
    h.latency_ns += e.value.latency_ns;
    for (size_t i = 0; i < h.latency_hist.size(); ++i) h.latency_hist[i] += e.value.latency_hist[i];
  }
  for (const auto& d : s.devices) {
    Dev& x = devices_[d.name];
    x.busy_ns += d.busy_ns;
    x.requests += d.requests;
    x.in_flight = d.pending;
    if (d.io_ticks_ms) {
      x.io_ticks_ms += *d.io_ticks_ms;
      x.has_ticks = true;
    }
  }
  for (const auto& [name, n] : s.lost) lost_[name] += n;
}

MetricsAccumulator::MetricsAccumulator(MetricsOptions opt, Lookups lookups)
    : opt_(opt), lk_(std::move(lookups)) {
  for (auto name : loss_counter_names()) lost_.emplace(name, 0);
}

std::string MetricsAccumulator::exposition() const {
  std::string out;
  const char* who_label = opt_.by_cgroup ? "cgroup" : "comm";
  auto labels = [&](const Key& k) {
    std::string l = "{device=\"" + escape_label(std::get<0>(k)) + "\",direction=\"" +
                    escape_label(std::get<1>(k)) + "\"," + who_label + "=\"" +
                    escape_label(std::get<2>(k)) + "\"";
    if (opt_.pid_label) l += ",pid=\"" + std::get<3>(k) + "\"";
    return l + "}";
  };
  auto family = [&](const char* name, const char* type, const char* help, auto value) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    for (const auto& [k, v] : series_) out += name + labels(k) + " " + value(v) + "\n";
  };
  family("blkrr_disk_time_seconds_total", "counter",
         "Adaptive disk time charged to the tasks (busy time of the device, split by task).",
         [](const AggValue& v) { return ns_to_seconds(v.disk_time_ns); });
  family("blkrr_io_bytes_total", "counter", "Bytes of completed requests.",
         [](const AggValue& v) { return std::to_string(v.bytes); });
  family("blkrr_io_requests_total", "counter", "Completed requests.",
         [](const AggValue& v) { return std::to_string(v.requests); });
  family("blkrr_io_latency_seconds_total", "counter",
         "Sum of issue-to-completion latencies (overlapping requests counted each).",
         [](const AggValue& v) { return ns_to_seconds(v.latency_ns); });

  auto device_family = [&](const char* name, const char* type, const char* help, auto value,
                           bool ticks_only) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    for (const auto& [dev, d] : devices_) {
      if (ticks_only && !d.has_ticks) continue;
      out += std::string(name) + "{device=\"" + escape_label(dev) + "\"} " + value(d) + "\n";
    }
  };
  device_family(
      "blkrr_device_busy_seconds_total", "counter",
      "Time the whole disk had requests in flight (adaptive disk time).",
      [](const Dev& d) { return ns_to_seconds(d.busy_ns); }, false);
  device_family(
      "blkrr_device_requests_total", "counter", "Completed requests on the whole disk.",
      [](const Dev& d) { return std::to_string(d.requests); }, false);
  device_family(
      "blkrr_device_in_flight", "gauge", "Requests in flight at the last refresh.",
      [](const Dev& d) { return std::to_string(d.in_flight); }, false);
  device_family(
      "blkrr_device_io_ticks_seconds_total", "counter",
      "io_ticks of /proc/diskstats while blkrr ran (jiffy granularity).",
      [](const Dev& d) { return ns_to_seconds(d.io_ticks_ms * uint64_t{1000000}); }, true);

  latency_histogram(out);
  build_info(out);
  out +=
      "# HELP blkrr_capture_lost_total Events or completions the capture lost, by reason.\n"
      "# TYPE blkrr_capture_lost_total counter\n";
  for (const auto& [name, n] : lost_)
    out += "blkrr_capture_lost_total{reason=\"" + escape_label(name) + "\"} " + std::to_string(n) +
           "\n";
  out +=
      "# HELP blkrr_top_refreshes_total Refreshes of the counters since start.\n"
      "# TYPE blkrr_top_refreshes_total counter\n"
      "blkrr_top_refreshes_total " +
      std::to_string(intervals_) +
      "\n"
      "# HELP blkrr_top_last_refresh_timestamp_seconds Wall-clock time of the last refresh.\n"
      "# TYPE blkrr_top_last_refresh_timestamp_seconds gauge\n"
      "blkrr_top_last_refresh_timestamp_seconds " +
      ns_to_seconds(last_wall_ns_) + "\n";
  return out;
}

// Per device and direction, cumulative buckets at 1, 2, 4 ... 2^22 us and +Inf.
void MetricsAccumulator::latency_histogram(std::string& out) const {
  out +=
      "# HELP blkrr_request_latency_seconds Issue-to-completion latency of completed requests "
      "(buckets double from 1 us).\n"
      "# TYPE blkrr_request_latency_seconds histogram\n";
  for (const auto& [k, h] : latency_) {
    std::string l = "device=\"" + escape_label(k.first) + "\",direction=\"" + k.second + "\"";
    uint64_t cum = 0;
    for (size_t i = 0; i + 1 < h.latency_hist.size(); ++i) {
      cum += h.latency_hist[i];
      char le[32];
      std::snprintf(le, sizeof le, "%.7g", static_cast<double>(uint64_t{1} << i) * 1e-6);
      out += "blkrr_request_latency_seconds_bucket{" + l + ",le=\"" + le + "\"} " +
             std::to_string(cum) + "\n";
    }
    cum += h.latency_hist.back();
    out +=
        "blkrr_request_latency_seconds_bucket{" + l + ",le=\"+Inf\"} " + std::to_string(cum) + "\n";
    out += "blkrr_request_latency_seconds_sum{" + l + "} " + ns_to_seconds(h.latency_ns) + "\n";
    out += "blkrr_request_latency_seconds_count{" + l + "} " + std::to_string(cum) + "\n";
  }
}

void MetricsAccumulator::build_info(std::string& out) {
  struct utsname u {};
  std::string kernel = ::uname(&u) == 0 ? u.release : "unknown";
  out +=
      "# HELP blkrr_build_info The blkrr version and the kernel it runs on (value 1).\n"
      "# TYPE blkrr_build_info gauge\n"
      "blkrr_build_info{version=\"" +
      escape_label(version()) + "\",kernel=\"" + escape_label(kernel) + "\"} 1\n";
}

}  // namespace blkrr::live
