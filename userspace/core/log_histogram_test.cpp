#include "core/log_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

namespace blkrr {
namespace {

TEST(LogHistogram, EmptyIsZero) {
  LogHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.percentile(50), 0);
  EXPECT_EQ(h.value_at_rank(0), 0);
}

TEST(LogHistogram, CountsMinMaxMeanAreExact) {
  LogHistogram h;
  for (double v : {3.0, -2.0, 0.0, 1000.5, 7.25}) h.add(v);
  EXPECT_EQ(h.count(), 5u);
  EXPECT_EQ(h.stats().min(), -2.0);
  EXPECT_EQ(h.stats().max(), 1000.5);
  EXPECT_DOUBLE_EQ(h.stats().mean(), (3.0 - 2.0 + 1000.5 + 7.25) / 5);
  EXPECT_EQ(h.percentile(0), -2.0);
  EXPECT_EQ(h.percentile(100), 1000.5);
  EXPECT_EQ(h.value_at_rank(1), 0.0);  // the zero is its own bucket
  EXPECT_NEAR(h.value_at_rank(2), 3.0, 3.0 * LogHistogram::kRelError);
  EXPECT_NEAR(h.value_at_rank(3), 7.25, 7.25 * LogHistogram::kRelError);
}

TEST(LogHistogram, OneValueRepeatedIsExact) {
  LogHistogram h;
  for (int i = 0; i < 1000; ++i) h.add(42.0);
  EXPECT_EQ(h.percentile(50), 42.0);  // clamped to [min, max]
  EXPECT_EQ(h.percentile(99.9), 42.0);
}

TEST(LogHistogram, MergeEqualsOneStream) {
  LogHistogram a, b, all;
  for (int i = 1; i <= 1000; ++i) {
    double v = i % 3 ? i * 1.5 : -i;
    (i % 2 ? a : b).add(v);
    all.add(v);
  }
  a.merge(b);
  EXPECT_EQ(a.count(), all.count());
  for (double p : {1.0, 25.0, 50.0, 90.0, 99.0}) EXPECT_EQ(a.percentile(p), all.percentile(p));
  EXPECT_NEAR(a.stats().stddev(), all.stats().stddev(), 1e-9);
  EXPECT_EQ(a.stats().min(), all.stats().min());
}

TEST(LogHistogram, MemoryDependsOnRangeNotCount) {
  LogHistogram h;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(1, 1e6);
  for (int i = 0; i < 200000; ++i) h.add(u(rng));
  // 20 octaves x 128 counters x 8 bytes, not 200k samples.
  EXPECT_LE(h.memory_bytes(), 21u * 128 * 8 * 2);
}

// The acceptance test: on 1 M samples of several distributions every
// percentile agrees with an exact sort within the stated relative error.
void check_against_sort(const std::function<double(std::mt19937_64&)>& draw) {
  std::mt19937_64 rng(12345);
  std::vector<double> v(1'000'000);
  LogHistogram h;
  for (double& x : v) {
    x = draw(rng);
    h.add(x);
  }
  std::sort(v.begin(), v.end());
  for (double p : {0.1, 1.0, 5.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 99.99}) {
    const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<size_t>(rank);
    const double bound =
        LogHistogram::kRelError * std::max(std::fabs(v[lo]), std::fabs(v[lo + 1])) + 1e-12;
    EXPECT_NEAR(h.percentile(p), percentile_sorted(v, p), bound) << "p" << p;
    EXPECT_LE(LogHistogram::kRelError, 0.01);  // the 1 %
  }
}

TEST(LogHistogram, MillionUniformWithinError) {
  check_against_sort([](auto& r) { return std::uniform_real_distribution<double>(5, 5000)(r); });
}

TEST(LogHistogram, MillionExponentialWithinError) {
  check_against_sort([](auto& r) { return std::exponential_distribution<double>(1 / 250.0)(r); });
}

TEST(LogHistogram, MillionLognormalWithinError) {
  check_against_sort([](auto& r) { return std::lognormal_distribution<double>(4, 2)(r); });
}

TEST(LogHistogram, MillionBimodalWithinError) {
  check_against_sort([](auto& r) {
    return std::bernoulli_distribution(0.9)(r) ? std::normal_distribution<double>(80, 5)(r)
                                               : std::normal_distribution<double>(8000, 900)(r);
  });
}

TEST(LogHistogram, MillionSignedWithinError) {  // delays may be negative
  check_against_sort([](auto& r) { return std::normal_distribution<double>(10, 40)(r); });
}

TEST(LogHistogram, MillionIntegersWithinError) {  // sizes in sectors
  check_against_sort(
      [](auto& r) { return 8.0 * static_cast<double>(std::geometric_distribution<int>(0.2)(r)); });
}

}  // namespace
}  // namespace blkrr
