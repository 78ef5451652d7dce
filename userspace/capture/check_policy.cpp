#include "capture/check_policy.h"

namespace blkrr::capture {

bool CheckPolicy::tick(uint64_t now_ns, const std::vector<DiskActivity>& disks,
                       uint64_t suspects_marked) {
  // The last pass marked suspects: confirm (or clear) them now.
  bool run = ran_ && suspects_marked > suspects_at_run_;
  for (const auto& d : disks) {
    auto [it, fresh] = seen_.try_emplace(d.disk);
    Seen& s = it->second;
    const bool quiet = !fresh && d.pending > 0 && d.clock_ns == s.clock_ns;
    if (quiet && s.quiet_checked_clock_ns != d.clock_ns) {
      run = true;
      s.quiet_checked_clock_ns = d.clock_ns;
    }
    s.clock_ns = d.clock_ns;
  }
  if (!ran_ || now_ns - last_run_ns_ >= kBackstopNs) run = true;
  if (run) {
    ran_ = true;
    last_run_ns_ = now_ns;
    suspects_at_run_ = suspects_marked;
  }
  return run;
}

}  // namespace blkrr::capture
