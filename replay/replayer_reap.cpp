// Waiting for completions when nothing is due. At queue depth 1 every request
// waits for the previous one, and a thread that sleeps in the engine pays its
// wake-up on top of the device's time. --reap-spin-us polls first, bounded,
// so that a fast completion is reaped without sleeping. Off by default: on a
// small host the spinning thread takes the CPU that the device's kernel
// worker (or the threads engine's workers) needs (docs/performance.md).
#include "replay/replayer.h"

#include <algorithm>

namespace blkrr::replay {

namespace {
constexpr uint64_t kReapStepNs = 1'000;  // a fake clock's step while spinning
}  // namespace

Status Replayer::wait_completion() {
  if (cfg_.reap_spin_ns > 0 && in_flight_ > 0) {
    ++res_.reap_spins;
    const uint64_t until = clock_.now_ns() + cfg_.reap_spin_ns;
    for (;;) {
      BLKRR_TRY(engine_.poll(done_));
      if (!done_.empty()) {
        ++res_.reap_spin_hits;
        return handle(done_);
      }
      const uint64_t now = clock_.now_ns();
      if (now >= until) break;
      clock_.relax(std::min(until, now + kReapStepNs));
    }
  }
  BLKRR_TRY(engine_.wait(done_, clock_.now_ns() + kMaxWaitNs));
  return handle(done_);
}

}  // namespace blkrr::replay
