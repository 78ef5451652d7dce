#include "live/exited.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

namespace blkrr::live {
namespace {

AggEntry entry(uint32_t pid, uint32_t tid, Op dir, uint64_t reqs, uint64_t bytes) {
  AggEntry e;
  e.key.pid = pid;
  e.key.tid = tid;
  e.key.dev = make_dev(7, 0);
  e.key.disk = make_dev(7, 0);
  e.key.dir = dir;
  std::memcpy(e.key.comm.data(), "t", 1);
  e.value = {reqs, bytes, reqs * 10, reqs * 20};
  return e;
}

TEST(TaskAlive, LooksUpTheThreadUnderItsProcess) {
  char tmpl[] = "/tmp/blkrr-procfs-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string root = tmpl;
  std::filesystem::create_directories(root + "/10/task/11");
  EXPECT_TRUE(task_alive(10, 11, root));
  EXPECT_FALSE(task_alive(10, 12, root));  // thread gone, process alive
  EXPECT_FALSE(task_alive(20, 20, root));  // process gone
  std::filesystem::remove_all(root);
  EXPECT_TRUE(task_alive(static_cast<uint32_t>(getpid()), static_cast<uint32_t>(gettid())));
}

TEST(ExitedKeys, OnlyDeadTasksOneLookupPerTaskDuplicatesKept) {
  std::vector<AggEntry> agg = {entry(1, 1, Op::kRead, 1, 1), entry(2, 2, Op::kRead, 1, 1),
                               entry(2, 2, Op::kWrite, 1, 1), entry(1, 3, Op::kRead, 1, 1),
                               entry(2, 2, Op::kRead, 5, 5)};
  int lookups = 0;
  auto keys = exited_keys(agg, [&](uint32_t pid, uint32_t tid) {
    ++lookups;
    return pid == 1 && tid == 1;  // thread 3 of process 1 and process 2 exited
  });
  EXPECT_EQ(lookups, 3);
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys[0].pid, 2u);
  EXPECT_EQ(keys[0].dir, Op::kRead);
  EXPECT_EQ(keys[1].dir, Op::kWrite);
  EXPECT_EQ(keys[2].tid, 3u);
  EXPECT_EQ(keys[3].pid, 2u);  // the same key read twice is listed twice
  EXPECT_EQ(keys[3].dir, Op::kRead);
  EXPECT_TRUE(exited_keys(agg, [](uint32_t, uint32_t) { return true; }).empty());
}

TEST(FoldTaken, FinalValuesReplaceTheReadOnesKeysNotTakenStay) {
  std::vector<AggEntry> agg = {entry(1, 1, Op::kRead, 3, 300), entry(2, 2, Op::kRead, 4, 400),
                               entry(3, 3, Op::kWrite, 5, 500)};
  // 2 and 3 exited; 2 completed one more request between the read and the
  // removal; 3's entry was already gone (not returned).
  std::vector<AggEntry> taken = {entry(2, 2, Op::kRead, 5, 500)};
  taken[0].uid = 1000;
  taken[0].ppid = 1;
  auto released = fold_taken(agg, taken);
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0].pid, 2u);
  ASSERT_EQ(agg.size(), 3u);
  std::set<uint32_t> pids;
  for (const auto& e : agg) {
    pids.insert(e.key.pid);
    if (e.key.pid == 2) {
      EXPECT_EQ(e.value.requests, 5u);
      EXPECT_EQ(e.value.bytes, 500u);
      EXPECT_EQ(e.uid, 1000u);
      EXPECT_EQ(e.ppid, 1u);
    }
    if (e.key.pid == 3) {
      EXPECT_EQ(e.value.requests, 5u);  // kept as read
    }
    if (e.key.pid == 1) {
      EXPECT_EQ(e.value.requests, 3u);
    }
  }
  EXPECT_EQ(pids, (std::set<uint32_t>{1, 2, 3}));
}

}  // namespace
}  // namespace blkrr::live
