#include "validate/replay_adapter.h"

#include <gtest/gtest.h>

namespace blkrr::validate {
namespace {

replay::ReplayRecord rec(uint64_t seq, uint64_t sector, uint32_t sectors, Op op, uint8_t flags) {
  replay::ReplayRecord r;
  r.req.seq = seq;
  r.req.orig_sector = sector * 3;  // before wraparound: not what the device saw
  r.req.sector = sector;
  r.req.sectors = sectors;
  r.req.op = op;
  r.submit_ns = 1000;
  r.complete_ns = 1500;
  r.flags = flags;
  return r;
}

TEST(ReplayAdapter, ConvertsRecordsOnTheMonotonicClock) {
  ValidatorSink sink;
  std::vector<replay::ReplayRecord> recs = {
      rec(0, 10, 8, Op::kRead, 0), rec(1, 20, 8, Op::kWrite, replay::kReplayDropped),
      rec(2, 30, 8, Op::kWrite, replay::kReplayError | replay::kReplayPushedBack),
      rec(3, 40, 8, Op::kRead, replay::kReplayNotStarted), rec(4, 0, 8, Op::kFlush, 0)};
  sink.on_records(recs);
  sink.set_start(1'000'000);
  auto out = sink.take();
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].status, ReplayStatus::kDone);
  EXPECT_EQ(out[0].sector, 10u);
  EXPECT_EQ(out[0].submit_ns, 1'001'000u);
  EXPECT_EQ(out[0].complete_ns, 1'001'500u);
  EXPECT_EQ(out[1].status, ReplayStatus::kDropped);
  EXPECT_EQ(out[1].submit_ns, 0u);  // not submitted: no times, start not added
  EXPECT_EQ(out[1].complete_ns, kNoTime);
  EXPECT_EQ(out[2].status, ReplayStatus::kFailed);
  EXPECT_EQ(out[2].submit_ns, 1'001'000u);
  EXPECT_EQ(out[2].complete_ns, 1'001'500u);
  EXPECT_EQ(out[3].status, ReplayStatus::kNotStarted);
  EXPECT_EQ(out[4].sectors, 0u);
  EXPECT_EQ(out[4].op, Op::kFlush);
  EXPECT_TRUE(sink.take().empty());
}

}  // namespace
}  // namespace blkrr::validate
