// Timing policy: when each request of the load is due, relative to one start
// instant. Lateness is measured per request and never accumulates, because
// every deadline is computed from the start instant, not from the previous
// request.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/dependency.h"
#include "core/result.h"
#include "core/start_at.h"  // --start-at: start_instant_for_unix (shared with record)

namespace blkrr::replay {

// kDependency: independent requests at their timestamps, the others when
// their inferred parents completed in this replay plus their think time.
enum class TimingMode { kTimestamp, kFullspeed, kDependency };

Result<TimingMode> parse_timing(std::string_view s);  // timestamp | fullspeed | dependency
std::string_view timing_name(TimingMode m);

struct ScheduleOptions {
  TimingMode mode = TimingMode::kTimestamp;
  double speedup = 1.0;             // > 0; 2 = twice as fast
  uint64_t window_start_ns = 0;     // --start: load time where the replay begins
  uint64_t window_duration_ns = 0;  // --duration: 0 = to the end of the load
  DependencyOptions deps;           // --timing dependency: the inference's windows
};

Status validate(const ScheduleOptions& o);

enum class WindowPos { kBefore, kInside, kAfter };

class Schedule {
 public:
  explicit Schedule(const ScheduleOptions& o) : o_(o) {}

  // Where a request recorded at `load_ns` (since the first request of the
  // load) lies relative to the window.
  WindowPos classify(uint64_t load_ns) const;
  // Due time of a request relative to the start instant: (load - start) /
  // speedup; always 0 at full speed.
  uint64_t due_offset_ns(uint64_t load_ns) const;
  // A think time in replay time (divided by speedup).
  uint64_t scaled_ns(uint64_t ns) const;
  // The window's length in replay time (0 when open-ended).
  uint64_t window_span_ns() const;
  const ScheduleOptions& options() const { return o_; }

 private:
  ScheduleOptions o_;
};

}  // namespace blkrr::replay
