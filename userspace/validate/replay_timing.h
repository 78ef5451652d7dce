// The timing settings a replay result recorded (its "INFO: settings {...}"
// line, written by replay/session.cpp), which say how each request's
// orig_start and replay_delay give its submission time on the replayer's
// clock. See docs/validate.md, "Time bases".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace blkrr::validate {

struct ReplayTiming {
  bool known = false;  // a settings line was found (not in blkreplay's results)
  bool fullspeed = false;
  double speedup = 1.0;
  uint64_t window_start_ns = 0;         // --start: load time where the replay began
  std::optional<double> start_at_unix;  // --start-at: wall-clock start instant
  uint32_t pid = 0;                     // the replayer's process id (0: not recorded)

  // Submission time after the replay's start instant: the due time
  // ((orig_start - start) / speedup, 0 at full speed) plus the delay.
  int64_t submit_ns(int64_t orig_start_ns, int64_t delay_ns) const;
  // "timestamp, speedup 20, start 60 s" and the like.
  std::string describe() const;
};

// Reads the settings line among the INFO lines of `path`. No such line:
// known = false. A settings line that is not JSON, or whose timing fields
// have the wrong type or range, is an error naming the field.
Result<ReplayTiming> timing_from_info(const std::vector<std::string>& info_lines,
                                      const std::string& path);

}  // namespace blkrr::validate
