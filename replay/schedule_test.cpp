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

TEST(StartAt, FutureInstantMapsToMonotonic) {
  // realtime 1000 s <-> monotonic 5 s; start at realtime 1002.5 s -> monotonic 7.5 s.
  auto r = start_instant_for_unix(1002.5, 5'000'000'000, 1'000'000'000'000, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 7'500'000'000u);
}

TEST(StartAt, PastInstantIsRefused) {
  auto r = start_instant_for_unix(999.0, 5'000'000'000, 1'000'000'000'000, 1'000'000);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("in the past"), std::string::npos);
}

TEST(StartAt, WithinToleranceStartsNow) {
  auto r = start_instant_for_unix(999.9995, 5'000'000'000, 1'000'000'000'000, 1'000'000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 5'000'000'000u);
}

}  // namespace
}  // namespace blkrr::replay
