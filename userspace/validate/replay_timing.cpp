#include "validate/replay_timing.h"

#include <cmath>
#include <cstdio>
#include <string_view>

#include <nlohmann/json.hpp>

namespace blkrr::validate {
namespace {

constexpr std::string_view kPrefix = "INFO: settings ";
constexpr size_t kMaxSettingsLine = 1 << 16;

Status read_fields(const nlohmann::json& j, ReplayTiming& t) {
  auto number = [&](const char* k, double& out) -> Status {
    if (!j.contains(k) || j[k].is_null()) return {};
    if (!j[k].is_number())
      return Error(ErrorKind::kBadInput, std::string("'") + k + "' is not a number");
    out = j[k].get<double>();
    if (!std::isfinite(out))
      return Error(ErrorKind::kBadInput, std::string("'") + k + "' is not finite");
    return {};
  };
  if (j.contains("timing")) {
    if (!j["timing"].is_string()) return Error(ErrorKind::kBadInput, "'timing' is not a string");
    const std::string m = j["timing"].get<std::string>();
    if (m != "timestamp" && m != "fullspeed")
      return Error(ErrorKind::kBadInput,
                   "'timing' is '" + m + "', expected timestamp or fullspeed");
    t.fullspeed = m == "fullspeed";
  }
  double speedup = 1.0, start_s = 0, pid = 0, start_at = 0;
  BLKRR_TRY(number("speedup", speedup));
  BLKRR_TRY(number("start_s", start_s));
  BLKRR_TRY(number("pid", pid));
  BLKRR_TRY(number("start_at", start_at));
  if (speedup <= 0)
    return Error(ErrorKind::kBadInput,
                 "'speedup' is " + std::to_string(speedup) + ", not positive");
  if (start_s < 0 || start_s > 1e9) return Error(ErrorKind::kBadInput, "'start_s' is out of range");
  if (pid < 0 || pid > 4294967295.0 || pid != std::floor(pid))
    return Error(ErrorKind::kBadInput, "'pid' is not a process id");
  t.speedup = speedup;
  t.window_start_ns = static_cast<uint64_t>(std::llround(start_s * 1e9));
  t.pid = static_cast<uint32_t>(pid);
  if (j.contains("start_at") && !j["start_at"].is_null()) t.start_at_unix = start_at;
  return {};
}

}  // namespace

int64_t ReplayTiming::submit_ns(int64_t orig_start_ns, int64_t delay_ns) const {
  if (!known) return orig_start_ns + delay_ns;
  if (fullspeed) return delay_ns;
  const int64_t start = static_cast<int64_t>(window_start_ns);
  const int64_t rel = orig_start_ns > start ? orig_start_ns - start : 0;
  const int64_t due = speedup == 1.0 ? rel : std::llround(static_cast<double>(rel) / speedup);
  return due + delay_ns;
}

std::string ReplayTiming::describe() const {
  if (!known) return "no timing settings recorded (speedup 1 assumed)";
  char buf[160];
  if (fullspeed)
    std::snprintf(buf, sizeof buf, "fullspeed");
  else
    std::snprintf(buf, sizeof buf, "timestamp, speedup %g", speedup);
  std::string s = buf;
  if (window_start_ns) {
    std::snprintf(buf, sizeof buf, ", start %.3f s", static_cast<double>(window_start_ns) / 1e9);
    s += buf;
  }
  if (start_at_unix) {
    std::snprintf(buf, sizeof buf, ", start-at %.3f", *start_at_unix);
    s += buf;
  }
  return s;
}

Result<ReplayTiming> timing_from_info(const std::vector<std::string>& info_lines,
                                      const std::string& path) {
  ReplayTiming t;
  for (const auto& line : info_lines) {
    if (line.rfind(kPrefix, 0) != 0) continue;
    const std::string where = path + ": the 'INFO: settings' line";
    if (line.size() > kMaxSettingsLine)
      return Error(ErrorKind::kBadInput,
                   where + " is longer than 64 KiB; is the replay result damaged?");
    auto j = nlohmann::json::parse(line.begin() + static_cast<std::ptrdiff_t>(kPrefix.size()),
                                   line.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return Error(ErrorKind::kBadInput,
                   where + " is not a JSON object; is the replay result damaged?");
    Status s = read_fields(j, t);
    if (!s) return s.error().context(where);
    t.known = true;
    return t;
  }
  return t;
}

}  // namespace blkrr::validate
