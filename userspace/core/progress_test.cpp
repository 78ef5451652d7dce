#include "core/progress.h"

#include <gtest/gtest.h>

#include <thread>

namespace blkrr {
namespace {

TEST(ProgressLine, OffDoesNothing) {
  std::string got;
  {
    ProgressLine p(false, [&](const std::string& s) { got += s; });
    EXPECT_FALSE(p.due());
    p.show("x");
  }
  EXPECT_EQ(got, "");
}

TEST(ProgressLine, ReplacesItsLineAndErasesItAtTheEnd) {
  std::string got;
  {
    ProgressLine p(true, [&](const std::string& s) { got += s; });
    EXPECT_FALSE(p.due()) << "not at once: short commands print nothing";
    p.show("12345");
    p.show("ab");  // shorter: the rest of the old line is blanked
  }
  EXPECT_EQ(got, "\r12345\rab   \r  \r");
}

TEST(ProgressLine, DueEveryHalfSecond) {
  ProgressLine p(true, [](const std::string&) {});
  std::this_thread::sleep_for(std::chrono::milliseconds(550));
  EXPECT_TRUE(p.due());
  EXPECT_FALSE(p.due());
}

// Off, the ticker starts no thread and only passes messages through; on,
// its messages erase the progress line first, and stop() leaves no line.
TEST(ProgressTicker, MessagesPassThroughAndNothingIsLeftOnTheLine) {
  std::string got;
  {
    ProgressTicker t(false, [&](const std::string& s) { got += s; });
    t.phase("reading x");
    t.say("read x: 5 requests");
  }
  EXPECT_EQ(got, "read x: 5 requests\n");
  got.clear();
  std::mutex m;
  {
    ProgressTicker t(true, [&](const std::string& s) {
      std::lock_guard<std::mutex> lock(m);
      got += s;
    });
    t.say("first");
    t.stop();
    t.say("after stop");
  }
  EXPECT_EQ(got, "first\nafter stop\n");
}

}  // namespace
}  // namespace blkrr
