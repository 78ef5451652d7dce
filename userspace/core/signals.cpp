#include "core/signals.h"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

#include "core/clock.h"
#include "core/temp_files.h"

namespace blkrr {
namespace {

// What the kHandler handler writes: lock-free atomics are async-signal-safe.
std::atomic<bool> g_stop{false};
std::atomic<int> g_signo{0};
std::atomic<bool> g_second_kills{false};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int signo) {
  int none = 0;
  g_signo.compare_exchange_strong(none, signo);
  g_stop.store(true);
  // The second Ctrl-C ends the process, removing its temporary files first.
  if (g_second_kills.load()) temp_files::die_on(SIGINT);
}

std::atomic<uint64_t> g_usr1{0};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
extern "C" void on_usr1(int) {
  g_usr1.fetch_add(1);
}

timespec to_timespec(uint64_t ns) {
  return {static_cast<time_t>(ns / 1'000'000'000ull), static_cast<long>(ns % 1'000'000'000ull)};
}

}  // namespace

StopSignals::StopSignals(Options o) : opt_(o) {
  // The actions saved below, and restored at the end, are the ones that
  // remove this process's temporary files before it dies.
  temp_files::install_handlers();
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  if (opt_.hangup) sigaddset(&set_, SIGHUP);
  if (opt_.mode == Mode::kBlock) {
    pthread_sigmask(SIG_BLOCK, &set_, &old_mask_);
    return;
  }
  g_stop.store(false);
  g_signo.store(0);
  g_second_kills.store(opt_.second_ctrl_c_kills);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
  if (opt_.hangup) sigaction(SIGHUP, &sa, &old_hup_);
}

StopSignals::~StopSignals() {
  if (opt_.mode == Mode::kBlock) {
    // The stop signals that arrived while blocked were this object's (a
    // second Ctrl-C during the shutdown): taken now, not delivered after.
    const timespec zero{};
    while (sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    return;
  }
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  if (opt_.hangup) sigaction(SIGHUP, &old_hup_, nullptr);
  g_second_kills.store(false);
}

const std::atomic<bool>& StopSignals::flag() const {
  return opt_.mode == Mode::kBlock ? taken_ : g_stop;
}

int StopSignals::signal_received() const {
  return opt_.mode == Mode::kBlock ? signo_ : g_signo.load();
}

bool StopSignals::wait(uint64_t timeout_ns) {
  if (flag().load()) return true;
  const uint64_t start = mono_ns();
  const uint64_t deadline = timeout_ns > UINT64_MAX - start ? UINT64_MAX : start + timeout_ns;
  for (;;) {
    const uint64_t now = mono_ns();
    const uint64_t left = deadline > now ? deadline - now : 0;
    if (opt_.mode == Mode::kHandler) {
      // The handler may run in another thread: look at the flag every 10 ms.
      if (g_stop.load()) return true;
      if (left == 0) return false;
      const timespec ts = to_timespec(std::min<uint64_t>(left, 10'000'000));
      nanosleep(&ts, nullptr);
      continue;
    }
    const timespec ts = to_timespec(left);
    const int s = sigtimedwait(&set_, nullptr, &ts);
    if (s > 0) {
      signo_ = s;
      taken_.store(true);
      return true;
    }
    if (errno == EINTR && left > 0) continue;  // another signal: keep sleeping
    return false;                              // EAGAIN: timeout
  }
}

Usr1Requests::Usr1Requests() {
  g_usr1.store(0);
  struct sigaction sa {};
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, &old_);
}

Usr1Requests::~Usr1Requests() {
  sigaction(SIGUSR1, &old_, nullptr);
}

uint64_t Usr1Requests::take() {
  return g_usr1.exchange(0);
}

}  // namespace blkrr
