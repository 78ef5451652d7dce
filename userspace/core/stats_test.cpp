#include "core/stats.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace blkrr {
namespace {

TEST(Stats, PercentilesInterpolateBetweenRanks) {
  std::vector<double> v{1, 2, 3, 4};
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 100), 4);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 75), 3.25);
  EXPECT_DOUBLE_EQ(percentile_sorted({}, 50), 0);
}

TEST(Stats, SummaryOfKnownValues) {
  std::vector<double> v{9, 1, 5, 3, 7};
  Summary s = summarize(v);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.mean, 5);
  EXPECT_DOUBLE_EQ(s.p50, 5);
  EXPECT_NEAR(s.stddev, 3.16227766, 1e-8);  // sqrt(10)
  EXPECT_DOUBLE_EQ(s.p90, 8.2);
  auto j = to_json(s);
  EXPECT_DOUBLE_EQ(j["p50"].get<double>(), 5);
  EXPECT_TRUE(j.contains("p999"));
  EXPECT_FALSE(j.contains("median"));  // one name per percentile: p50, p90, p99, p999
  // Durations in microseconds become integer nanoseconds.
  auto n = to_json_ns(s, 1000);
  EXPECT_EQ(n["p90"], 8200);
  EXPECT_EQ(n["stddev"], 3162);
  EXPECT_TRUE(n["p50"].is_number_integer());
  EXPECT_EQ(n["count"], 5u);
}

TEST(Stats, RunningStatsMatchesBatch) {
  RunningStats rs;
  for (double x : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) rs.add(x);
  EXPECT_DOUBLE_EQ(rs.mean(), 5);
  EXPECT_NEAR(rs.stddev(), 2.138089935, 1e-8);
  EXPECT_DOUBLE_EQ(rs.min(), 2);
  EXPECT_DOUBLE_EQ(rs.max(), 9);
}

TEST(Stats, PercentileNeedsEnoughSamples) {
  EXPECT_FALSE(percentile_supported(0, 50));
  EXPECT_FALSE(percentile_supported(1, 50));
  EXPECT_TRUE(percentile_supported(2, 50));
  EXPECT_FALSE(percentile_supported(19, 95));
  EXPECT_TRUE(percentile_supported(20, 95));
  EXPECT_FALSE(percentile_supported(99, 99));
  EXPECT_TRUE(percentile_supported(100, 99));
  EXPECT_FALSE(percentile_supported(999, 99.9));
  EXPECT_TRUE(percentile_supported(1000, 99.9));
  EXPECT_TRUE(percentile_supported(1, 100));  // the maximum
}

TEST(Stats, ThreeSignificantDigits) {
  EXPECT_EQ(fmt_significant(0), "0");
  EXPECT_EQ(fmt_significant(123456), "123456");
  EXPECT_EQ(fmt_significant(12.3456), "12.3");
  EXPECT_EQ(fmt_significant(1.23456), "1.23");
  EXPECT_EQ(fmt_significant(0.00123456), "0.00123");
  EXPECT_EQ(fmt_significant(9.996), "10.0");
  EXPECT_EQ(fmt_significant(-0.5), "-0.500");
  EXPECT_EQ(fmt_significant(1.5e9), "1.5e+09");
  EXPECT_EQ(fmt_percentile(4.5678, 3, 99.9), "-");
  EXPECT_EQ(fmt_percentile(4.5678, 1000, 99.9), "4.57");
}

}  // namespace
}  // namespace blkrr
