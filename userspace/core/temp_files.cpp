#include "core/temp_files.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace blkrr::temp_files {
namespace {

// One table entry. A writer claims it (kFree -> kClaimed), writes the path
// between two increments of `seq` and publishes it (kLive); a reader (the
// signal handler, possibly on another thread) copies the path and uses it
// only if `seq` and `state` did not change meanwhile (a seqlock: a slot
// reused during the copy is skipped, never half-read).
enum : int { kFree = 0, kClaimed = 1, kLive = 2 };
struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<unsigned> seq{0};
  std::atomic<pid_t> owner{0};
  char path[kMaxPath];
};
std::array<Slot, kSlots> g_slots;
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<unsigned>::is_always_lock_free &&
              std::atomic<pid_t>::is_always_lock_free);

constexpr std::array<int, 4> kFatal = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

sigset_t fatal_set() {
  sigset_t s;
  sigemptyset(&s);
  for (int sig : kFatal) sigaddset(&s, sig);
  return s;
}

extern "C" void on_fatal_signal(int signo) {
  const int saved = errno;
  unlink_all();
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signo, &dfl, nullptr);
  // Blocked while this handler runs: delivered, with its default action
  // (the end of the process), as soon as it returns.
  raise(signo);
  errno = saved;
}

// The signals blocked in the calling thread for its lifetime.
class BlockFatal {
 public:
  BlockFatal() {
    const sigset_t s = fatal_set();
    pthread_sigmask(SIG_BLOCK, &s, &old_);
  }
  ~BlockFatal() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  BlockFatal(const BlockFatal&) = delete;
  BlockFatal& operator=(const BlockFatal&) = delete;

 private:
  sigset_t old_{};
};

int claim(const std::string& path) {
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[static_cast<size_t>(i)];
    int expected = kFree;
    if (!s.state.compare_exchange_strong(expected, kClaimed)) continue;
    s.seq.fetch_add(1);  // odd: being written
    std::memcpy(s.path, path.c_str(), path.size() + 1);
    s.owner.store(getpid());
    s.seq.fetch_add(1);
    s.state.store(kLive);
    return i;
  }
  return -1;
}

}  // namespace

Result<Made> make(std::string& tmpl) {
  if (tmpl.size() >= kMaxPath)
    return Error::system("cannot create " + tmpl, ENAMETOOLONG, "choose a shorter output path");
  install_handlers();
  // No signal between the file's creation and its entry in the table.
  BlockFatal block;
  Made m;
  m.fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (m.fd < 0) return Error::system("cannot create " + tmpl, errno);
  m.slot = claim(tmpl);
  if (m.slot < 0) {
    ::unlink(tmpl.c_str());
    ::close(m.fd);
    return Error(ErrorKind::kInternal, "cannot create " + tmpl + ": more than " +
                                           std::to_string(kSlots) +
                                           " temporary files open at once (a bug: please report)");
  }
  return m;
}

void forget(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  g_slots[static_cast<size_t>(slot)].state.store(kFree);
}

int unlink_all() noexcept {
  const pid_t self = getpid();
  int n = 0;
  char copy[kMaxPath];
  for (Slot& s : g_slots) {
    if (s.state.load() != kLive) continue;
    const unsigned seq = s.seq.load();
    if (seq % 2 != 0 || s.owner.load() != self) continue;
    size_t len = 0;
    while (len + 1 < kMaxPath && s.path[len] != '\0') {
      copy[len] = s.path[len];
      ++len;
    }
    copy[len] = '\0';
    if (s.seq.load() != seq || s.state.load() != kLive) continue;  // reused meanwhile
    if (::unlink(copy) == 0) ++n;
  }
  return n;
}

int live() {
  int n = 0;
  for (const Slot& s : g_slots) n += s.state.load() == kLive ? 1 : 0;
  return n;
}

void die_on(int signo) noexcept {
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sa.sa_mask = fatal_set();
  sigaction(signo, &sa, nullptr);
}

void install_handlers() {
  for (int sig : kFatal) {
    struct sigaction cur {};
    if (sigaction(sig, nullptr, &cur) != 0) continue;
    if ((cur.sa_flags & SA_SIGINFO) == 0 && cur.sa_handler == SIG_DFL) die_on(sig);
  }
}

}  // namespace blkrr::temp_files
