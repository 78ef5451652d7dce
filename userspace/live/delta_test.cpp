#include "live/delta.h"

#include <gtest/gtest.h>

#include <cstring>

namespace blkrr::live {
namespace {

AggEntry entry(uint32_t pid, const char* comm, Op dir, uint64_t reqs, uint64_t bytes, uint64_t dt) {
  AggEntry e;
  e.key.pid = pid;
  e.key.tid = pid;
  e.key.dev = make_dev(7, 0);
  e.key.disk = make_dev(7, 0);
  e.key.dir = dir;
  std::memcpy(e.key.comm.data(), comm, std::strlen(comm));
  e.value = {reqs, bytes, dt, dt * 2};
  return e;
}

TEST(AggDelta, FirstSnapshotIsEverything) {
  AggDelta d;
  auto out = d.update({entry(1, "a", Op::kRead, 3, 12288, 300)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value.requests, 3u);
  EXPECT_EQ(out[0].value.bytes, 12288u);
  EXPECT_EQ(out[0].value.disk_time_ns, 300u);
  EXPECT_EQ(out[0].value.latency_ns, 600u);
}

TEST(AggDelta, DifferencesAndUnchangedEntriesLeftOut) {
  AggDelta d;
  (void)d.update({entry(1, "a", Op::kRead, 3, 300, 30), entry(2, "b", Op::kWrite, 1, 100, 10)});
  auto out =
      d.update({entry(1, "a", Op::kRead, 5, 700, 80), entry(2, "b", Op::kWrite, 1, 100, 10)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key.pid, 1u);
  EXPECT_EQ(out[0].value.requests, 2u);
  EXPECT_EQ(out[0].value.bytes, 400u);
  EXPECT_EQ(out[0].value.disk_time_ns, 50u);
}

// The kernel keeps the counters of a process that exited: its last interval
// still shows, once; a process seen only between two refreshes shows too.
TEST(AggDelta, ExitedProcessesAppearInTheirLastInterval) {
  AggDelta d;
  (void)d.update({entry(10, "short", Op::kRead, 1, 4096, 5)});
  auto out = d.update(
      {entry(10, "short", Op::kRead, 4, 16384, 20), entry(11, "blip", Op::kWrite, 2, 8192, 7)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].key.pid, 10u);
  EXPECT_EQ(out[0].value.requests, 3u);
  EXPECT_EQ(out[1].key.pid, 11u);
  EXPECT_EQ(out[1].value.bytes, 8192u);
  // Both gone from /proc now; nothing new in the kernel map: nothing shown.
  out = d.update(
      {entry(10, "short", Op::kRead, 4, 16384, 20), entry(11, "blip", Op::kWrite, 2, 8192, 7)});
  EXPECT_TRUE(out.empty());
  // Entries removed from the kernel map are forgotten without a negative delta.
  out = d.update({});
  EXPECT_TRUE(out.empty());
}

TEST(AggDelta, RecreatedEntryCountsFromZero) {
  AggDelta d;
  (void)d.update({entry(1, "a", Op::kRead, 10, 1000, 100)});
  auto out = d.update({entry(1, "a", Op::kRead, 2, 200, 20)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value.requests, 2u);
  EXPECT_EQ(out[0].value.bytes, 200u);
}

TEST(AggDelta, DuplicateKeysAreSummed) {
  AggDelta d;
  auto out = d.update({entry(1, "a", Op::kRead, 1, 10, 1), entry(1, "a", Op::kRead, 2, 20, 2)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value.requests, 3u);
  EXPECT_EQ(out[0].value.bytes, 30u);
}

TEST(BusyDelta, BusyAndRequestsAreDeltasPendingIsCurrent) {
  BusyDelta d;
  auto out = d.update({{make_dev(7, 0), 1000, 3, 10}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].busy_ns, 1000u);
  out = d.update({{make_dev(7, 0), 1500, 1, 14}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].busy_ns, 500u);
  EXPECT_EQ(out[0].requests, 4u);
  EXPECT_EQ(out[0].pending, 1u);
}

TEST(CounterDelta, OnlyGrowthIsReported) {
  CounterDelta d;
  auto out = d.update({{"ringbuf_drops", 0}, {"lost_completions", 2}});
  EXPECT_EQ(out, (Counters{{"lost_completions", 2}}));
  out = d.update({{"ringbuf_drops", 5}, {"lost_completions", 2}});
  EXPECT_EQ(out, (Counters{{"ringbuf_drops", 5}}));
}

}  // namespace
}  // namespace blkrr::live

namespace blkrr::live {
namespace {

// An exited task's entry was removed from the kernel map after its final
// values were counted: the same key created again (a reused pid) counts from
// zero, even when its new values exceed the old ones.
TEST(AggDelta, ForgottenKeyStartsFromZero) {
  AggDelta d;
  (void)d.update({entry(1, "a", Op::kRead, 10, 1000, 100), entry(2, "b", Op::kRead, 1, 1, 1)});
  EXPECT_EQ(d.size(), 2u);
  d.forget({entry(1, "a", Op::kRead, 0, 0, 0).key});
  EXPECT_EQ(d.size(), 1u);
  auto out = d.update({entry(1, "a", Op::kRead, 12, 1200, 120), entry(2, "b", Op::kRead, 1, 1, 1)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value.requests, 12u);
  EXPECT_EQ(out[0].value.bytes, 1200u);
  EXPECT_EQ(out[0].value.disk_time_ns, 120u);
}

TEST(AggDelta, DeltasCarryUidAndPpidFromTheKernel) {
  AggDelta d;
  AggEntry unknown = entry(5, "x", Op::kRead, 1, 10, 1);
  AggEntry known = entry(5, "x", Op::kRead, 2, 20, 2);
  known.uid = 1001;
  known.ppid = 77;
  auto out = d.update({unknown, known});  // the known one of two copies wins
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value.requests, 3u);
  EXPECT_EQ(out[0].uid, 1001u);
  EXPECT_EQ(out[0].ppid, 77u);
  out = d.update({entry(6, "y", Op::kWrite, 1, 10, 1)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].uid, kNoUid);
  EXPECT_EQ(out[0].ppid, 0u);
}

TEST(AggDelta, LatencyHistogramDifferences) {
  AggDelta d;
  auto a = entry(1, "a", Op::kRead, 3, 300, 30);
  a.value.latency_hist[5] = 3;
  (void)d.update({a});
  a.value.requests = 5;
  a.value.latency_hist[5] = 4;
  a.value.latency_hist[7] = 1;
  auto out = d.update({a});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].value.latency_hist[5], 1u);
  EXPECT_EQ(out[0].value.latency_hist[7], 1u);
  EXPECT_EQ(out[0].value.latency_hist[0], 0u);
}

}  // namespace
}  // namespace blkrr::live
