// Clocks for the replay loop. The replayer never reads time directly: it asks
// a Clock, so that unit tests can drive it with a FakeClock.
#pragma once

#include <cstdint>

namespace blkrr::replay {

class Clock {
 public:
  virtual ~Clock() = default;
  // CLOCK_MONOTONIC-like nanoseconds.
  virtual uint64_t now_ns() = 0;
  // Coarse sleep until `t` (may wake a little late; callers leave a margin).
  virtual void sleep_until(uint64_t t) = 0;
  // One step of a busy wait towards `t` (a CPU pause on a real clock; a fake
  // clock jumps to `t`).
  virtual void relax(uint64_t t) = 0;
  // CLOCK_REALTIME nanoseconds at the same instant as now_ns(), for --start-at.
  virtual uint64_t realtime_ns() = 0;
};

// CLOCK_MONOTONIC with 1 ns timer slack for this thread (set on construction).
class MonotonicClock final : public Clock {
 public:
  MonotonicClock();
  uint64_t now_ns() override;
  void sleep_until(uint64_t t) override;
  void relax(uint64_t t) override;
  uint64_t realtime_ns() override;
};

}  // namespace blkrr::replay
