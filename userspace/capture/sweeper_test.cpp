#include "capture/sweeper.h"

#include <gtest/gtest.h>

namespace blkrr::capture {
namespace {

TEST(Sweeper, FloorOfFiveSecondsForFastDevices) {
  EXPECT_EQ(stale_after_ns(0), 5'000'000'000ull);
  EXPECT_EQ(stale_after_ns(100'000), 5'000'000'000ull);  // 100 us
  EXPECT_EQ(stale_after_ns(250'000'000), 5'000'000'000ull);
}

TEST(Sweeper, TwentyTimesTheLongestLatencyForSlowDevices) {
  EXPECT_EQ(stale_after_ns(250'000'001), 5'000'000'020ull);
  EXPECT_EQ(stale_after_ns(1'000'000'000), 20'000'000'000ull);
}

TEST(Sweeper, NoOverflow) {
  EXPECT_EQ(stale_after_ns(UINT64_MAX / 2), UINT64_MAX);
}

}  // namespace
}  // namespace blkrr::capture
