#include "core/signals.h"

#include <pthread.h>

#include <gtest/gtest.h>

namespace blkrr {
namespace {

std::atomic<int> g_test_handler_calls{0};
extern "C" void test_handler(int) {
  g_test_handler_calls.fetch_add(1);
}

// Installs test_handler for sig while alive, restores what was there.
class TestHandler {
 public:
  explicit TestHandler(int sig) : sig_(sig) {
    struct sigaction sa {};
    sa.sa_handler = test_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(sig_, &sa, &old_);
    g_test_handler_calls = 0;
  }
  ~TestHandler() { sigaction(sig_, &old_, nullptr); }

 private:
  int sig_;
  struct sigaction old_ {};
};

void (*current_handler(int sig))(int) {
  struct sigaction cur {};
  sigaction(sig, nullptr, &cur);
  return cur.sa_handler;
}

bool blocked(int sig) {
  sigset_t cur;
  pthread_sigmask(SIG_SETMASK, nullptr, &cur);
  return sigismember(&cur, sig) == 1;
}

TEST(StopSignals, HandlerSetsTheFlagAndTheOldHandlerComesBack) {
  TestHandler th(SIGTERM);
  {
    StopSignals s({});
    EXPECT_FALSE(s.flag().load());
    EXPECT_FALSE(s.pending());
    ASSERT_EQ(raise(SIGTERM), 0);
    EXPECT_TRUE(s.flag().load());
    EXPECT_TRUE(s.pending());
    EXPECT_EQ(s.signal_received(), SIGTERM);
    EXPECT_EQ(g_test_handler_calls.load(), 0);
  }
  EXPECT_EQ(current_handler(SIGTERM), test_handler);
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ(g_test_handler_calls.load(), 1);
}

TEST(Usr1Requests, CountsEachSignalAndTheOldHandlerComesBack) {
  TestHandler th(SIGUSR1);
  {
    Usr1Requests u;
    EXPECT_EQ(u.take(), 0u);
    ASSERT_EQ(raise(SIGUSR1), 0);
    ASSERT_EQ(raise(SIGUSR1), 0);
    EXPECT_EQ(u.take(), 2u);
    EXPECT_EQ(u.take(), 0u);
    EXPECT_EQ(g_test_handler_calls.load(), 0);
  }
  ASSERT_EQ(raise(SIGUSR1), 0);
  EXPECT_EQ(g_test_handler_calls.load(), 1);
}

TEST(StopSignals, TheFirstSignalIsTheOneReported) {
  TestHandler ti(SIGINT), tt(SIGTERM);
  StopSignals s({});
  ASSERT_EQ(raise(SIGINT), 0);
  ASSERT_EQ(raise(SIGTERM), 0);
  EXPECT_EQ(s.signal_received(), SIGINT);
}

TEST(StopSignals, ANewObjectStartsUnstopped) {
  TestHandler th(SIGINT);
  {
    StopSignals s({});
    ASSERT_EQ(raise(SIGINT), 0);
    EXPECT_TRUE(s.flag().load());
  }
  StopSignals again({});
  EXPECT_FALSE(again.flag().load());
  EXPECT_EQ(again.signal_received(), 0);
}

TEST(StopSignals, SecondCtrlCKillsOnlyWhenAsked) {
  TestHandler th(SIGINT);
  {
    StopSignals s({.second_ctrl_c_kills = true});
    const auto stop_handler = current_handler(SIGINT);
    ASSERT_EQ(raise(SIGINT), 0);
    EXPECT_TRUE(s.flag().load());
    // A second one would kill, after removing the temporary files
    // (TempFiles.SecondCtrlCRemovesThenKills).
    EXPECT_NE(current_handler(SIGINT), stop_handler);
    EXPECT_NE(current_handler(SIGINT), test_handler);
    EXPECT_NE(current_handler(SIGINT), SIG_IGN);
  }
  EXPECT_EQ(current_handler(SIGINT), test_handler);
  {
    StopSignals s({});
    ASSERT_EQ(raise(SIGINT), 0);
    EXPECT_NE(current_handler(SIGINT), SIG_DFL);
  }
  EXPECT_EQ(g_test_handler_calls.load(), 0);
}

TEST(StopSignals, HangupOnlyWhenAsked) {
  TestHandler th(SIGHUP);
  {
    StopSignals s({});
    EXPECT_EQ(current_handler(SIGHUP), test_handler);
  }
  {
    StopSignals s({.hangup = true});
    EXPECT_NE(current_handler(SIGHUP), test_handler);
    ASSERT_EQ(raise(SIGHUP), 0);
    EXPECT_EQ(s.signal_received(), SIGHUP);
  }
  EXPECT_EQ(current_handler(SIGHUP), test_handler);
  EXPECT_EQ(g_test_handler_calls.load(), 0);
}

TEST(StopSignals, BlockedSignalsAreTakenByWaitAndTheMaskComesBack) {
  ASSERT_FALSE(blocked(SIGTERM));
  {
    StopSignals s({.mode = StopSignals::Mode::kBlock, .hangup = true});
    EXPECT_TRUE(blocked(SIGINT));
    EXPECT_TRUE(blocked(SIGTERM));
    EXPECT_TRUE(blocked(SIGHUP));
    EXPECT_FALSE(s.wait(1'000'000));  // nothing pending: the timeout ends it
    ASSERT_EQ(raise(SIGTERM), 0);     // pending, not delivered
    EXPECT_FALSE(s.flag().load());
    EXPECT_TRUE(s.wait(0));
    EXPECT_TRUE(s.flag().load());
    EXPECT_EQ(s.signal_received(), SIGTERM);
    EXPECT_TRUE(s.pending());  // stays stopped
  }
  EXPECT_FALSE(blocked(SIGINT));
  EXPECT_FALSE(blocked(SIGTERM));
  EXPECT_FALSE(blocked(SIGHUP));
}

TEST(StopSignals, ASecondBlockedSignalIsNotDeliveredAfterwards) {
  TestHandler th(SIGINT);
  {
    StopSignals s({.mode = StopSignals::Mode::kBlock});
    ASSERT_EQ(raise(SIGINT), 0);
    EXPECT_TRUE(s.pending());
    ASSERT_EQ(raise(SIGINT), 0);  // pending again, never taken by wait()
  }
  EXPECT_EQ(g_test_handler_calls.load(), 0);
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGINT), 0);
}

TEST(StopSignals, BlockModeLeavesHangupAloneUnlessAsked) {
  StopSignals s({.mode = StopSignals::Mode::kBlock});
  EXPECT_TRUE(blocked(SIGINT));
  EXPECT_FALSE(blocked(SIGHUP));
}

}  // namespace
}  // namespace blkrr
