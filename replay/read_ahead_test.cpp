// The read-ahead queue: order, bounded memory, errors mid-stream as values,
// early stop with a reader that could go on forever, exact counters of what
// was taken.
#include "replay/read_ahead.h"

#include <gtest/gtest.h>

#include <atomic>

#include "replay/test_doubles.h"

namespace blkrr::replay {
namespace {

// Yields requests seq 0, 1, 2, ... (4 KiB reads, 1 ms apart); an error after
// `fail_after` requests, the end after `end_after` (0 = never).
class CountingSource final : public PlannedSource {
 public:
  CountingSource(uint64_t end_after, uint64_t fail_after = 0)
      : end_after_(end_after), fail_after_(fail_after) {}
  Result<bool> next(PlannedRequest& out) override {
    const uint64_t n = produced.load();
    if (fail_after_ != 0 && n == fail_after_)
      return Error("load.gz:" + std::to_string(n + 2) + ": bad line");
    if (end_after_ != 0 && n == end_after_) return false;
    out = PlannedRequest{};
    out.seq = n;
    out.due_ns = n * 1'000'000;
    out.sector = n * 8;
    out.sectors = 8;
    produced.store(n + 1);
    return true;
  }
  std::atomic<uint64_t> produced{0};

 private:
  uint64_t end_after_, fail_after_;
};

TEST(ReadAhead, DeliversEveryRequestInOrderThenTheEnd) {
  CountingSource src(1000);
  ReadAhead ra(src, {3, 2, true});
  PlannedRequest p;
  for (uint64_t i = 0; i < 1000; ++i) {
    auto r = ra.next(p);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_TRUE(*r) << "ended early at " << i;
    ASSERT_EQ(p.seq, i);
    ASSERT_EQ(p.sector, i * 8);
  }
  for (int k = 0; k < 3; ++k) {
    auto r = ra.next(p);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(*r);  // the end, again and again
  }
  EXPECT_EQ(ra.taken(), 1000u);
  EXPECT_EQ(src.produced.load(), 1000u);
}

TEST(ReadAhead, AnErrorMidStreamComesAfterEveryRequestBeforeIt) {
  CountingSource src(0, 10);
  ReadAhead ra(src, {4, 2, true});
  PlannedRequest p;
  for (uint64_t i = 0; i < 10; ++i) {
    auto r = ra.next(p);
    ASSERT_TRUE(r.ok()) << "request " << i << ": " << r.error().message;
    ASSERT_TRUE(*r);
    ASSERT_EQ(p.seq, i);
  }
  for (int k = 0; k < 2; ++k) {
    auto r = ra.next(p);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "load.gz:12: bad line");
  }
  EXPECT_EQ(src.produced.load(), 10u);
}

TEST(ReadAhead, MemoryIsBoundedAndStopEndsAnEndlessReader) {
  CountingSource src(0);  // never ends
  ReadAhead ra(src, {16, 4, true});
  ra.prefill();  // the queue is full: 4 batches
  PlannedRequest p;
  for (int i = 0; i < 5; ++i) {
    auto r = ra.next(p);
    ASSERT_TRUE(r.ok() && *r);
  }
  // Four queued batches, at most one more refilled after the first was
  // taken, and one being filled while the reader waits for room.
  EXPECT_LE(src.produced.load(), 16u * 6);
  EXPECT_GE(src.produced.load(), 16u * 4);
  ra.stop();  // returns: the reader was waiting for room, not reading
  const uint64_t produced = src.produced.load();
  EXPECT_LE(produced, 16u * 6);
  PlanCounters reader;
  reader.planned = reader.planned_reads = produced;
  reader.planned_bytes_read = produced * 4096;
  const PlanCounters c = ra.taken_counters(reader);
  EXPECT_EQ(c.planned, 5u);
  EXPECT_EQ(c.planned_reads, 5u);
  EXPECT_EQ(c.planned_bytes_read, 5u * 4096);
  EXPECT_EQ(c.last_due_ns, 4'000'000u);
}

TEST(ReadAhead, CountersOfAnInterruptedReplayCoverOnlyWhatWasTaken) {
  std::vector<Request> reqs;
  for (uint64_t i = 0; i < 100; ++i)
    reqs.push_back(testing::make_req(i * 1'000'000, i % 2 ? Op::kWrite : Op::kRead, i * 8, 8));
  testing::VectorSource vs(reqs);
  Schedule sched(ScheduleOptions{});
  auto dm = DeviceMap::create({MapMode::kWrap, AlignMode::kRound, 1u << 20, 512, 0});
  ASSERT_TRUE(dm.ok());
  Planner planner(vs, sched, *dm);
  ReadAhead ra(planner, {8, 4, true});
  ra.prefill();
  PlannedRequest p;
  for (int i = 0; i < 11; ++i) ASSERT_TRUE(*ra.next(p));
  ra.stop();
  EXPECT_GT(planner.counters().planned, 11u);  // the reader went further
  const PlanCounters c = ra.taken_counters(planner.counters());
  EXPECT_EQ(c.planned, 11u);
  EXPECT_EQ(c.planned_reads, 6u);
  EXPECT_EQ(c.planned_writes, 5u);
  EXPECT_EQ(c.planned_bytes_read, 6u * 4096);
  EXPECT_EQ(c.planned_bytes_written, 5u * 4096);
  EXPECT_EQ(c.first_due_ns, 0u);
  EXPECT_EQ(c.last_due_ns, 10'000'000u);
  EXPECT_EQ(c.last_load_ns, 10'000'000u);
}

TEST(ReadAhead, NothingTakenMeansNothingPlanned) {
  CountingSource src(50);
  ReadAhead ra(src, {8, 2, true});
  ra.prefill();
  ra.stop();
  PlanCounters reader;
  reader.planned = reader.planned_reads = src.produced.load();
  reader.first_due_ns = 0;
  reader.last_due_ns = 7'000'000;
  const PlanCounters c = ra.taken_counters(reader);
  EXPECT_EQ(c.planned, 0u);
  EXPECT_EQ(c.planned_reads, 0u);
  EXPECT_EQ(c.last_due_ns, 0u);
}

}  // namespace
}  // namespace blkrr::replay
