#include "core/trace_header_json.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "core/args.h"

namespace blkrr {

namespace {

// "MAJOR:MINOR" within what the kernel's dev_t holds (12 and 20 bits).
DevT parse_dev_string(const std::string& s) {
  auto c = s.find(':');
  if (c == std::string::npos) return 0;
  auto major = parse_u64(std::string_view(s).substr(0, c));
  auto minor = parse_u64(std::string_view(s).substr(c + 1));
  if (!major || !minor || *major > 4095 || *minor > 1048575)
    throw std::runtime_error("device '" + s + "' is not MAJOR:MINOR within 4095:1048575");
  return make_dev(static_cast<uint32_t>(*major), static_cast<uint32_t>(*minor));
}

// An unsigned integer member, `def` when absent. nlohmann's value<>() would
// convert a float or a negative number without a word (and a float beyond
// the type's range is undefined behaviour): anything but an integer that
// fits is an error.
template <typename T>
T uint_member(const nlohmann::json& j, const char* key, T def) {
  auto it = j.find(key);
  if (it == j.end()) return def;
  if (it->is_number_unsigned()) {
    const auto v = it->get<uint64_t>();
    if (v <= std::numeric_limits<T>::max()) return static_cast<T>(v);
  }
  throw std::runtime_error(std::string("'") + key + "' is " + it->dump().substr(0, 40) +
                           ", not an integer in 0.." +
                           std::to_string(std::numeric_limits<T>::max()));
}

}  // namespace

nlohmann::json device_info_json(const DeviceInfo& d) {
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& p : d.partitions)
    parts.push_back({{"dev", dev_to_string(p.dev)},
                     {"name", p.name},
                     {"start_sector", p.start_sector},
                     {"nr_sectors", p.nr_sectors}});
  return {{"dev", dev_to_string(d.dev)},
          {"name", d.name},
          {"size_bytes", d.size_bytes},
          {"logical_block_size", d.logical_block_size},
          {"physical_block_size", d.physical_block_size},
          {"model", d.model},
          {"scheduler", d.scheduler},
          {"partitions", parts}};
}

nlohmann::json header_to_json(const TraceHeader& h) {
  nlohmann::json devs = nlohmann::json::array();
  for (const auto& d : h.devices) devs.push_back(device_info_json(d));
  nlohmann::json j = {{"format", "blkrr-trace"},
                      {"host", h.host},
                      {"kernel_release", h.kernel_release},
                      {"tool_version", h.tool_version},
                      {"command_line", h.command_line},
                      {"clock", "CLOCK_MONOTONIC"},
                      {"mono_anchor_ns", h.mono_anchor_ns},
                      {"real_anchor_ns", h.real_anchor_ns},
                      {"devices", devs},
                      {"settings", h.settings}};
  if (!h.recording_id.empty())
    j["recording"] = {
        {"id", h.recording_id}, {"piece", h.piece}, {"piece_start_ns", h.piece_start_ns}};
  return j;
}

Result<TraceHeader> header_from_json(const nlohmann::json& j) {
  try {
    TraceHeader h;
    h.host = j.value("host", "");
    h.kernel_release = j.value("kernel_release", "");
    h.tool_version = j.value("tool_version", "");
    h.command_line = j.value("command_line", "");
    h.mono_anchor_ns = uint_member(j, "mono_anchor_ns", uint64_t{0});
    h.real_anchor_ns = uint_member(j, "real_anchor_ns", uint64_t{0});
    for (const auto& d : j.value("devices", nlohmann::json::array())) {
      DeviceInfo di;
      di.dev = parse_dev_string(d.value("dev", ""));
      di.name = d.value("name", "");
      di.size_bytes = uint_member(d, "size_bytes", uint64_t{0});
      di.logical_block_size = uint_member(d, "logical_block_size", 512u);
      di.physical_block_size = uint_member(d, "physical_block_size", 512u);
      di.model = d.value("model", "");
      di.scheduler = d.value("scheduler", "");
      for (const auto& p : d.value("partitions", nlohmann::json::array())) {
        PartitionInfo pi;
        pi.dev = parse_dev_string(p.value("dev", ""));
        pi.name = p.value("name", "");
        pi.start_sector = uint_member(p, "start_sector", uint64_t{0});
        pi.nr_sectors = uint_member(p, "nr_sectors", uint64_t{0});
        di.partitions.push_back(pi);
      }
      h.devices.push_back(std::move(di));
    }
    if (j.contains("settings"))
      for (const auto& [k, v] : j["settings"].items())
        h.settings[k] = v.is_string() ? v.get<std::string>() : v.dump();
    if (auto it = j.find("recording"); it != j.end() && it->is_object()) {
      h.recording_id = it->value("id", "");
      if (h.recording_id.empty() || h.recording_id.size() > 64)
        throw std::runtime_error("'recording.id' must be 1 to 64 characters");
      h.piece = uint_member(*it, "piece", uint64_t{0});
      h.piece_start_ns = uint_member(*it, "piece_start_ns", uint64_t{0});
    }
    return h;
  } catch (const std::exception& e) {
    return Error(std::string("header at offset 16 is malformed: ") + e.what() +
                 " (not written by blkrr?)");
  }
}

}  // namespace blkrr
