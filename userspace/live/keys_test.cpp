#include "live/keys.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "core/clock.h"

namespace blkrr::live {
namespace {

// A pseudo-terminal pair: what a user's terminal is to top.
struct Pty {
  int master = -1, slave = -1;
  Pty() {
    master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return;
    slave = open(ptsname(master), O_RDWR | O_NOCTTY);
  }
  ~Pty() {
    if (slave >= 0) close(slave);
    if (master >= 0) close(master);
  }
};

TEST(QuitKey, QQuitsOtherKeysDoNot) {
  Pty pty;
  ASSERT_GE(pty.slave, 0) << "no pseudo-terminal";
  StopSignals signals({.mode = StopSignals::Mode::kBlock});
  {
    auto keys = QuitKey::open(pty.slave);
    ASSERT_NE(keys, nullptr);
    termios t{};
    ASSERT_EQ(tcgetattr(pty.slave, &t), 0);
    EXPECT_EQ(t.c_lflag & (ICANON | ECHO), 0u) << "a key arrives without Enter, unechoed";
    ASSERT_EQ(write(pty.master, "x", 1), 1);
    EXPECT_EQ(wait_for_stop(signals, keys.get(), 120'000'000), WaitEnd::kTimeout);
    ASSERT_EQ(write(pty.master, "q", 1), 1);
    uint64_t t0 = mono_ns();
    EXPECT_EQ(wait_for_stop(signals, keys.get(), 10'000'000'000), WaitEnd::kQuit);
    EXPECT_LT(mono_ns() - t0, 2'000'000'000u);
  }
  termios after{};
  ASSERT_EQ(tcgetattr(pty.slave, &after), 0);
  EXPECT_NE(after.c_lflag & ICANON, 0u) << "the terminal's mode comes back";
  EXPECT_NE(after.c_lflag & ECHO, 0u);
}

TEST(QuitKey, NotATerminalReadsNothing) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_EQ(QuitKey::open(p[0]), nullptr);
  close(p[0]);
  close(p[1]);
  StopSignals signals({.mode = StopSignals::Mode::kBlock});
  EXPECT_EQ(wait_for_stop(signals, nullptr, 1'000'000), WaitEnd::kTimeout);
}

}  // namespace
}  // namespace blkrr::live
