#include "core/request_json.h"

#include "core/json_doc.h"
#include "core/version.h"

namespace blkrr {

nlohmann::json request_json(const Request& r, const RequestJsonContext& c) {
  using nlohmann::json;
  const bool issued = !(r.rec_flags & kRecIssueNotSeen);
  json j = {{"type", "request"}};
  j["start_ns"] = issued ? json(static_cast<int64_t>(r.issue_ns - c.origin_ns)) : json();
  j["issue_ns"] = issued ? json(r.issue_ns) : json();
  j["complete_ns"] = r.completed() ? json(r.complete_ns) : json();
  j["latency_ns"] = issued && r.completed() ? json(r.latency_ns()) : json();
  if (c.with_queue) j["queue_ns"] = c.queue_ns ? json(*c.queue_ns) : json();
  j["disk_time_ns"] = r.disk_time_ns;
  j["dev"] = dev_to_string(r.dev);
  j["part"] = dev_to_string(r.part ? r.part : r.dev);
  if (!c.device.empty()) j["device"] = c.device;
  j["sector"] = r.sector;
  j["bytes"] = r.bytes;
  j["op"] = std::string(op_name(r.op));
  j["flags"] = flags_to_string(r.flags);
  j["pid"] = r.tgid;
  j["tid"] = r.pid;
  j["comm"] = utf8_or_replace(r.comm_view());
  j["cgroup_id"] = id_string(r.cgroup_id);
  j["error"] = r.error;
  if (r.rec_flags) j["record_flags"] = rec_flags_to_string(r.rec_flags);
  return j;
}

nlohmann::json requests_header(std::string_view tool) {
  return {{"type", "header"},
          {"schema", schema_tag(kSchemaRequests)},
          {"tool", std::string(tool)},
          {"blkrr_version", version()}};
}

std::string json_line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace blkrr
