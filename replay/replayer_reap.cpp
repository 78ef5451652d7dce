// Waiting for completions when nothing is due. At queue depth 1 every request
// waits for the previous one, and a thread that sleeps in the engine pays a
// wake-up (measured 25-50 µs on a VM) on top of the device's time: a short,
// bounded spin of polls first reaps fast completions without sleeping.
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
