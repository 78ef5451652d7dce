#include "capture/bpf_types.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <string>

namespace blkrr::capture {
namespace {

blkrr_event sample_event() {
  blkrr_event ev{};
  ev.issue_ns = 1000;
  ev.complete_ns = 5000;
  ev.disk_time_ns = 3000;
  ev.sector = 2048;
  ev.cgroup_id = 77;
  ev.bytes = 4096;
  ev.disk = (8u << 20) | 0;
  ev.part = (8u << 20) | 2;
  ev.pid = 101;
  ev.tgid = 100;
  ev.error = 10;  // BLK_STS_IOERR
  ev.flags = BLKRR_F_SYNC | BLKRR_F_FUA;
  ev.op = BLKRR_OP_WRITE;
  ev.rec_flags = BLKRR_R_PARTIAL;
  std::strcpy(ev.comm, "fio");
  return ev;
}

TEST(BpfTypes, EventToRequestCopiesEveryField) {
  Request r = event_to_request(sample_event());
  EXPECT_EQ(r.issue_ns, 1000u);
  EXPECT_EQ(r.complete_ns, 5000u);
  EXPECT_EQ(r.disk_time_ns, 3000u);
  EXPECT_EQ(r.sector, 2048u);
  EXPECT_EQ(r.cgroup_id, 77u);
  EXPECT_EQ(r.bytes, 4096u);
  EXPECT_EQ(r.dev, make_dev(8, 0));
  EXPECT_EQ(r.part, make_dev(8, 2));
  EXPECT_EQ(r.pid, 101u);
  EXPECT_EQ(r.tgid, 100u);
  EXPECT_EQ(r.error, -EIO);
  EXPECT_EQ(r.op, Op::kWrite);
  EXPECT_EQ(r.flags, kFlagSync | kFlagFua);
  EXPECT_EQ(r.rec_flags, kRecPartial);
  EXPECT_EQ(r.comm_view(), "fio");
}

TEST(BpfTypes, CommIsNulPaddedAndTruncatedTo15) {
  blkrr_event ev = sample_event();
  std::memset(ev.comm, 'x', sizeof(ev.comm));  // no terminator from the kernel
  Request r = event_to_request(ev);
  EXPECT_EQ(r.comm_view(), std::string(15, 'x'));
  EXPECT_EQ(r.comm[15], '\0');
  std::memset(ev.comm, 0, sizeof(ev.comm));
  std::strcpy(ev.comm, "ab");
  ev.comm[5] = 'z';  // garbage after the terminator is dropped
  r = event_to_request(ev);
  EXPECT_EQ(r.comm[5], '\0');
}

TEST(BpfTypes, UnknownOpBecomesOther) {
  blkrr_event ev = sample_event();
  ev.op = 200;
  EXPECT_EQ(event_to_request(ev).op, Op::kOther);
  ev.op = BLKRR_OP_FLUSH;
  ev.bytes = 0;
  Request r = event_to_request(ev);
  EXPECT_EQ(r.op, Op::kFlush);
  EXPECT_EQ(r.bytes, 0u);
}

TEST(BpfTypes, CompletionNotSeenKeepsTimeUnknown) {
  blkrr_event ev = sample_event();
  ev.complete_ns = ~0ull;
  Request r = event_to_request(ev);
  EXPECT_FALSE(r.completed());
  EXPECT_EQ(r.latency_ns(), 0u);
}

TEST(BpfTypes, InflightToRequestIsFlaggedNotSeen) {
  blkrr_inflight e{};
  e.issue_ns = 42;
  e.sector = 8;
  e.bytes = 512;
  e.disk = (7u << 20) | 1;
  e.part = e.disk;
  e.op = BLKRR_OP_READ;
  e.rec_flags = BLKRR_R_TASK_FROM_ISSUE;
  e.task.pid = 5;
  e.task.tgid = 5;
  e.disk_time_ns = 9;
  std::strcpy(e.task.comm, "kworker/0:1");
  Request r = inflight_to_request(e);
  EXPECT_EQ(r.issue_ns, 42u);
  EXPECT_FALSE(r.completed());
  EXPECT_EQ(r.rec_flags, kRecCompletionNotSeen | kRecTaskFromIssue);
  EXPECT_EQ(r.disk_time_ns, 9u);
  EXPECT_EQ(r.comm_view(), "kworker/0:1");
}

TEST(BpfTypes, BlkStatusToErrno) {
  EXPECT_EQ(blk_status_to_errno(0), 0);
  EXPECT_EQ(blk_status_to_errno(1), -EOPNOTSUPP);
  EXPECT_EQ(blk_status_to_errno(3), -ENOSPC);
  EXPECT_EQ(blk_status_to_errno(10), -EIO);
  EXPECT_EQ(blk_status_to_errno(250), -EIO);
}

TEST(BpfTypes, EveryCounterHasADistinctName) {
  std::set<std::string> names;
  for (int i = 0; i < BLKRR_CNT_NR; i++) {
    std::string n = counter_name(i);
    EXPECT_NE(n, "unknown") << i;
    EXPECT_TRUE(names.insert(n).second) << n;
  }
  EXPECT_STREQ(counter_name(BLKRR_CNT_RINGBUF_FULL), "ringbuf_reserve_failed");
}

TEST(BpfTypes, AggEntryRoundTripsToTheKernelKey) {
  blkrr_agg_key k{};
  k.cgroup_id = 77;
  k.tgid = 100;
  k.pid = 101;
  k.part = make_dev(8, 2);
  k.disk = make_dev(8, 0);
  k.op = BLKRR_OP_WRITE;
  std::strcpy(k.comm, "fio");
  blkrr_agg_val v{};
  v.requests = 3;
  v.bytes = 12288;
  v.disk_time_ns = 900;
  v.latency_ns = 1500;
  v.uid = 1000;
  v.ppid = 1;
  AggEntry e = agg_entry(k, v);
  EXPECT_EQ(e.key.pid, 100u);
  EXPECT_EQ(e.key.tid, 101u);
  EXPECT_EQ(e.key.dev, make_dev(8, 2));
  EXPECT_EQ(e.key.dir, Op::kWrite);
  EXPECT_EQ(e.value.bytes, 12288u);
  EXPECT_EQ(e.uid, 1000u);
  EXPECT_EQ(e.ppid, 1u);
  auto back = agg_kernel_keys(e.key);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(std::memcmp(&back[0], &k, sizeof(k)), 0);
  // A whole-disk key may be stored with partition 0 (kernels without a
  // partition device in the request): both forms are tried.
  k.part = 0;
  e = agg_entry(k, v);
  EXPECT_EQ(e.key.dev, k.disk);
  back = agg_kernel_keys(e.key);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].part, k.disk);
  EXPECT_EQ(std::memcmp(&back[1], &k, sizeof(k)), 0);
}

}  // namespace
}  // namespace blkrr::capture
