// Waiting for completions when nothing is due. At queue depth 1 every request
// waits for the previous one, and a thread that sleeps in the engine pays its
// wake-up on top of the device's time. --reap-spin-us polls first, bounded,
// so that a fast completion is reaped without sleeping. Off by default: on a
// small host the spinning thread takes the CPU that the device's kernel
// worker (or the threads engine's workers) needs (docs/performance.md).
// Waiting for a deadline: sleep, then spin for a margin learnt from how late
// the host's timer wake-ups come.
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

// How long before a deadline the thread stops sleeping and spins: the
// configured margin, or, when timer wake-ups have recently come later than
// that (a loaded host, a VM), 1.5 times the recent worst lateness plus 10 µs.
uint64_t Replayer::spin_margin() const {
  if (!cfg_.adaptive_spin || wake_late_ == 0) return cfg_.spin_ns;
  const uint64_t want = wake_late_ + wake_late_ / 2 + 10'000;
  return std::max(cfg_.spin_ns, std::min(want, cfg_.max_spin_ns));
}

void Replayer::learn_wake(uint64_t late_ns) {
  ++res_.sleeps;
  res_.wake_late_max_ns = std::max(res_.wake_late_max_ns, late_ns);
  // A decaying maximum: one late wake-up is remembered for a few hundred sleeps.
  wake_late_ = std::max(late_ns, wake_late_ - wake_late_ / 256);
  res_.spin_max_ns = std::max(res_.spin_max_ns, spin_margin());
}

// Learn the host's timer wake-up lateness during the start lead, so that
// the first request is not late: every issue error counts from it.
Status Replayer::calibrate_wake() {
  constexpr uint64_t kSleepNs = 100'000;
  if (!cfg_.adaptive_spin) return {};
  for (int i = 0; i < 3; ++i) {
    const uint64_t now = clock_.now_ns();
    const uint64_t target = now + kSleepNs;
    if (target + 4 * kSleepNs > start_) break;  // keep the end of the start margin for spinning
    BLKRR_TRY(engine_.wait(done_, target));
    if (!done_.empty()) {
      BLKRR_TRY(handle(done_));
      continue;
    }
    learn_wake(clock_.now_ns() - std::min(target, clock_.now_ns()));
  }
  return {};
}

}  // namespace blkrr::replay
