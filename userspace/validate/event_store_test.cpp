#include "validate/event_store.h"

#include <gtest/gtest.h>

#include <string>

namespace blkrr::validate {
namespace {

Request make(uint64_t i) {
  Request r;
  r.issue_ns = 1'000'000 + i * 1000;
  r.complete_ns = i % 7 == 0 ? kNoTime : r.issue_ns + 500 + i;
  r.disk_time_ns = 77;  // not kept
  r.sector = i * 8;
  r.cgroup_id = 99;  // not kept
  r.bytes = 4096 + static_cast<uint32_t>(i % 3) * 512;
  r.dev = make_dev(7, 0);
  r.part = i % 5 == 0 ? make_dev(259, 1) : make_dev(7, 0);
  r.pid = 1000 + static_cast<uint32_t>(i % 4);
  r.tgid = 1000;
  r.error = i % 11 == 0 ? -5 : 0;
  r.op = i % 2 ? Op::kWrite : Op::kRead;
  r.flags = static_cast<uint16_t>(i & 0x1ff);
  r.rec_flags = static_cast<uint8_t>(i % 32);
  std::string name = "blkrr-replay-";
  name += std::to_string(i % 4);
  r.set_comm(i % 13 == 0 ? std::string("dd") : name);
  return r;
}

TEST(EventStore, EveryFieldTheValidatorUsesSurvivesAcrossChunks) {
  EventStore st;
  const uint64_t n = 2 * EventStore::kChunk + 123;  // three chunks
  for (uint64_t i = 0; i < n; i++) st.add(make(i));
  ASSERT_EQ(st.size(), n);
  auto out = st.take();
  ASSERT_EQ(out.size(), n);
  EXPECT_EQ(st.size(), 0u);
  for (uint64_t i = 0; i < n; i++) {
    Request w = make(i);
    const Request& g = out[i];
    ASSERT_EQ(g.issue_ns, w.issue_ns) << i;
    ASSERT_EQ(g.complete_ns, w.complete_ns) << i;
    ASSERT_EQ(g.sector, w.sector) << i;
    ASSERT_EQ(g.bytes, w.bytes) << i;
    ASSERT_EQ(g.dev, w.dev) << i;
    ASSERT_EQ(g.part, w.part) << i;
    ASSERT_EQ(g.pid, w.pid) << i;
    ASSERT_EQ(g.tgid, w.tgid) << i;
    ASSERT_EQ(g.error, w.error) << i;
    ASSERT_EQ(g.op, w.op) << i;
    ASSERT_EQ(g.flags, w.flags) << i;
    ASSERT_EQ(g.rec_flags, w.rec_flags) << i;
    ASSERT_EQ(g.comm_view(), w.comm_view()) << i;
    ASSERT_EQ(g.disk_time_ns, 0u) << i;
    ASSERT_EQ(g.cgroup_id, 0u) << i;
  }
  EXPECT_EQ(st.table_overflows(), 0u);
}

TEST(EventStore, EmptyStoreGivesNothing) {
  EventStore st;
  EXPECT_EQ(st.size(), 0u);
  EXPECT_TRUE(st.take().empty());
}

TEST(EventStore, TooManyTaskNamesFallBackToTheLastAndAreCounted) {
  EventStore st;
  Request r = make(1);
  for (int i = 0; i < 65535 + 3; i++) {
    std::string name = std::to_string(i);
    name.insert(0, 1, 't');
    r.set_comm(name);
    st.add(r);
  }
  EXPECT_EQ(st.table_overflows(), 3u);
  auto out = st.take();
  ASSERT_EQ(out.size(), 65538u);
  EXPECT_EQ(out[0].comm_view(), "t0");
  EXPECT_EQ(out[65534].comm_view(), "t65534");
  EXPECT_EQ(out[65537].comm_view(), "t65534");
}

}  // namespace
}  // namespace blkrr::validate
