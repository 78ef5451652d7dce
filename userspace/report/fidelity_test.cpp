#include "report/fidelity.h"

#include <gtest/gtest.h>

namespace blkrr::report {
namespace {

TEST(KolmogorovSmirnov, SortedSamples) {
  EXPECT_DOUBLE_EQ(ks_distance_sorted({1, 2, 3, 4}, {3, 4, 5, 6}), 0.5);
  EXPECT_NEAR(ks_distance_sorted({1, 2, 3}, {1.5}), 2.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(ks_distance_sorted({1, 2}, {1, 2}), 0.0);
  EXPECT_DOUBLE_EQ(ks_distance_sorted({1, 2}, {5, 6}), 1.0);
  EXPECT_DOUBLE_EQ(ks_distance_sorted({}, {1}), 0.0);
}

TEST(KolmogorovSmirnov, WeightedLevels) {
  // p = .25 .25 .5, q = 0 .5 .5: CDFs .25 .5 1 and 0 .5 1.
  EXPECT_DOUBLE_EQ(ks_distance_weights({1, 1, 2}, {0, 2, 2}), 0.25);
  // Different lengths: q has mass on level 3.
  EXPECT_DOUBLE_EQ(ks_distance_weights({1}, {1, 0, 0, 1}), 0.5);
}

TEST(Reordering, Rfc4737) {
  auto r = rfc4737_reordering({1, 2, 4, 3, 5, 2, 6});
  EXPECT_EQ(r.total, 7u);
  EXPECT_EQ(r.reordered, 2u);
  EXPECT_NEAR(r.percent(), 200.0 / 7.0, 1e-12);
  EXPECT_EQ(rfc4737_reordering({5, 5, 5}).reordered, 0u);
  EXPECT_EQ(rfc4737_reordering({3, 1, 2}).reordered, 2u);
  EXPECT_DOUBLE_EQ(rfc4737_reordering({}).percent(), 0.0);
}

TEST(Uncertainty, TwoReplaysWithReference) {
  auto u = uncertainty({9, 11}, 10.0);
  EXPECT_EQ(u.n, 2u);
  EXPECT_DOUBLE_EQ(u.mean, 10.0);
  EXPECT_NEAR(u.reproducibility, 1.4142135623730951, 1e-12);
  EXPECT_NEAR(u.reproducibility_rel, 0.14142135623730951, 1e-12);
  ASSERT_TRUE(u.bias_rel.has_value());
  EXPECT_NEAR(*u.bias_rel, 0.1, 1e-12);
  EXPECT_NEAR(u.combined_rel, 0.17320508075688773, 1e-12);
  EXPECT_NEAR(u.expanded_rel, 0.34641016151377546, 1e-12);
}

TEST(Uncertainty, SingleReplayAndNoReference) {
  auto one = uncertainty({12}, 10.0);
  EXPECT_DOUBLE_EQ(one.reproducibility, 0.0);
  EXPECT_NEAR(*one.bias_rel, 0.2, 1e-12);
  EXPECT_NEAR(one.combined_rel, 0.2, 1e-12);
  EXPECT_NEAR(one.expanded_rel, 0.4, 1e-12);
  auto noref = uncertainty({9, 11}, std::nullopt);
  EXPECT_FALSE(noref.bias_rel.has_value());
  EXPECT_NEAR(noref.combined_rel, 0.14142135623730951, 1e-12);
  // Bias of a biased but reproducible replay: 3 replays at +10%.
  auto biased = uncertainty({110, 110, 110}, 100.0);
  EXPECT_DOUBLE_EQ(biased.reproducibility, 0.0);
  EXPECT_NEAR(*biased.bias_rel, 0.1, 1e-12);
}

}  // namespace
}  // namespace blkrr::report
