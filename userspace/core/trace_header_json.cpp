#include "core/trace_header_json.h"

#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

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

// A text member, `def` when absent; anything but a string is an error.
std::string str_member(const nlohmann::json& j, const char* key, const char* def = "") {
  auto it = j.find(key);
  if (it == j.end()) return def;
  if (!it->is_string())
    throw std::runtime_error(std::string("'") + key + "' is " + it->dump().substr(0, 40) +
                             ", not a string");
  return it->get<std::string>();
}

// An array (of objects) or object member; absent: empty. Another type is an error.
const nlohmann::json& typed_member(const nlohmann::json& j, const char* key, bool array) {
  static const nlohmann::json kEmptyArray = nlohmann::json::array();
  static const nlohmann::json kEmptyObject = nlohmann::json::object();
  auto it = j.find(key);
  if (it == j.end()) return array ? kEmptyArray : kEmptyObject;
  if (array ? !it->is_array() : !it->is_object())
    throw std::runtime_error(std::string("'") + key + "' is " + it->dump().substr(0, 40) +
                             (array ? ", not an array" : ", not an object"));
  if (array)
    for (const auto& e : *it)
      if (!e.is_object())
        throw std::runtime_error(std::string("an entry of '") + key + "' is " +
                                 e.dump().substr(0, 40) + ", not an object");
  return *it;
}

constexpr const char* kFormatName = "blkrr-trace";
constexpr const char* kClockName = "CLOCK_MONOTONIC";

// The header says what it is and which clock its times are on: only a
// blkrr trace on CLOCK_MONOTONIC is read (an absent key: an older writer).
void check_format_and_clock(const nlohmann::json& j) {
  const std::string format = str_member(j, "format", kFormatName);
  if (format != kFormatName)
    throw std::runtime_error("'format' is \"" + format.substr(0, 40) + "\", not \"" + kFormatName +
                             "\"");
  const std::string clock = str_member(j, "clock", kClockName);
  if (clock == kClockName) return;
  static const std::set<std::string> kOtherClocks = {
      "CLOCK_REALTIME", "CLOCK_MONOTONIC_RAW",    "CLOCK_BOOTTIME",
      "CLOCK_TAI",      "CLOCK_MONOTONIC_COARSE", "CLOCK_REALTIME_COARSE"};
  if (kOtherClocks.count(clock))
    throw std::runtime_error("'clock' is " + clock + ": blkrr reads times on " + kClockName +
                             " only");
  throw std::runtime_error("'clock' is \"" + clock.substr(0, 40) + "\", which is not a clock (" +
                           kClockName + ")");
}

}  // namespace

Result<nlohmann::json> parse_json_unique_keys(const std::string& text) {
  std::vector<std::set<std::string>> open;
  std::string dup;
  using Event = nlohmann::json::parse_event_t;
  nlohmann::json::parser_callback_t cb = [&](int, Event ev, nlohmann::json& parsed) {
    if (ev == Event::object_start) open.emplace_back();
    if (ev == Event::object_end && !open.empty()) open.pop_back();
    if (ev == Event::key && !open.empty() &&
        !open.back().insert(parsed.get<std::string>()).second && dup.empty())
      dup = parsed.get<std::string>();
    return true;
  };
  auto j = nlohmann::json::parse(text, cb, false);
  if (j.is_discarded() || !j.is_object()) return Error(ErrorKind::kBadInput, "not valid JSON");
  if (!dup.empty())
    return Error(ErrorKind::kBadInput, "key '" + dup.substr(0, 40) + "' appears twice");
  return j;
}

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
    check_format_and_clock(j);
    h.host = str_member(j, "host");
    h.kernel_release = str_member(j, "kernel_release");
    h.tool_version = str_member(j, "tool_version");
    h.command_line = str_member(j, "command_line");
    h.mono_anchor_ns = uint_member(j, "mono_anchor_ns", uint64_t{0});
    h.real_anchor_ns = uint_member(j, "real_anchor_ns", uint64_t{0});
    for (const auto& d : typed_member(j, "devices", true)) {
      DeviceInfo di;
      di.dev = parse_dev_string(str_member(d, "dev"));
      di.name = str_member(d, "name");
      di.size_bytes = uint_member(d, "size_bytes", uint64_t{0});
      di.logical_block_size = uint_member(d, "logical_block_size", 512u);
      di.physical_block_size = uint_member(d, "physical_block_size", 512u);
      di.model = str_member(d, "model");
      di.scheduler = str_member(d, "scheduler");
      for (const auto& p : typed_member(d, "partitions", true)) {
        PartitionInfo pi;
        pi.dev = parse_dev_string(str_member(p, "dev"));
        pi.name = str_member(p, "name");
        pi.start_sector = uint_member(p, "start_sector", uint64_t{0});
        pi.nr_sectors = uint_member(p, "nr_sectors", uint64_t{0});
        di.partitions.push_back(pi);
      }
      h.devices.push_back(std::move(di));
    }
    for (const auto& [k, v] : typed_member(j, "settings", false).items())
      h.settings[k] = v.is_string() ? v.get<std::string>() : v.dump();
    if (auto it = j.find("recording"); it != j.end()) {
      if (!it->is_object()) throw std::runtime_error("'recording' is not an object");
      h.recording_id = str_member(*it, "id");
      if (h.recording_id.empty() || h.recording_id.size() > 64)
        throw std::runtime_error("'recording.id' must be 1 to 64 characters");
      h.piece = uint_member(*it, "piece", uint64_t{0});
      h.piece_start_ns = uint_member(*it, "piece_start_ns", uint64_t{0});
    }
    return h;
  } catch (const std::exception& e) {
    return Error(ErrorKind::kBadInput, std::string("header at offset 16 is malformed: ") +
                                           e.what() + " (not written by blkrr?)");
  }
}

Result<Counters> trailer_counters(const std::string& text) {
  auto j = parse_json_unique_keys(text);
  if (!j) return j.error();
  Counters c;
  for (const auto& [k, v] : j->items()) {
    if (!v.is_number_unsigned())
      return Error(
          ErrorKind::kBadInput,
          "counter '" + k.substr(0, 40) + "' is " + v.dump().substr(0, 40) +
              (v.is_number() ? ": counters cannot be negative or fractional" : ", not a count"));
    c[k] = v.get<uint64_t>();
  }
  return c;
}

}  // namespace blkrr
