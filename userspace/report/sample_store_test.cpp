#include "report/sample_store.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace blkrr::report {
namespace {

// Restores the store's memory budget at the end of a test.
class SmallBudget {
 public:
  explicit SmallBudget(uint64_t chunks) : old_(SampleStore::memory_budget()) {
    SampleStore::set_memory_budget(chunks * SampleStore::kChunk * sizeof(Sample));
  }
  ~SmallBudget() { SampleStore::set_memory_budget(old_); }

 private:
  uint64_t old_;
};

std::vector<Sample> random_samples(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Sample> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i].t_ns = rng() % 1'000'000;  // many equal keys: stability matters
    v[i].sector = rng() % 100'000;
    v[i].sectors = 8;
    v[i].op = i % 3 ? kSampleWrite : kSampleRead;
    v[i].flags = kSampleHasLatency;
    v[i].latency_ns = rng() % 5'000'000;
    v[i].delay_ns = static_cast<int64_t>(i);  // the original position
  }
  return v;
}

bool same(const Sample& a, const Sample& b) {
  return a.t_ns == b.t_ns && a.sector == b.sector && a.sectors == b.sectors && a.op == b.op &&
         a.flags == b.flags && a.delay_ns == b.delay_ns && a.latency_ns == b.latency_ns;
}

TEST(SampleStore, SpillsPastItsBudgetAndReadsBackInOrder) {
  SmallBudget budget(2);
  auto v = random_samples(100'000, 1);
  SampleStore s = SampleStore::from(v);
  ASSERT_TRUE(s.status().ok()) << s.status().error().message;
  EXPECT_TRUE(s.spilled());
  EXPECT_EQ(s.memory_samples(), 2 * SampleStore::kChunk);  // the rest is on disk
  EXPECT_EQ(s.size(), v.size());
  size_t i = 0;
  bool all_same = true;
  s.for_each([&](const Sample& x) { all_same = all_same && same(x, v[i++]); });
  EXPECT_EQ(i, v.size());
  EXPECT_TRUE(all_same);
  const SampleBounds& b = s.bounds();
  EXPECT_EQ(b.count, v.size());
  EXPECT_EQ(b.reads, static_cast<uint64_t>(std::count_if(
                         v.begin(), v.end(), [](const Sample& x) { return !x.write(); })));
  EXPECT_EQ(b.t_max, std::max_element(v.begin(), v.end(), [](const Sample& a, const Sample& c) {
                       return a.t_ns < c.t_ns;
                     })->t_ns);
  EXPECT_FALSE(b.t_sorted);
}

TEST(SampleStore, SortedCopyIsStableInMemoryAndThroughMergedRuns) {
  auto v = random_samples(50'000, 2);
  auto want = v;
  std::stable_sort(want.begin(), want.end(),
                   [](const Sample& a, const Sample& b) { return a.t_ns < b.t_ns; });
  for (size_t run : {size_t{1} << 20, size_t{4096}, size_t{777}}) {  // one run; 13 and 65 merged
    SmallBudget budget(1);
    SampleStore s = SampleStore::from(v);
    auto sorted = sorted_copy(s, SortKey::kSetPoint, run);
    ASSERT_TRUE(sorted.ok()) << sorted.error().message;
    ASSERT_EQ(sorted->size(), v.size());
    EXPECT_TRUE(sorted->bounds().t_sorted);
    size_t i = 0, wrong = 0;
    sorted->for_each([&](const Sample& x) { wrong += !same(x, want[i++]); });
    EXPECT_EQ(wrong, 0u) << "run " << run;
  }
}

TEST(SampleStore, RewriteReachesTheSpilledPart) {
  SmallBudget budget(1);
  auto v = random_samples(40'000, 3);
  SampleStore s = SampleStore::from(v);
  ASSERT_TRUE(s.spilled());
  ASSERT_TRUE(s.rewrite([](Sample& x) { x.t_ns += 5'000'000; }).ok());
  size_t i = 0, wrong = 0;
  s.for_each([&](const Sample& x) { wrong += x.t_ns != v[i++].t_ns + 5'000'000; });
  EXPECT_EQ(wrong, 0u);
  EXPECT_GE(s.bounds().t_min, 5'000'000u);
}

}  // namespace
}  // namespace blkrr::report
