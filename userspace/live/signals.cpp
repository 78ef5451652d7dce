#include "core/clock.h"
#include "live/signals.h"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace blkrr::live {

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set_, &old_);
}

StopSignals::~StopSignals() {
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

bool StopSignals::wait(uint64_t timeout_ns) {
  if (signo_) return true;
  uint64_t deadline = mono_ns() + timeout_ns;
  for (;;) {
    uint64_t now = mono_ns();
    uint64_t left = deadline > now ? deadline - now : 0;
    timespec ts{static_cast<time_t>(left / 1000000000ull), static_cast<long>(left % 1000000000ull)};
    int s = sigtimedwait(&set_, nullptr, &ts);
    if (s > 0) {
      signo_ = s;
      return true;
    }
    if (errno == EINTR && left > 0) continue;  // another signal: keep sleeping
    return false;                              // EAGAIN: timeout
  }
}

}  // namespace blkrr::live
