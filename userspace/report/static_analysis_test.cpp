#include "report/static_analysis.h"

#include <gtest/gtest.h>

namespace blkrr::report {
namespace {

Sample mk(double t_s, uint64_t sector, uint32_t sectors, bool write, uint16_t proc = kNoProc) {
  Sample s;
  s.t_ns = static_cast<uint64_t>(t_s * 1e9);
  s.sector = sector;
  s.sectors = sectors;
  s.op = write ? kSampleWrite : kSampleRead;
  s.proc = proc;
  return s;
}

// Five requests, given out of time order on purpose (native traces are in
// completion order). In time order:
//   A 0.1s R [100,108)  B 0.5s W [104,112)  C 0.9s R [50,60)
//   D 2.2s R [100,108)  E 2.7s W [200,216)
// The samples as a store sorted by `key`.
SampleStore sorted(const std::vector<Sample>& v, SortKey key) {
  auto s = sorted_copy(SampleStore::from(v), key);
  EXPECT_TRUE(s.ok());
  return s.ok() ? std::move(*s) : SampleStore();
}
std::vector<WorkingSetPoint> working_set(const std::vector<Sample>& v, uint64_t window_ns) {
  return working_sets(sorted(v, SortKey::kSector), {window_ns}, 1'000'000'000).windows[0];
}
std::vector<WorkingSetPoint> cumulative_working_set(const std::vector<Sample>& v,
                                                    uint64_t step_ns) {
  return working_sets(sorted(v, SortKey::kSector), {}, step_ns).cumulative;
}
std::vector<SeekPoint> seek_distance(const std::vector<Sample>& v, uint64_t window_ns) {
  return seek_distances(sorted(v, SortKey::kSetPoint), {window_ns})[0];
}

std::vector<Sample> five() {
  return {mk(0.5, 104, 8, true, 1), mk(0.1, 100, 8, false, 0), mk(0.9, 50, 10, false, 0),
          mk(2.7, 200, 16, true, 0), mk(2.2, 100, 8, false, 1)};
}

TEST(WorkingSet, OneSecondWindows) {
  auto v = five();
  auto ws = working_set(v, 1'000'000'000);
  ASSERT_EQ(ws.size(), 3u);
  EXPECT_EQ(ws[0].t_ns, 0u);
  EXPECT_EQ(ws[0].all, 22u);  // [50,60) + [100,112)
  EXPECT_EQ(ws[0].reads, 18u);
  EXPECT_EQ(ws[0].writes, 8u);
  EXPECT_EQ(ws[1].all, 0u);
  EXPECT_EQ(ws[2].t_ns, 2'000'000'000u);
  EXPECT_EQ(ws[2].all, 24u);
  EXPECT_EQ(ws[2].reads, 8u);
  EXPECT_EQ(ws[2].writes, 16u);
}

TEST(WorkingSet, SixSecondWindowAndCumulative) {
  auto v = five();
  auto ws = working_set(v, 6'000'000'000);
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].all, 38u);
  EXPECT_EQ(ws[0].reads, 18u);
  EXPECT_EQ(ws[0].writes, 24u);
  auto cum = cumulative_working_set(v, 1'000'000'000);
  ASSERT_EQ(cum.size(), 3u);
  EXPECT_EQ(cum[0].t_ns, 1'000'000'000u);
  EXPECT_EQ(cum[0].all, 22u);
  EXPECT_EQ(cum[1].all, 22u);
  EXPECT_EQ(cum[2].all, 38u);
  EXPECT_EQ(cum[2].reads, 18u);
  EXPECT_EQ(cum[2].writes, 24u);
}

TEST(SeekDistance, SumAverageAndTurns) {
  auto v = five();
  auto sk = seek_distance(v, 1'000'000'000);
  ASSERT_EQ(sk.size(), 3u);
  // B: 108->104 back 4; C: 112->50 back 62; D: 60->100 fwd 40; E: 108->200 fwd 92.
  EXPECT_EQ(sk[0].seeks, 2u);
  EXPECT_EQ(sk[0].backward, 2u);
  EXPECT_EQ(sk[0].sum, 66u);
  EXPECT_DOUBLE_EQ(sk[0].avg(), 33.0);
  EXPECT_DOUBLE_EQ(sk[0].turns_percent(), 100.0);
  EXPECT_EQ(sk[1].seeks, 0u);
  EXPECT_DOUBLE_EQ(sk[1].avg(), 0.0);
  EXPECT_EQ(sk[2].sum, 132u);
  EXPECT_DOUBLE_EQ(sk[2].avg(), 66.0);
  EXPECT_DOUBLE_EQ(sk[2].turns_percent(), 0.0);
  auto s6 = seek_distance(v, 6'000'000'000);
  ASSERT_EQ(s6.size(), 1u);
  EXPECT_EQ(s6[0].sum, 198u);
  EXPECT_DOUBLE_EQ(s6[0].avg(), 49.5);
  EXPECT_DOUBLE_EQ(s6[0].turns_percent(), 50.0);
}

TEST(Rates, PerSecondByDirection) {
  auto v = five();
  auto r = rates_by(SampleStore::from(v), 1'000'000'000, 2'700'000'000,
                    [](const Sample& s) { return s.t_ns; });
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].reads, 2u);
  EXPECT_EQ(r[0].read_bytes, 18u * 512);
  EXPECT_EQ(r[0].writes, 1u);
  EXPECT_EQ(r[0].write_bytes, 4096u);
  EXPECT_EQ(r[1].reads + r[1].writes, 0u);
  EXPECT_EQ(r[1].t_ns, 1'000'000'000u);
  EXPECT_EQ(r[2].reads, 1u);
  EXPECT_EQ(r[2].write_bytes, 8192u);
}

TEST(Histograms, PositionAndSize) {
  auto v = five();
  auto p = position_histogram(SampleStore::from(v), 4);
  EXPECT_EQ(p.slice_sectors, 54u);  // max end 216 / 4
  EXPECT_EQ(p.reads, (std::vector<uint64_t>{1, 2, 0, 0}));
  EXPECT_EQ(p.writes, (std::vector<uint64_t>{0, 1, 0, 1}));
  auto s = size_histogram(SampleStore::from(v));
  EXPECT_EQ(s.reads.counts[4], 3u);  // 8, 10, 8 sectors: [8,16)
  EXPECT_EQ(s.writes.counts[4], 1u);
  EXPECT_EQ(s.writes.counts[5], 1u);  // 16 sectors: [16,32)
  EXPECT_EQ(s.reads.total(), 3u);
}

TEST(PerProcess, SizesAndSeeks) {
  auto v = five();
  auto pp = per_process(sorted(v, SortKey::kSetPoint), 2);
  ASSERT_EQ(pp.size(), 2u);
  EXPECT_EQ(pp[0].sizes.total(), 3u);
  EXPECT_EQ(pp[1].sizes.total(), 2u);
  // proc 0: C seeks 62 ([32,64)), E seeks 92 ([64,128)); proc 1: B 4, D 40.
  EXPECT_EQ(pp[0].seeks.counts[6], 1u);
  EXPECT_EQ(pp[0].seeks.counts[7], 1u);
  EXPECT_EQ(pp[1].seeks.counts[3], 1u);
  EXPECT_EQ(pp[1].seeks.counts[6], 1u);
  EXPECT_EQ(pp[0].seeks.total() + pp[1].seeks.total(), 4u);
}

}  // namespace
}  // namespace blkrr::report

namespace blkrr::report {
namespace {

TEST(WorkingSet, CumulativeCreditsFirstTouchOnly) {
  // t=0.5 [10,20); t=1.5 [15,30) adds 10; t=1.7 [0,40) adds 10+10; t=2.1 [5,25) adds 0.
  std::vector<Sample> v{mk(0.5, 10, 10, false), mk(1.5, 15, 15, true), mk(1.7, 0, 40, false),
                        mk(2.1, 5, 20, true)};
  auto cum = cumulative_working_set(v, 1'000'000'000);
  ASSERT_EQ(cum.size(), 3u);
  EXPECT_EQ(cum[0].all, 10u);
  EXPECT_EQ(cum[1].all, 40u);
  EXPECT_EQ(cum[2].all, 40u);
  EXPECT_EQ(cum[1].reads, 40u);   // [10,20) then [0,40)
  EXPECT_EQ(cum[1].writes, 15u);  // [15,30)
  EXPECT_EQ(cum[2].writes, 25u);  // + [5,15)
}

}  // namespace
}  // namespace blkrr::report
