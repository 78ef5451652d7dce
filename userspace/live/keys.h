// Single keys from a terminal, as iotop reads them: `q` quits top. While a
// QuitKey lives, its terminal is in non-canonical mode without echo (a key
// arrives without Enter and is not printed over the screen); the destructor
// restores the mode it found. Only for a terminal: open() gives nullopt for a
// pipe or file, and top then reads nothing from it.
#pragma once

#include <termios.h>

#include <cstdint>
#include <memory>

#include "core/signals.h"

namespace blkrr::live {

class QuitKey {
 public:
  static std::unique_ptr<QuitKey> open(int fd);
  ~QuitKey();
  QuitKey(const QuitKey&) = delete;
  QuitKey& operator=(const QuitKey&) = delete;

  // Reads the keys waiting; true when one of them is q or Q.
  bool quit_pressed();
  int fd() const { return fd_; }

 private:
  QuitKey(int fd, const termios& old) : fd_(fd), old_(old) {}
  int fd_;
  termios old_;
};

enum class WaitEnd { kTimeout, kSignal, kQuit };
// Sleeps up to timeout_ns: ends early on a stop signal, or on q when `keys`
// is not null (polled with the signals, at most 50 ms apart).
WaitEnd wait_for_stop(StopSignals& signals, QuitKey* keys, uint64_t timeout_ns);

}  // namespace blkrr::live
