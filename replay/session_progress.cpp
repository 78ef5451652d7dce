#include "replay/session_progress.h"

#include <algorithm>
#include <cstdio>

#include "core/units.h"

namespace blkrr::replay {

void print_progress(const Progress& p, uint64_t window_ns, uint64_t& last_completed,
                    uint64_t& last_elapsed) {
  const double dt = static_cast<double>(p.elapsed_ns - last_elapsed) / 1e9;
  const double iops = dt > 0 ? static_cast<double>(p.completed - last_completed) / dt : 0;
  last_completed = p.completed;
  last_elapsed = p.elapsed_ns;
  char pos[80];
  if (window_ns > 0 && p.due_ns > 0) {
    // The load's time advances at the replay's pace: the rest takes the same
    // wall time per load second as what is done.
    const double left = static_cast<double>(window_ns - std::min(window_ns, p.due_ns));
    const double eta_s =
        static_cast<double>(p.elapsed_ns) / static_cast<double>(p.due_ns) * left / 1e9;
    std::snprintf(pos, sizeof pos, "%5.1f%%  ETA %-12s",
                  100.0 * static_cast<double>(p.due_ns) / static_cast<double>(window_ns),
                  fmt_elapsed(eta_s).c_str());
  } else if (window_ns > 0) {
    std::snprintf(pos, sizeof pos, "%5.1f%%", 0.0);
  } else {
    std::snprintf(pos, sizeof pos, "load t=%.1fs", static_cast<double>(p.due_ns) / 1e9);
  }
  std::fprintf(stderr, "\r%s  %8.0f IOPS  delay %8.1f us  in flight %4llu  done %llu   ", pos, iops,
               static_cast<double>(p.last_delay_ns) / 1e3,
               static_cast<unsigned long long>(p.in_flight),
               static_cast<unsigned long long>(p.completed));
  std::fflush(stderr);
}

void print_final_progress(const Result<ReplayResult>& res) {
  if (res && !res->interrupted) {
    const double s = static_cast<double>(res->last_complete_ns) / 1e9;
    std::fprintf(stderr, "\r100.0%%  done %llu requests in %s%40s\n",
                 static_cast<unsigned long long>(res->completed), fmt_elapsed(s).c_str(), "");
  } else {
    std::fputs("\n", stderr);
  }
}

}  // namespace blkrr::replay
