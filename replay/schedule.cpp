#include "replay/schedule.h"

#include <cmath>
#include <string>

namespace blkrr::replay {

Result<TimingMode> parse_timing(std::string_view s) {
  if (s == "timestamp") return TimingMode::kTimestamp;
  if (s == "fullspeed") return TimingMode::kFullspeed;
  if (s == "dependency") return TimingMode::kDependency;
  return Error(ErrorKind::kUsage,
               "unknown timing '" + std::string(s) + "' (use timestamp, fullspeed or dependency)");
}

std::string_view timing_name(TimingMode m) {
  switch (m) {
    case TimingMode::kFullspeed:
      return "fullspeed";
    case TimingMode::kDependency:
      return "dependency";
    case TimingMode::kTimestamp:
      break;
  }
  return "timestamp";
}

Status validate(const ScheduleOptions& o) {
  if (!(o.speedup > 0) || !std::isfinite(o.speedup))
    return Error(ErrorKind::kUsage,
                 "--speedup must be a positive number, got " + std::to_string(o.speedup));
  return {};
}

WindowPos Schedule::classify(uint64_t load_ns) const {
  if (load_ns < o_.window_start_ns) return WindowPos::kBefore;
  if (o_.window_duration_ns != 0 && load_ns - o_.window_start_ns >= o_.window_duration_ns)
    return WindowPos::kAfter;
  return WindowPos::kInside;
}

uint64_t Schedule::due_offset_ns(uint64_t load_ns) const {
  if (o_.mode == TimingMode::kFullspeed) return 0;
  return scaled_ns(load_ns > o_.window_start_ns ? load_ns - o_.window_start_ns : 0);
}

uint64_t Schedule::scaled_ns(uint64_t ns) const {
  if (o_.speedup == 1.0) return ns;
  return static_cast<uint64_t>(std::llround(static_cast<double>(ns) / o_.speedup));
}

uint64_t Schedule::window_span_ns() const {
  if (o_.window_duration_ns == 0 || o_.mode == TimingMode::kFullspeed) return 0;
  return static_cast<uint64_t>(
      std::llround(static_cast<double>(o_.window_duration_ns) / o_.speedup));
}

}  // namespace blkrr::replay
