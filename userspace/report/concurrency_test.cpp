#include "report/concurrency.h"

#include <gtest/gtest.h>

namespace blkrr::report {
namespace {

// issue 0,10,20,30; complete 25,15,40,30:
// level 1 on [0,10), 2 on [10,15), 1 on [15,20), 2 on [20,25), 1 on [25,40).
const std::vector<uint64_t> kIssue{0, 10, 20, 30};
const std::vector<uint64_t> kComplete{25, 15, 40, 30};

TEST(Concurrency, InflightAtIssue) {
  EXPECT_EQ(inflight_at_issue(kIssue, kComplete), (std::vector<uint32_t>{1, 2, 2, 2}));
  // Given in another order, the answer follows the requests.
  EXPECT_EQ(inflight_at_issue({20, 0, 10}, {40, 100, 15}), (std::vector<uint32_t>{2, 1, 2}));
}

TEST(Concurrency, TimeWeightedProfile) {
  auto p = inflight_profile(kIssue, kComplete, 10);
  ASSERT_EQ(p.time_at_level.size(), 3u);
  EXPECT_DOUBLE_EQ(p.time_at_level[0], 0.0);
  EXPECT_DOUBLE_EQ(p.time_at_level[1], 30.0);
  EXPECT_DOUBLE_EQ(p.time_at_level[2], 10.0);
  EXPECT_DOUBLE_EQ(p.mean, 1.25);
  EXPECT_EQ(p.max, 2u);
  ASSERT_EQ(p.buckets.size(), 4u);
  EXPECT_DOUBLE_EQ(p.buckets[0].avg, 1.0);
  EXPECT_DOUBLE_EQ(p.buckets[1].avg, 1.5);
  EXPECT_EQ(p.buckets[1].max, 2u);
  EXPECT_DOUBLE_EQ(p.buckets[3].avg, 1.0);
  EXPECT_EQ(p.buckets[3].max, 1u);
}

TEST(Concurrency, IdleGapCountsAsLevelZero) {
  auto p = inflight_profile({0, 30}, {10, 40}, 100);
  ASSERT_GE(p.time_at_level.size(), 2u);
  EXPECT_DOUBLE_EQ(p.time_at_level[0], 20.0);
  EXPECT_DOUBLE_EQ(p.time_at_level[1], 20.0);
  EXPECT_DOUBLE_EQ(p.mean, 0.5);
}

}  // namespace
}  // namespace blkrr::report
