#include "core/distribution.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace blkrr {
namespace {

TEST(Distribution, ExactBelowTheLimit) {
  Distribution d(10);
  for (double v : {9.0, 1.0, 5.0, 3.0, 7.0}) d.add(v);
  Summary s = d.summary();
  EXPECT_TRUE(s.exact);
  EXPECT_EQ(s.rel_error, 0);
  EXPECT_DOUBLE_EQ(s.p90, 8.2);  // as summarize()
  EXPECT_DOUBLE_EQ(s.p50, 5);
  EXPECT_NEAR(s.stddev, 3.16227766, 1e-8);
  auto j = to_json(s);
  EXPECT_EQ(j["percentiles"], "exact");
  EXPECT_EQ(j["percentile_rel_error"], 0.0);
}

TEST(Distribution, HistogramPastTheLimit) {
  Distribution d(100);
  for (int i = 1; i <= 1000; ++i) d.add(i);
  EXPECT_FALSE(d.exact());
  Summary s = d.summary();
  EXPECT_FALSE(s.exact);
  EXPECT_EQ(s.rel_error, LogHistogram::kRelError);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 1000);
  EXPECT_DOUBLE_EQ(s.mean, 500.5);
  EXPECT_NEAR(s.p50, 500.5, 500.5 * LogHistogram::kRelError);
  EXPECT_NEAR(s.p99, 990.01, 990.01 * LogHistogram::kRelError);
  EXPECT_EQ(to_json(s)["percentiles"], "histogram");
}

TEST(Distribution, MergeSpillsWhenTheSumIsTooLarge) {
  Distribution a(3), b(3);
  a.add(1);
  a.add(2);
  b.add(3);
  b.add(4);
  a.merge(b);
  EXPECT_FALSE(a.exact());
  EXPECT_EQ(a.count(), 4u);
  Distribution c(10), e(10);
  c.add(2);
  e.add(1);
  c.merge(e);
  EXPECT_TRUE(c.exact());
  EXPECT_DOUBLE_EQ(c.percentile(50), 1.5);
}

TEST(Distribution, DefaultLimitIsSettable) {
  const uint64_t old = Distribution::default_exact_limit();
  EXPECT_EQ(old, Distribution::kDefaultExactLimit);
  Distribution::set_default_exact_limit(0);
  Distribution d;
  d.add(1);
  EXPECT_FALSE(d.exact());
  Distribution::set_default_exact_limit(old);
}

}  // namespace
}  // namespace blkrr
