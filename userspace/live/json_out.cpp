#include "live/json_out.h"

#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "core/json_doc.h"

namespace blkrr::live {

namespace {

nlohmann::json value_json(const AggValue& v, uint64_t interval_ns) {
  return {{"requests", v.requests},
          {"bytes", v.bytes},
          {"disk_time_ns", v.disk_time_ns},
          {"io_percent", percent_of(v.disk_time_ns, interval_ns)},
          {"latency_ns", v.latency_ns}};
}

}  // namespace

std::string iso_time(uint64_t wall_ns) {
  time_t secs = static_cast<time_t>(wall_ns / uint64_t{1000000000});
  struct tm tm {};
  gmtime_r(&secs, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03" PRIu64 "Z", (wall_ns / uint64_t{1000000}) % 1000);
  return buf;
}

nlohmann::json snapshot_json(const Snapshot& s) {
  nlohmann::json j;
  j["schema"] = schema_tag(kSchemaTop);
  j["seq"] = s.seq;
  j["time"] = iso_time(s.wall_ns);
  j["timestamp_ns"] = s.wall_ns;
  j["interval_s"] = static_cast<double>(s.interval_ns) / 1e9;
  j["interval_ns"] = s.interval_ns;
  if (s.loadavg)
    j["loadavg"] = {(*s.loadavg)[0], (*s.loadavg)[1], (*s.loadavg)[2]};
  else
    j["loadavg"] = nullptr;
  j["group_by"] = std::string(group_by_name(s.by));
  j["totals"] = {{"read", value_json(s.read, s.interval_ns)},
                 {"write", value_json(s.write, s.interval_ns)},
                 {"all", value_json(s.total, s.interval_ns)}};
  auto devs = nlohmann::json::array();
  for (const auto& d : s.devices) {
    nlohmann::json o = {{"device", d.name},           {"dev", dev_to_string(d.disk)},
                        {"busy_ns", d.busy_ns},       {"util_percent", d.util_pct},
                        {"requests", d.requests},     {"in_flight", d.pending},
                        {"read_bytes", d.read_bytes}, {"write_bytes", d.write_bytes}};
    o["util_clamped"] = d.util_clamped;
    o["io_ticks_ns"] = d.io_ticks_ms ? nlohmann::json(*d.io_ticks_ms * uint64_t{1000000})
                                     : nlohmann::json(nullptr);
    devs.push_back(std::move(o));
  }
  j["devices"] = std::move(devs);
  auto rows = nlohmann::json::array();
  for (const auto& r : s.rows) {
    nlohmann::json o = value_json(r.v, s.interval_ns);
    if (s.by == GroupBy::kPid) {
      o["pid"] = r.pid;
      o["uid"] = r.proc ? nlohmann::json(r.proc->uid) : nlohmann::json(nullptr);
      o["ppid"] = r.proc ? nlohmann::json(r.proc->ppid) : nlohmann::json(nullptr);
      o["comm"] = r.comm;
      o["cgroup_id"] = id_string(r.cgroup_id);
    } else if (s.by == GroupBy::kComm) {
      o["comm"] = r.comm;
    } else {
      o["cgroup"] = r.comm;
      o["cgroup_id"] = id_string(r.cgroup_id);
    }
    o["tasks"] = r.tasks;
    o["device"] = r.device;
    o["dev"] = dev_to_string(r.dev);
    o["direction"] = std::string(op_name(r.dir));
    rows.push_back(std::move(o));
  }
  j["rows"] = std::move(rows);
  j["tracked_keys"] = s.tracked_keys;
  j["released_keys"] = s.released_keys;
  j["lost"] = s.lost;
  j["capture_features"] = s.capture_features;
  j["counters"] = s.counters;
  return j;
}

}  // namespace blkrr::live
