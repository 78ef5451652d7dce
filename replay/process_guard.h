// Process settings a timed replay holds while it runs: SCHED_FIFO and locked
// memory, each undone when its guard goes out of scope.
#pragma once

#include <sched.h>
#include <sys/mman.h>

#include "core/result.h"

namespace blkrr::replay {

// SCHED_FIFO for the calling thread (and the threads it creates) while alive.
class RealtimeGuard {
 public:
  Status enable(int prio);
  ~RealtimeGuard() {
    if (active_) sched_setscheduler(0, old_policy_, &old_);
  }

 private:
  bool active_ = false;
  int old_policy_ = SCHED_OTHER;
  sched_param old_{};
};

// mlockall(MCL_CURRENT) while alive (best effort: RLIMIT_MEMLOCK may refuse).
class MemoryLock {
 public:
  void lock() { locked_ = mlockall(MCL_CURRENT) == 0; }
  ~MemoryLock() {
    if (locked_) munlockall();
  }

 private:
  bool locked_ = false;
};

}  // namespace blkrr::replay
