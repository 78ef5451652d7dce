#include "capture/bpf_types.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "core/volume_stripes.h"

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

// The capture's piece of a stacked volume: a linear extent as it is, a
// striped member with its stripes, index, chunk, phase and disk length.
TEST(BpfTypes, StackSegCarriesTheStripe) {
  const DevT sda = make_dev(8, 0), dm0 = make_dev(253, 0);
  blkrr_seg lin = stack_seg({dm0, {100, 50, sda, 2048}});
  EXPECT_EQ(lin.vol_start, 100u);
  EXPECT_EQ(lin.len, 50u);
  EXPECT_EQ(lin.disk_start, 2048u);
  EXPECT_EQ(lin.disk_len, 50u);
  EXPECT_EQ(lin.vol, dm0);
  EXPECT_EQ(lin.disk, sda);
  EXPECT_EQ(lin.stripes, 1u);
  EXPECT_EQ(lin.chunk, 0u);
  Extent e{4, 36, sda, 1012};
  e.stripes = 3;
  e.stripe = 2;
  e.chunk = 8;
  e.phase = 4;
  blkrr_seg st = stack_seg({dm0, e});
  EXPECT_EQ(st.stripes, 3u);
  EXPECT_EQ(st.stripe, 2u);
  EXPECT_EQ(st.chunk, 8u);
  EXPECT_EQ(st.phase, 4u);
  EXPECT_EQ(st.disk_len, dev_len(e));
  EXPECT_EQ(st.len, 36u);
}

// Where a piece takes a volume bio (bpf/stack_attr.bpf.h's note_bio): for
// every bio of a striped volume with a phase (dm-crypt 20 sectors into
// three stripes of 8), each member at the first of the bio's chunk pieces on its
// disk, for the sectors of that chunk; a linear piece at the bio's first
// sector only.
TEST(BpfTypes, SegTakeIsTheFirstChunkPieceOfTheMember) {
  const DevT dm0 = make_dev(253, 0);
  auto stripes = parse_dm_target("striped", 0, 96, "3 8 8:0 1000 8:16 0 8:32 0");
  ASSERT_TRUE(stripes.ok());
  auto map = compose({{0, 60, dm0, 20}}, dm0, *stripes);
  ASSERT_TRUE(map.ok());
  ASSERT_EQ(map->size(), 3u);
  int taken = 0;
  for (uint64_t s = 0; s < 64; ++s)
    for (uint64_t n = 1; n <= 40; ++n)
      for (const auto& e : *map) {
        blkrr_seg g = stack_seg({dm0, e});
        __u64 d = 0;
        __u64 k = blkrr_seg_take(g.vol_start, g.len, g.disk_start, g.chunk, g.phase, g.stripes, s,
                                 s + n, &d);
        std::optional<Extent> want;
        for (const auto& p : chunk_pieces(*map, s, n))
          if (p.dev == e.dev) {
            want = p;
            break;
          }
        ASSERT_EQ(k != 0, want.has_value()) << s << "+" << n << " on " << dev_to_string(e.dev);
        if (!want) continue;
        EXPECT_EQ(d, want->dev_start) << s << "+" << n;
        EXPECT_EQ(k, want->len) << s << "+" << n;
        ++taken;
      }
  EXPECT_GT(taken, 2000);
  __u64 d = 0;  // linear: sectors 100..150 at 2048
  EXPECT_EQ(blkrr_seg_take(100, 50, 2048, 0, 0, 1, 120, 200, &d), 30u);
  EXPECT_EQ(d, 2068u);
  EXPECT_EQ(blkrr_seg_take(100, 50, 2048, 0, 0, 1, 90, 200, &d), 0u);  // starts before it
  EXPECT_EQ(blkrr_seg_take(100, 50, 2048, 0, 0, 1, 150, 200, &d), 0u);
}

}  // namespace
}  // namespace blkrr::capture
