#include "converters/filters.h"

#include <gtest/gtest.h>

namespace blkrr {
namespace {

// An option string that cannot be used is a usage error (exit status 2).
TEST(Filters, ParsesOptionsAndRejectsBadOnes) {
  Transform t;
  EXPECT_TRUE(parse_slip("1000:-8", t).ok());
  EXPECT_EQ(t.slip_every, 1000u);
  EXPECT_EQ(t.slip_sectors, -8);
  EXPECT_EQ(parse_slip("0:8", t).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_slip("10", t).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_slip("a:8", t).error().kind, ErrorKind::kUsage);
  EXPECT_TRUE(parse_subst("W=R", t).ok());
  EXPECT_EQ(t.subst_from, Op::kWrite);
  EXPECT_EQ(t.subst_to, Op::kRead);
  EXPECT_EQ(parse_subst("W", t).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_subst("W=X", t).error().kind, ErrorKind::kUsage);
  EXPECT_TRUE(parse_spread("2.5", t).ok());
  EXPECT_EQ(t.spread_align, 8u);
  EXPECT_EQ(parse_spread("0", t).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_spread("2:0", t).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_spread("2:8:x", t).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_spread("2:8:1:1", t).error().kind, ErrorKind::kUsage);
  EXPECT_TRUE(parse_resize("2", t).ok());
  EXPECT_EQ(parse_resize("2:1", t).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_resize("2:9:1", t).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_resize("-1", t).error().kind, ErrorKind::kUsage);
  Selection s;
  EXPECT_TRUE(parse_window("10m:30s", s).ok());
  EXPECT_EQ(s.window_start_ns, 600'000'000'000);
  EXPECT_EQ(s.window_len_ns, 30'000'000'000);
  EXPECT_EQ(parse_window("10", s).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_window("10:0", s).error().kind, ErrorKind::kUsage);
  uint32_t mask = 0;
  EXPECT_TRUE(parse_op_list("R,write,F", mask).ok());
  EXPECT_EQ(mask, (1u << 0) | (1u << 1) | (1u << 2));
  EXPECT_EQ(parse_op_list("R,X", mask).error().kind, ErrorKind::kUsage);
  std::vector<uint32_t> pids;
  EXPECT_TRUE(parse_pid_list("1,22,333", pids).ok());
  EXPECT_EQ(pids.size(), 3u);
  EXPECT_EQ(parse_pid_list("1,,2", pids).error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_pid_list("99999999999", pids).error().kind, ErrorKind::kUsage);
}

TEST(Filters, SelectionMatchesPidOrTgidCommCgroupOps) {
  Request r;
  r.pid = 11;
  r.tgid = 10;
  r.cgroup_id = 5;
  r.op = Op::kWrite;
  r.set_comm("mysqld");
  Selection s;
  EXPECT_TRUE(s.matches(r));
  s.pids = {10};
  EXPECT_TRUE(s.matches(r));  // the process id selects its threads
  s.pids = {12};
  EXPECT_FALSE(s.matches(r));
  s = {};
  s.comms = {"mysql"};
  EXPECT_FALSE(s.matches(r));
  s.comms = {"mysqld"};
  EXPECT_TRUE(s.matches(r));
  s.cgroups = {4};
  EXPECT_FALSE(s.matches(r));
  s = {};
  s.op_mask = 1u << static_cast<unsigned>(Op::kRead);
  EXPECT_FALSE(s.matches(r));
}

TEST(Filters, TransformOrderAndClamps) {
  Transform t;
  ASSERT_TRUE(parse_slip("1:-100", t).ok());
  Request r;
  r.sector = 50;
  r.bytes = 4096;
  t.apply(r);
  EXPECT_EQ(r.sector, 0u);  // never below sector 0
  Transform u;
  ASSERT_TRUE(parse_resize("0.01", u).ok());
  r.bytes = 4096;
  u.apply(r);
  EXPECT_EQ(r.bytes, 512u);  // at least one sector by default
}

}  // namespace
}  // namespace blkrr
