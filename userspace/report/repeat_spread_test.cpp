// The spread of repeated replays by timing: exact statistics on constructed
// values, the grouping, the error against the original and the ranking.
#include "report/repeat_spread.h"

#include <gtest/gtest.h>

#include <cmath>

namespace blkrr::report {
namespace {

RepeatRun run(const std::string& timing, const std::string& label, double span, double iops,
              std::optional<double> p99 = std::nullopt) {
  RepeatRun r{timing, label, {}};
  r.values[RepeatMetric::kSpan] = span;
  r.values[RepeatMetric::kIops] = iops;
  r.values[RepeatMetric::kLatencyP99] = p99;
  return r;
}

RepeatValues original(double span, double iops) {
  RepeatValues v;
  v[RepeatMetric::kSpan] = span;
  v[RepeatMetric::kIops] = iops;
  v[RepeatMetric::kLatencyP99] = 2.0;
  return v;
}

TEST(RepeatSpread, MeanSdRangeAndErrorOfOneTiming) {
  // Spans 9, 10, 11, 12 s against an original of 10 s.
  const auto t = timing_spreads({run("dependency", "a", 9, 100), run("dependency", "b", 10, 90),
                                 run("dependency", "c", 11, 80), run("dependency", "d", 12, 75)},
                                original(10, 100));
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].labels, (std::vector<std::string>{"a", "b", "c", "d"}));
  const MetricSpread& s = t[0][RepeatMetric::kSpan];
  EXPECT_EQ(s.over.count, 4u);
  EXPECT_DOUBLE_EQ(s.over.mean, 10.5);
  EXPECT_DOUBLE_EQ(s.over.stddev, std::sqrt(5.0 / 3.0));  // sample sd of 9..12
  EXPECT_DOUBLE_EQ(s.over.min, 9);
  EXPECT_DOUBLE_EQ(s.over.max, 12);
  EXPECT_DOUBLE_EQ(*s.original, 10);
  EXPECT_DOUBLE_EQ(*s.error_rel, 0.05);
  EXPECT_DOUBLE_EQ(*s.error_max_rel, 0.2);  // 12 s is the farthest
  const MetricSpread& i = t[0][RepeatMetric::kIops];
  EXPECT_DOUBLE_EQ(i.over.mean, 86.25);
  EXPECT_DOUBLE_EQ(*i.error_rel, -0.1375);
  EXPECT_DOUBLE_EQ(*i.error_max_rel, -0.25);
  EXPECT_DOUBLE_EQ(*t[0].score(), 0.1375);
  // No replay had a latency: nothing to summarise, but the original's value is kept.
  EXPECT_EQ(t[0][RepeatMetric::kLatencyP99].over.count, 0u);
  EXPECT_FALSE(t[0][RepeatMetric::kLatencyP99].error_rel.has_value());
}

TEST(RepeatSpread, GroupsByTimingAndRanksByTheLargerOfSpanAndIopsError) {
  const auto t =
      timing_spreads({run("timestamp", "t1", 6, 160, 1.0), run("dependency", "d1", 10.2, 98, 2.2),
                      run("timestamp", "t2", 6.2, 158, 1.1), run("dependency", "d2", 9.8, 102, 1.8),
                      run("fullspeed", "f1", 0.5, 2000)},
                     original(10, 100));
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].timing, "timestamp");  // in order of first appearance
  EXPECT_EQ(t[1].timing, "dependency");
  EXPECT_EQ(t[2].timing, "fullspeed");
  EXPECT_EQ(t[0].labels, (std::vector<std::string>{"t1", "t2"}));
  EXPECT_NEAR(*t[1][RepeatMetric::kSpan].error_rel, 0.0, 1e-12);
  EXPECT_NEAR(*t[1][RepeatMetric::kLatencyP99].error_rel, 0.0, 1e-12);
  EXPECT_NEAR(*t[0].score(), 0.59, 1e-12);  // IOPS +59 % beats span -39 %
  EXPECT_DOUBLE_EQ(*t[2].score(), 19.0);
  EXPECT_EQ(t[2][RepeatMetric::kSpan].over.count, 1u);
  EXPECT_DOUBLE_EQ(t[2][RepeatMetric::kSpan].over.stddev, 0);
  ASSERT_NE(best_timing(t), nullptr);
  EXPECT_EQ(best_timing(t)->timing, "dependency");
  EXPECT_EQ(best_timing_sentence(t),
            "dependency timing reproduced the original best (2 replays): span +0.0 % (sd 2.8 %), "
            "IOPS +0.0 % (sd 2.8 %); timestamp: span -39.0 % (sd 1.4 %), IOPS +59.0 % (sd 1.4 %); "
            "fullspeed: span -95.0 %, IOPS +1900.0 %");
}

TEST(RepeatSpread, NoScoreWithoutTheOriginalsValues) {
  RepeatValues none;
  const auto t = timing_spreads({run("timestamp", "a", 1, 10)}, none);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_FALSE(t[0].score().has_value());
  EXPECT_EQ(best_timing(t), nullptr);
  EXPECT_EQ(best_timing_sentence(t), "");
  EXPECT_DOUBLE_EQ(t[0][RepeatMetric::kSpan].over.mean, 1);
  // One timing only: stated against the original, not called the best.
  const auto one = timing_spreads({run("timestamp", "a", 11, 10)}, original(10, 10));
  EXPECT_EQ(best_timing_sentence(one),
            "timestamp timing against the original (1 replay): span +10.0 %, IOPS +0.0 %");
  EXPECT_TRUE(timing_spreads({}, original(1, 1)).empty());
}

}  // namespace
}  // namespace blkrr::report
