#include "live/top_model.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "live/test_snapshot.h"

namespace blkrr::live {
namespace {

using testing::agg;
using testing::fake_lookups;
using testing::two_second_interval;

TEST(TopModel, RowsPerProcessDeviceAndDirection) {
  Snapshot s = two_second_interval();
  EXPECT_EQ(s.seq, 1u);
  EXPECT_EQ(s.interval_ns, 2'000'000'000u);
  ASSERT_EQ(s.rows.size(), 3u);
  // Sorted by bytes: dd, fio, tar.
  EXPECT_EQ(s.rows[0].comm, "dd");
  EXPECT_EQ(s.rows[0].device, "sdb");
  EXPECT_EQ(s.rows[0].dir, Op::kWrite);
  EXPECT_EQ(s.rows[0].v.bytes, 8u << 20);
  EXPECT_EQ(s.rows[1].comm, "fio");
  EXPECT_EQ(s.rows[1].pid, 100u);
  EXPECT_EQ(s.rows[1].device, "sda2");
  EXPECT_EQ(s.rows[1].tasks, 2u);  // two threads merged
  EXPECT_EQ(s.rows[1].v.requests, 384u);
  EXPECT_EQ(s.rows[1].v.bytes, 1572864u);
  EXPECT_EQ(s.rows[1].v.disk_time_ns, 1'500'000'000u);
  ASSERT_TRUE(s.rows[1].proc.has_value());
  EXPECT_EQ(s.rows[1].proc->uid, 1000u);
  // The process that exited before it was seen is still there, unknown uid.
  EXPECT_EQ(s.rows[2].pid, 4242u);
  EXPECT_FALSE(s.rows[2].proc.has_value());
  EXPECT_EQ(s.rows[2].v.bytes, 4096u);
}

// Below a stacked volume: a process charged through it is a plain row on
// the volume; a kernel thread's own I/O there says so.
TEST(TopModel, KernelIoViaAVolumeIsLabelled) {
  const DevT dm2 = make_dev(253, 2);
  AggEntry user = agg(100, 100, "postgres", dm2, Op::kWrite, 10, 40960, 1000);
  user.key.via = kRecTaskFromBio;
  AggEntry kernel = agg(7, 7, "dmcrypt_write/2", dm2, Op::kWrite, 2, 8192, 100);
  kernel.key.via = kRecKernelViaStack;
  AggEntry plain = agg(7, 7, "dmcrypt_write/2", make_dev(8, 0), Op::kWrite, 1, 4096, 10);
  auto rows = group_rows({user, kernel, plain}, GroupBy::kPid, fake_lookups());
  ASSERT_EQ(rows.size(), 3u);
  std::vector<std::string> comms;
  comms.reserve(rows.size());
  for (const auto& r : rows) comms.push_back(r.comm + " on " + r.device);
  std::sort(comms.begin(), comms.end());
  EXPECT_EQ(comms, (std::vector<std::string>{"dmcrypt_write/2 [kernel via 253:2] on 253:2",
                                             "dmcrypt_write/2 on sda", "postgres on 253:2"}));
}

TEST(TopModel, TotalsDevicesAndLost) {
  Snapshot s = two_second_interval();
  EXPECT_EQ(s.read.requests, 384u);
  EXPECT_EQ(s.read.bytes, 1572864u);
  EXPECT_EQ(s.write.requests, 9u);
  EXPECT_EQ(s.write.bytes, (8u << 20) + 4096u);
  EXPECT_EQ(s.total.disk_time_ns, 3'500'250'000u);
  ASSERT_EQ(s.devices.size(), 2u);
  EXPECT_EQ(s.devices[0].name, "sda");
  EXPECT_DOUBLE_EQ(s.devices[0].util_pct, 75.0125);
  EXPECT_EQ(s.devices[0].read_bytes, 1572864u);
  EXPECT_EQ(s.devices[0].write_bytes, 4096u);
  ASSERT_TRUE(s.devices[0].io_ticks_ms.has_value());
  EXPECT_EQ(*s.devices[0].io_ticks_ms, 1520u);
  EXPECT_EQ(s.devices[1].name, "sdb");
  EXPECT_DOUBLE_EQ(s.devices[1].util_pct, 100.0);
  EXPECT_EQ(s.devices[1].pending, 1u);
  EXPECT_FALSE(s.devices[1].io_ticks_ms.has_value());
  EXPECT_EQ(s.lost, (Counters{{"inflight_swept", 3}}));
  EXPECT_EQ(s.counters, (Counters{{"issues", 400}, {"inflight_swept", 3}}));
  EXPECT_TRUE(is_loss_counter("agg_map_full"));
  EXPECT_FALSE(is_loss_counter("requeues"));
}

TEST(TopModel, SortKeys) {
  Snapshot s = two_second_interval(GroupBy::kPid, SortKey::kIo);
  EXPECT_EQ(s.rows[0].comm, "fio");
  EXPECT_EQ(s.rows[1].comm, "dd");
  s = two_second_interval(GroupBy::kPid, SortKey::kTime);
  EXPECT_EQ(s.rows[0].comm, "dd");
  EXPECT_EQ(s.rows[1].comm, "fio");
  EXPECT_EQ(s.rows[2].comm, "tar");
}

TEST(TopModel, GroupByComm) {
  TopModel m(GroupBy::kComm, SortKey::kBytes, fake_lookups());
  m.set_start(0, std::nullopt);
  Sample smp;
  smp.mono_ns = 1'000'000'000;
  smp.agg = {agg(1, 1, "postgres", make_dev(8, 2), Op::kRead, 1, 100, 10),
             agg(2, 2, "postgres", make_dev(8, 2), Op::kRead, 2, 200, 20),
             agg(3, 3, "postgres", make_dev(8, 2), Op::kWrite, 4, 400, 40)};
  Snapshot s = m.update(smp);
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[0].dir, Op::kWrite);
  EXPECT_EQ(s.rows[1].comm, "postgres");
  EXPECT_EQ(s.rows[1].pid, 0u);
  EXPECT_EQ(s.rows[1].tasks, 2u);
  EXPECT_EQ(s.rows[1].v.bytes, 300u);
}

TEST(TopModel, GroupByCgroup) {
  Snapshot s = two_second_interval(GroupBy::kCgroup);
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_EQ(s.rows[0].comm, "5");  // unknown cgroup id shown as a number
  EXPECT_EQ(s.rows[1].comm, "/system.slice/db.service");
  EXPECT_EQ(s.rows[1].v.bytes, 1572864u);
  EXPECT_EQ(s.rows[2].comm, "/system.slice/db.service");
  EXPECT_EQ(s.rows[2].dir, Op::kWrite);
}

TEST(TopModel, SecondIntervalShowsOnlyChanges) {
  TopModel m(GroupBy::kPid, SortKey::kBytes, fake_lookups());
  m.set_start(0, std::nullopt);
  Sample a;
  a.mono_ns = 1'000'000'000;
  a.agg = {agg(1, 1, "a", make_dev(8, 0), Op::kRead, 1, 100, 10)};
  (void)m.update(a);
  Sample b = a;
  b.mono_ns = 1'500'000'000;
  b.agg[0].value.requests = 3;
  b.agg[0].value.bytes = 700;
  Snapshot s = m.update(b);
  EXPECT_EQ(s.seq, 2u);
  EXPECT_EQ(s.interval_ns, 500'000'000u);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].v.requests, 2u);
  EXPECT_EQ(s.rows[0].v.bytes, 600u);
  EXPECT_EQ(s.rows[0].v.disk_time_ns, 0u);
}

// A process that exited: /proc does not know it, the kernel's uid/ppid of
// its entry fill in; /proc's values win while the process lives.
TEST(TopModel, UidAndPpidFromTheKernelWhenProcHasNone) {
  TopModel m(GroupBy::kPid, SortKey::kBytes, fake_lookups());
  m.set_start(0, std::nullopt);
  Sample a;
  a.mono_ns = 1'000'000'000;
  a.agg = {agg(4242, 4242, "gone", make_dev(8, 0), Op::kRead, 1, 100, 10),
           agg(100, 100, "alive", make_dev(8, 0), Op::kRead, 1, 50, 10)};
  for (auto& e : a.agg) {
    e.uid = 33;
    e.ppid = 4000;
  }
  Snapshot s = m.update(a);
  ASSERT_EQ(s.rows.size(), 2u);
  EXPECT_EQ(s.rows[0].pid, 4242u);
  ASSERT_TRUE(s.rows[0].proc.has_value());
  EXPECT_EQ(s.rows[0].proc->uid, 33u);
  EXPECT_EQ(s.rows[0].proc->ppid, 4000u);
  ASSERT_TRUE(s.rows[1].proc.has_value());
  EXPECT_EQ(s.rows[1].proc->uid, 1000u);  // from /proc (fake_lookups)
  EXPECT_EQ(s.rows[1].proc->ppid, 1u);
}

// Three intervals of a task that exits: its final values (taken from the
// kernel map after the read) are counted once, in the interval it exited;
// it is no longer tracked; the same key created again counts from zero.
TEST(TopModel, ReleasedKeysCountedOnceThenForgotten) {
  TopModel m(GroupBy::kPid, SortKey::kBytes, fake_lookups());
  m.set_start(0, std::nullopt);
  Sample a;
  a.mono_ns = 1'000'000'000;
  a.agg = {agg(7, 7, "short", make_dev(8, 0), Op::kRead, 3, 300, 30),
           agg(8, 8, "long", make_dev(8, 0), Op::kRead, 1, 100, 10)};
  Snapshot s1 = m.update(a);
  EXPECT_EQ(s1.tracked_keys, 2u);
  EXPECT_EQ(s1.released_keys, 0u);

  Sample b = a;  // 7 exited: its entry taken with 6 requests in all
  b.mono_ns = 2'000'000'000;
  b.agg[0].value = {6, 600, 60, 0};
  b.released = {b.agg[0].key};
  Snapshot s2 = m.update(b);
  ASSERT_EQ(s2.rows.size(), 1u);
  EXPECT_EQ(s2.rows[0].pid, 7u);
  EXPECT_EQ(s2.rows[0].v.requests, 3u);
  EXPECT_EQ(s2.rows[0].v.bytes, 300u);
  EXPECT_EQ(s2.tracked_keys, 1u);
  EXPECT_EQ(s2.released_keys, 1u);

  Sample c = a;  // pid 7 reused by a task of the same name: 2 new requests
  c.mono_ns = 3'000'000'000;
  c.agg[0].value = {2, 200, 20, 0};
  Snapshot s3 = m.update(c);
  ASSERT_EQ(s3.rows.size(), 1u);
  EXPECT_EQ(s3.rows[0].v.requests, 2u);
  EXPECT_EQ(s3.rows[0].v.bytes, 200u);
  EXPECT_EQ(s3.total.requests, 2u);
  EXPECT_EQ(s3.tracked_keys, 2u);
  // Over the three intervals: 3 + 1 + 3 + 2 requests, each counted once.
  EXPECT_EQ(s1.total.requests + s2.total.requests + s3.total.requests, 9u);
}

TEST(ParseOptions, GroupAndSort) {
  EXPECT_EQ(*parse_group_by("cgroup"), GroupBy::kCgroup);
  EXPECT_EQ(parse_group_by("user").error().kind, ErrorKind::kUsage);
  EXPECT_EQ(*parse_sort_key("io"), SortKey::kIo);
  EXPECT_EQ(*parse_sort_key("read"), SortKey::kRead);
  EXPECT_EQ(*parse_sort_key("write"), SortKey::kWrite);
  EXPECT_EQ(*parse_sort_key("lat"), SortKey::kLatency);
  EXPECT_EQ(parse_sort_key("latency").error().kind, ErrorKind::kUsage);
  EXPECT_DOUBLE_EQ(percent_of(500, 1000), 50.0);
  EXPECT_DOUBLE_EQ(percent_of(5, 0), 0.0);
}

TEST(TopModel, UtilisationAboveTheIntervalIsClampedAndFlagged) {
  EXPECT_DOUBLE_EQ(percent_of(2'260'000'000, 2'000'000'000), 100.0);
  EXPECT_DOUBLE_EQ(raw_percent_of(2'260'000'000, 2'000'000'000), 113.0);
  TopModel m(GroupBy::kPid, SortKey::kBytes, testing::fake_lookups());
  m.set_start(1'000'000'000, std::vector<DiskStat>{});
  Sample s;
  s.mono_ns = 3'000'000'000;
  s.busy = {{make_dev(8, 0), 2'260'000'000, 0, 10}, {make_dev(8, 16), 1'000'000'000, 0, 5}};
  Snapshot snap = m.update(s);
  ASSERT_EQ(snap.devices.size(), 2u);
  EXPECT_DOUBLE_EQ(snap.devices[0].util_pct, 100.0);
  EXPECT_TRUE(snap.devices[0].util_clamped);
  EXPECT_EQ(snap.devices[0].busy_ns, 2'260'000'000u) << "the raw busy time stays";
  EXPECT_DOUBLE_EQ(snap.devices[1].util_pct, 50.0);
  EXPECT_FALSE(snap.devices[1].util_clamped);
}

// Every loss reason has plain words for the screen, without its name.
TEST(Losses, PlainSentences) {
  for (auto name : loss_counter_names()) {
    std::string s = loss_sentence(name, 2, {"loop0"});
    EXPECT_EQ(s.rfind("2 on loop0: ", 0), 0u) << s;
    EXPECT_EQ(s.find('_'), std::string::npos) << s;
  }
  EXPECT_EQ(loss_sentence("inflight_map_full", 1, {}),
            "1: requests not followed: too many were in flight at once; every figure misses them");
}

}  // namespace
}  // namespace blkrr::live
