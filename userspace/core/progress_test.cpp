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

}  // namespace
}  // namespace blkrr
