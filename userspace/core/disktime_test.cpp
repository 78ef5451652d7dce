#include "core/disktime.h"

#include <gtest/gtest.h>

#include <random>

namespace blkrr {
namespace {

constexpr uint64_t ms = 1000000;

Request req(uint64_t issue, uint64_t complete, DevT dev = make_dev(7, 0)) {
  Request r;
  r.issue_ns = issue;
  r.complete_ns = complete;
  r.dev = dev;
  return r;
}

uint64_t total(const std::vector<Request>& v) {
  uint64_t t = 0;
  for (const auto& r : v) t += r.disk_time_ns;
  return t;
}

TEST(DiskTime, FiveConcurrentRequestsChargeTheDeviceBusyTime) {
  // Paper case: five requests issued at t=0 completing at 10..50 ms.
  std::vector<Request> v;
  for (int i = 1; i <= 5; ++i) v.push_back(req(0, i * 10 * ms));
  compute_disk_times(v);
  for (const auto& r : v) EXPECT_EQ(r.disk_time_ns, 10 * ms);
  EXPECT_EQ(total(v), 50 * ms);
}

TEST(DiskTime, SparseRequestsChargeOnlyTheirOwnTime) {
  // Two requests 40 ms apart of 10 ms each charge 20 ms, not 50.
  std::vector<Request> v{req(0, 10 * ms), req(40 * ms, 50 * ms)};
  compute_disk_times(v);
  EXPECT_EQ(v[0].disk_time_ns, 10 * ms);
  EXPECT_EQ(v[1].disk_time_ns, 10 * ms);
}

TEST(DiskTime, OverlappingMixedStarts) {
  // A: 0..30, B: 10..20, C: 25..60 (overlaps A), D: 70..80 (alone).
  std::vector<Request> v{req(0, 30 * ms), req(10 * ms, 20 * ms), req(25 * ms, 60 * ms),
                         req(70 * ms, 80 * ms)};
  compute_disk_times(v);
  EXPECT_EQ(v[1].disk_time_ns, 20 * ms);  // B completes first: busy since 0
  EXPECT_EQ(v[0].disk_time_ns, 10 * ms);  // A: 20..30
  EXPECT_EQ(v[2].disk_time_ns, 30 * ms);  // C: 30..60
  EXPECT_EQ(v[3].disk_time_ns, 10 * ms);
  EXPECT_EQ(total(v), 70 * ms);
}

TEST(DiskTime, DevicesAreIndependent) {
  std::vector<Request> v{req(0, 10 * ms, make_dev(8, 0)), req(0, 10 * ms, make_dev(8, 16))};
  compute_disk_times(v);
  EXPECT_EQ(v[0].disk_time_ns, 10 * ms);
  EXPECT_EQ(v[1].disk_time_ns, 10 * ms);
}

TEST(DiskTime, RequestsWithoutCompletionAreLeftOut) {
  std::vector<Request> v{req(0, kNoTime), req(100 * ms, 110 * ms)};
  compute_disk_times(v);
  EXPECT_EQ(v[0].disk_time_ns, 0u);
  EXPECT_EQ(v[1].disk_time_ns, 10 * ms);  // the lost one does not keep the device busy
}

TEST(DiskTime, ZeroLengthRequestsDoNotLeaveTheDeviceBusy) {
  std::vector<Request> v{req(100, 100), req(200, 210)};
  compute_disk_times(v);
  EXPECT_EQ(v[0].disk_time_ns, 0u);
  EXPECT_EQ(v[1].disk_time_ns, 10u);
}

TEST(DiskTime, PendingNeverGoesBelowZero) {
  DiskTimeTracker t;
  EXPECT_EQ(t.complete(5), 5u);  // completion of a request issued before attach
  EXPECT_EQ(t.pending(), 0u);
  t.issue(10);
  EXPECT_EQ(t.pending(), 1u);
  EXPECT_EQ(t.complete(15), 5u);
  t.drop_stale();
  EXPECT_EQ(t.pending(), 0u);
}

TEST(DiskTime, StaleEntryDroppedKeepsIdleGapUncharged) {
  DiskTimeTracker t;
  t.issue(0);
  t.issue(0);  // this one's completion is never seen
  EXPECT_EQ(t.complete(10), 10u);
  t.drop_stale();  // detected and dropped: device idle again
  t.issue(100);
  EXPECT_EQ(t.complete(110), 10u);  // not 100
}

TEST(DiskTime, UnionLength) {
  EXPECT_EQ(union_length({}), 0u);
  EXPECT_EQ(union_length({{0, 10}, {5, 15}, {20, 30}, {30, 31}, {40, 40}}), 26u);
  EXPECT_EQ(union_length({{10, 20}, {0, 100}}), 100u);
}

TEST(DiskTime, RandomInterleavingsEqualUnionOfIntervals) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 200; ++round) {
    std::vector<Request> v;
    std::vector<Interval> iv;
    int n = 1 + static_cast<int>(rng() % 200);
    uint64_t spread = 1 + rng() % 10000;
    for (int i = 0; i < n; ++i) {
      uint64_t s = rng() % (spread * 1000);
      uint64_t len = 1 + rng() % 5000;
      v.push_back(req(s, s + len));
      iv.push_back({s, s + len});
    }
    compute_disk_times(v);
    ASSERT_EQ(total(v), union_length(iv)) << "round " << round;
  }
}

}  // namespace
}  // namespace blkrr
