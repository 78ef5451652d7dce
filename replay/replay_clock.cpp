#include "core/clock.h"
#include "replay/replay_clock.h"

#include <sys/prctl.h>
#include <time.h>

#include "core/start_at.h"

namespace blkrr::replay {

MonotonicClock::MonotonicClock() {
  // The default 50 us timer slack would make every sleep late by up to 50 us.
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

uint64_t MonotonicClock::now_ns() {
  return mono_ns();
}

uint64_t MonotonicClock::realtime_ns() {
  return blkrr::realtime_ns();
}

void MonotonicClock::sleep_until(uint64_t t) {
  sleep_until_monotonic(t);
}

void MonotonicClock::relax(uint64_t) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace blkrr::replay
