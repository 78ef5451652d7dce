// SIGINT/SIGTERM/SIGHUP as a value: blocked in every thread (create this
// before starting threads so they inherit the mask), then waited for with a
// timeout, which is also how top sleeps between refreshes.
#pragma once

#include <signal.h>

#include <cstdint>

namespace blkrr::live {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Sleeps up to timeout_ns; true when a stop signal arrived (then or before).
  bool wait(uint64_t timeout_ns);
  // Non-blocking check.
  bool pending() { return wait(0); }
  int signal_received() const { return signo_; }

 private:
  sigset_t set_{}, old_{};
  int signo_ = 0;
};

}  // namespace blkrr::live
