#include "live/keys.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>

#include "core/clock.h"

namespace blkrr::live {

std::unique_ptr<QuitKey> QuitKey::open(int fd) {
  termios old{};
  if (!isatty(fd)) return nullptr;
  // A background job must not touch its terminal (tcsetattr would stop it
  // with SIGTTOU): only the foreground process group reads keys.
  const pid_t fg = tcgetpgrp(fd);
  if ((fg >= 0 && fg != getpgrp()) || tcgetattr(fd, &old) != 0) return nullptr;
  termios raw = old;
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
  raw.c_cc[VMIN] = 0;
  raw.c_cc[VTIME] = 0;
  if (tcsetattr(fd, TCSANOW, &raw) != 0) return nullptr;
  return std::unique_ptr<QuitKey>(new QuitKey(fd, old));
}

QuitKey::~QuitKey() {
  tcsetattr(fd_, TCSANOW, &old_);
}

bool QuitKey::quit_pressed() {
  bool quit = false;
  char buf[64];
  for (;;) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) break;
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n <= 0) break;
    quit = quit || std::any_of(buf, buf + n, [](char c) { return c == 'q' || c == 'Q'; });
  }
  return quit;
}

WaitEnd wait_for_stop(StopSignals& signals, QuitKey* keys, uint64_t timeout_ns) {
  if (!keys) return signals.wait(timeout_ns) ? WaitEnd::kSignal : WaitEnd::kTimeout;
  const uint64_t deadline = mono_ns() + timeout_ns;
  for (;;) {
    if (signals.pending()) return WaitEnd::kSignal;
    const uint64_t now = mono_ns();
    if (now >= deadline) return WaitEnd::kTimeout;
    const uint64_t slice = std::min<uint64_t>(deadline - now, 50'000'000);
    pollfd p{keys->fd(), POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>((slice + 999'999) / 1'000'000));
    if (r > 0 && keys->quit_pressed()) return WaitEnd::kQuit;
    if (r > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL))) {  // the terminal went away
      const uint64_t t = mono_ns();
      return signals.wait(deadline > t ? deadline - t : 0) ? WaitEnd::kSignal : WaitEnd::kTimeout;
    }
  }
}

}  // namespace blkrr::live
