#include "core/request.h"

#include <gtest/gtest.h>

namespace blkrr {
namespace {

TEST(Request, DevEncodingRoundTrips) {
  DevT d = make_dev(259, 1048575);
  EXPECT_EQ(dev_major(d), 259u);
  EXPECT_EQ(dev_minor(d), 1048575u);
  EXPECT_EQ(dev_to_string(make_dev(8, 2)), "8:2");
}

TEST(Request, OpNamesAndLetters) {
  EXPECT_EQ(op_name(Op::kWriteZeroes), "write-zeroes");
  EXPECT_EQ(op_letter(Op::kDiscard), 'D');
  EXPECT_EQ(parse_op("write"), Op::kWrite);
  EXPECT_EQ(parse_op("r"), Op::kRead);
  EXPECT_EQ(parse_op("F"), Op::kFlush);
  EXPECT_FALSE(parse_op("bogus").has_value());
}

TEST(Request, FlagsDecode) {
  EXPECT_EQ(flags_to_string(0), "");
  EXPECT_EQ(flags_to_string(kFlagSync | kFlagFua | kFlagReadahead), "sync,fua,readahead");
  EXPECT_EQ(rwbs(Op::kWrite, kFlagSync), "WS");
  EXPECT_EQ(rwbs(Op::kFlush, kFlagPreflush), "FF");
  EXPECT_EQ(rwbs(Op::kWrite, kFlagPreflush | kFlagFua | kFlagSync), "FWFS");
  EXPECT_EQ(rwbs(Op::kRead, kFlagReadahead), "RA");
  EXPECT_EQ(rec_flags_to_string(kRecCompletionNotSeen | kRecPartial),
            "completion-not-seen,partial");
}

TEST(Request, CommIsTruncatedAndTerminated) {
  Request r;
  r.set_comm("a-very-long-process-name");
  EXPECT_EQ(r.comm_view(), "a-very-long-pro");
  r.set_comm("dd");
  EXPECT_EQ(r.comm_view(), "dd");
}

TEST(Request, LatencyOnlyWhenCompleted) {
  Request r;
  r.issue_ns = 100;
  EXPECT_FALSE(r.completed());
  EXPECT_EQ(r.latency_ns(), 0u);
  r.complete_ns = 350;
  EXPECT_EQ(r.latency_ns(), 250u);
}

}  // namespace
}  // namespace blkrr
