// The stop signals (SIGINT, SIGTERM; SIGHUP too with Options::hangup) as a
// value, for the lifetime of one StopSignals: its destructor restores the
// handlers or the signal mask it found. Two ways to take them:
//  * Mode::kHandler: a handler sets flag(), which loops read, also from other
//    threads (the replay thread between requests). second_ctrl_c_kills: the
//    first signal gives SIGINT back its default action, so a second Ctrl-C
//    kills. One kHandler object at a time (the handler has one flag).
//  * Mode::kBlock: the signals are blocked in the creating thread and in the
//    threads it starts afterwards (create it before them) and taken by
//    wait(), which is also how top sleeps between refreshes.
// Either way a stop signal that arrives while the object lives is a stop
// request and nothing else: a second one during the shutdown does not kill
// (unless second_ctrl_c_kills), also not after the object is gone.
// Before and after the object, and for a second Ctrl-C, a stop signal ends the
// process after removing its temporary files (core/temp_files.h).
#pragma once

#include <signal.h>

#include <atomic>
#include <cstdint>

namespace blkrr {

class StopSignals {
 public:
  enum class Mode { kHandler, kBlock };
  struct Options {
    Mode mode = Mode::kHandler;
    bool hangup = false;               // SIGHUP stops too (a closed terminal)
    bool second_ctrl_c_kills = false;  // kHandler only
  };

  explicit StopSignals(Options o);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  static constexpr uint64_t kForever = UINT64_MAX;
  // Sleeps up to timeout_ns (kForever: until a stop signal); true when a stop
  // signal arrived (then or before).
  bool wait(uint64_t timeout_ns);
  // Non-blocking check.
  bool pending() { return wait(0); }
  // Set once a stop signal arrived (kBlock: once wait() took it).
  const std::atomic<bool>& flag() const;
  // The signal that arrived first, 0 if none.
  int signal_received() const;

 private:
  Options opt_;
  sigset_t set_{}, old_mask_{};
  struct sigaction old_int_ {
  }, old_term_{}, old_hup_{};
  std::atomic<bool> taken_{false};  // kBlock
  int signo_ = 0;                   // kBlock
};

// SIGUSR1 as a request (record --ring: write the window now), counted by a
// handler for the lifetime of one object; the old action comes back after.
class Usr1Requests {
 public:
  Usr1Requests();
  ~Usr1Requests();
  Usr1Requests(const Usr1Requests&) = delete;
  Usr1Requests& operator=(const Usr1Requests&) = delete;
  // The requests that arrived since the last take().
  uint64_t take();

 private:
  struct sigaction old_ {};
};

}  // namespace blkrr
