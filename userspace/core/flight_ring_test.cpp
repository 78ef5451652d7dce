#include "core/flight_ring.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace blkrr {
namespace {

Request req(uint64_t issue, uint64_t sector) {
  Request r;
  r.issue_ns = issue;
  r.complete_ns = issue + 1000;
  r.sector = sector;
  r.bytes = 4096;
  r.dev = r.part = 0x700000;
  r.set_comm("fio");
  return r;
}

std::vector<uint64_t> sectors(const RingSnapshot& s) {
  std::vector<uint64_t> out;
  EXPECT_TRUE(s.for_each([&](const Request& r) {
    out.push_back(r.sector);
    return Status{};
  }));
  return out;
}

TEST(FlightRing, WindowTakesExactlyTheRequestsIssuedInIt) {
  FlightRing ring(1 << 20);
  for (uint64_t i = 0; i < 10; ++i) ring.add(req(i * 100, i));
  ASSERT_TRUE(ring.seal());
  for (uint64_t i = 10; i < 20; ++i) ring.add(req(i * 100, i));
  ASSERT_TRUE(ring.seal());
  for (uint64_t i = 20; i < 25; ++i) ring.add(req(i * 100, i));  // not sealed yet
  EXPECT_EQ(ring.records(), 25u);
  EXPECT_EQ(sectors(ring.snapshot(500, 2200)),
            (std::vector<uint64_t>{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}));
  // A block entirely before the window is not in the snapshot at all.
  EXPECT_EQ(ring.snapshot(1000, 1100).blocks.size(), 1u);
}

TEST(FlightRing, RecordsComeBackWhole) {
  FlightRing ring(1 << 20);
  Request r = req(123456789, 42);
  r.disk_time_ns = 777;
  r.op = Op::kWrite;
  r.error = -5;
  ring.add(r);
  ASSERT_TRUE(ring.seal());
  std::vector<Request> got;
  ASSERT_TRUE(ring.snapshot(0, UINT64_MAX).for_each([&](const Request& x) {
    got.push_back(x);
    return Status{};
  }));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].issue_ns, 123456789u);
  EXPECT_EQ(got[0].complete_ns, 123457789u);
  EXPECT_EQ(got[0].disk_time_ns, 777u);
  EXPECT_EQ(got[0].op, Op::kWrite);
  EXPECT_EQ(got[0].error, -5);
  EXPECT_EQ(got[0].comm_view(), "fio");
}

// The ring's blocks never leave memory: one that does not decode is a bug.
TEST(FlightRing, ABlockThatDoesNotDecodeIsInternal) {
  FlightRing ring(1 << 20);
  ring.add(req(1000, 8));
  ASSERT_TRUE(ring.seal());
  RingSnapshot s = ring.snapshot(0, UINT64_MAX);
  ASSERT_EQ(s.blocks.size(), 1u);
  auto bad = std::make_shared<RingBlock>(*s.blocks[0]);
  bad->zdata.assign(bad->zdata.size(), 0xff);
  s.blocks[0] = bad;
  auto st = s.for_each([](const Request&) { return Status{}; });
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, ErrorKind::kInternal);
}

TEST(FlightRing, EvictsOnlyBlocksIssuedEntirelyBeforeTheLimit) {
  FlightRing ring(1 << 20);
  ring.add(req(100, 1));
  ring.add(req(200, 2));
  ASSERT_TRUE(ring.seal());
  ring.add(req(300, 3));
  ring.add(req(50, 4));  // a long request completing late: its block stays
  ASSERT_TRUE(ring.seal());
  ring.evict_before(250);
  EXPECT_EQ(ring.records(), 2u);
  EXPECT_EQ(sectors(ring.snapshot(0, 1000)), (std::vector<uint64_t>{3, 4}));
  ring.evict_before(301);
  EXPECT_EQ(ring.records(), 0u);
  EXPECT_EQ(ring.evicted_by_memory(), 0u);
}

TEST(FlightRing, MemoryBoundDropsTheOldestBlocksAndSaysWhere) {
  FlightRing ring(4096);  // a few blocks of 100 records
  uint64_t t = 0;
  for (int b = 0; b < 50; ++b) {
    for (int i = 0; i < 100; ++i, t += 1000) ring.add(req(t, t * 7919 % 1000003));
    ASSERT_TRUE(ring.seal());
    EXPECT_LE(ring.bytes(), 4096u);
  }
  EXPECT_GT(ring.evicted_by_memory(), 0u);
  EXPECT_EQ(ring.evicted_by_memory() + ring.records(), 5000u);
  // Everything kept was issued after the floor, everything before it is gone.
  const auto kept = ring.snapshot(0, UINT64_MAX);
  uint64_t n = 0;
  ASSERT_TRUE(kept.for_each([&](const Request& r) {
    EXPECT_GE(r.issue_ns, ring.memory_floor_ns());
    ++n;
    return Status{};
  }));
  EXPECT_EQ(n, ring.records());
  EXPECT_EQ(ring.memory_floor_ns(), (ring.evicted_by_memory() - 1) * 1000 + 1);  // last evicted + 1
}

}  // namespace
}  // namespace blkrr
