#include "replay/schedule.h"

#include <gtest/gtest.h>

namespace blkrr::replay {
namespace {

TEST(Schedule, TimestampIsOffsetFromWindowStart) {
  Schedule s({TimingMode::kTimestamp, 1.0, 0, 0});
  EXPECT_EQ(s.due_offset_ns(0), 0u);
  EXPECT_EQ(s.due_offset_ns(1'234'567), 1'234'567u);
  EXPECT_EQ(s.classify(999'000'000'000), WindowPos::kInside);
}

TEST(Schedule, SpeedupDividesOffsets) {
  Schedule s({TimingMode::kTimestamp, 2.0, 0, 0});
  EXPECT_EQ(s.due_offset_ns(1'000'000), 500'000u);
  Schedule slow({TimingMode::kTimestamp, 0.5, 0, 0});
  EXPECT_EQ(slow.due_offset_ns(1'000'000), 2'000'000u);
}

TEST(Schedule, FullspeedIsAlwaysDue) {
  Schedule s({TimingMode::kFullspeed, 1.0, 0, 0});
  EXPECT_EQ(s.due_offset_ns(5'000'000'000), 0u);
}

TEST(Schedule, Window) {
  Schedule s({TimingMode::kTimestamp, 1.0, 10'000'000'000, 5'000'000'000});
  EXPECT_EQ(s.classify(9'999'999'999), WindowPos::kBefore);
  EXPECT_EQ(s.classify(10'000'000'000), WindowPos::kInside);
  EXPECT_EQ(s.classify(14'999'999'999), WindowPos::kInside);
  EXPECT_EQ(s.classify(15'000'000'000), WindowPos::kAfter);
  EXPECT_EQ(s.due_offset_ns(12'500'000'000), 2'500'000'000u);
  EXPECT_EQ(s.window_span_ns(), 5'000'000'000u);
}

TEST(Schedule, ValidateRejectsBadSpeedup) {
  EXPECT_FALSE(validate({TimingMode::kTimestamp, 0.0, 0, 0}).ok());
  EXPECT_FALSE(validate({TimingMode::kTimestamp, -1.0, 0, 0}).ok());
  EXPECT_TRUE(validate({TimingMode::kTimestamp, 3.0, 0, 0}).ok());
}

TEST(Schedule, ParseTiming) {
  EXPECT_EQ(*parse_timing("fullspeed"), TimingMode::kFullspeed);
  EXPECT_EQ(*parse_timing("timestamp"), TimingMode::kTimestamp);
  EXPECT_FALSE(parse_timing("fast").ok());
}

}  // namespace
}  // namespace blkrr::replay
