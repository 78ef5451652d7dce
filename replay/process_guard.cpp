#include "replay/process_guard.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace blkrr::replay {

Status RealtimeGuard::enable(int prio) {
  if (prio <= 0) return {};
  old_policy_ = sched_getscheduler(0);
  sched_getparam(0, &old_);
  sched_param sp{};
  sp.sched_priority = prio;
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
    return Error::system("--realtime " + std::to_string(prio) + ": cannot switch to SCHED_FIFO",
                         errno, "needs root or CAP_SYS_NICE")
        .as(ErrorKind::kUsage);
  active_ = true;
  return {};
}

}  // namespace blkrr::replay
