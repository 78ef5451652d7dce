#include "report/histogram.h"

#include <gtest/gtest.h>

namespace blkrr::report {
namespace {

TEST(Histogram, LinearEdgesAndOutliers) {
  auto h = Histogram::linear(0, 10, 5);
  for (double v : {0.0, 1.99, 2.0, 10.0, 10.5, -1.0, 5.0}) h.add(v);
  EXPECT_EQ(h.bins(), 5u);
  EXPECT_DOUBLE_EQ(h.lower(1), 2.0);
  EXPECT_EQ(h.count(0), 2u);
  EXPECT_EQ(h.count(1), 1u);
  EXPECT_EQ(h.count(2), 1u);
  EXPECT_EQ(h.count(4), 1u);
  EXPECT_EQ(h.above(), 1u);
  EXPECT_EQ(h.below(), 1u);
  EXPECT_EQ(h.total(), 7u);
}

TEST(Histogram, LogarithmicEdges) {
  auto h = Histogram::logarithmic(1, 1000, 3);
  EXPECT_NEAR(h.upper(0), 10.0, 1e-9);
  EXPECT_NEAR(h.upper(1), 100.0, 1e-9);
  for (double v : {1.0, 9.99, 10.0, 99.9, 100.0, 1000.0, 0.5}) h.add(v);
  EXPECT_EQ(h.count(0), 2u);
  EXPECT_EQ(h.count(1), 2u);
  EXPECT_EQ(h.count(2), 2u);
  EXPECT_EQ(h.below(), 1u);
}

TEST(Histogram, DegenerateRangeStillCounts) {
  auto h = Histogram::linear(3, 3, 4);
  h.add(3);
  EXPECT_EQ(h.count(0), 1u);
}

TEST(Log2Histogram, Buckets) {
  Log2Histogram h;
  for (uint64_t v : {0ull, 1ull, 2ull, 3ull, 4ull, 1023ull, 1024ull}) h.add(v);
  EXPECT_EQ(h.counts[0], 1u);
  EXPECT_EQ(h.counts[1], 1u);
  EXPECT_EQ(h.counts[2], 2u);
  EXPECT_EQ(h.counts[3], 1u);
  EXPECT_EQ(h.counts[10], 1u);
  EXPECT_EQ(h.counts[11], 1u);
  EXPECT_EQ(Log2Histogram::bucket_low(11), 1024u);
  EXPECT_EQ(h.last_used(), 11u);
  EXPECT_EQ(h.total(), 7u);
}

}  // namespace
}  // namespace blkrr::report
