// blkrr top forgets the tasks that exited (root only, loop device): many
// short-lived processes doing I/O under `top`; every one of them shows, with
// the UID and PPID the kernel saw, their requests are all counted once, and
// the kernel's aggregation map does not keep their entries.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_top.h"

namespace blkrr::testing {
namespace {

TEST(TopExitedTasks, ShortLivedProcessesCountedOnceAndForgotten) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(128ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  sleep_ms(300);  // let udev's probe of the new device pass
  auto top = BlkrrProcess::start({"top", "--json", "-d", loop->path(), "0.2"}, "\"seq\":1");
  ASSERT_TRUE(top.ok()) << top.error().message;

  // 200 processes one after the other, each 3 reads of 4 KiB (its own
  // sectors) in one thread, then exit: 200 {pid, tid} keys.
  constexpr int kProcs = 200, kReads = 3;
  std::set<uint32_t> pids;
  for (int i = 0; i < kProcs; ++i) {
    auto c = IoChild::spawn("blkrr-short", loop->path(),
                            uniform(1, kReads, Op::kRead, 4096, uint64_t(i) * kReads * 16));
    ASSERT_TRUE(c.ok());
    pids.insert(static_cast<uint32_t>(c->pid()));
    c->go();
    ASSERT_EQ(c->wait(), 0);
  }
  sleep_ms(700);  // three more refreshes: the last exits are seen
  top->signal(SIGTERM);
  ASSERT_EQ(top->wait(), 0) << top->output();

  auto snaps = json_lines(top->output());
  ASSERT_GE(snaps.size(), 4u);
  uint64_t requests = 0, bytes = 0, rows_ns = 0, busy_ns = 0, released = 0, max_tracked = 0;
  std::set<uint32_t> seen;
  int wrong_ids = 0;
  for (const auto& s : snaps) {
    for (const auto& d : s["devices"]) busy_ns += d["busy_ns"].get<uint64_t>();
    released += s["released_keys"].get<uint64_t>();
    max_tracked = std::max(max_tracked, s["tracked_keys"].get<uint64_t>());
    for (const auto& r : s["rows"]) {
      rows_ns += r["disk_time_ns"].get<uint64_t>();
      if (r["comm"] != "blkrr-short") continue;
      requests += r["requests"].get<uint64_t>();
      bytes += r["bytes"].get<uint64_t>();
      seen.insert(r["pid"].get<uint32_t>());
      // Gone from /proc by the refresh: UID and PPID as the kernel saw them.
      if (r["uid"] != geteuid() || r["ppid"] != static_cast<uint32_t>(getpid())) {
        ++wrong_ids;
        ADD_FAILURE() << r.dump();
      }
    }
  }
  uint64_t lost = sum_lost(snaps);
  uint64_t last_tracked = snaps.back()["tracked_keys"].get<uint64_t>();
  std::printf(
      "[measured] %d processes: %zu shown, %llu requests (%llu lost), %llu keys released, "
      "at most %llu tracked at a refresh, %llu at the end; disk time rows %llu ns, device %llu "
      "ns\n",
      kProcs, seen.size(), (unsigned long long)requests, (unsigned long long)lost,
      (unsigned long long)released, (unsigned long long)max_tracked,
      (unsigned long long)last_tracked, (unsigned long long)rows_ns, (unsigned long long)busy_ns);
  EXPECT_EQ(wrong_ids, 0);
  EXPECT_EQ(requests + lost, uint64_t(kProcs) * kReads);
  EXPECT_EQ(bytes, requests * 4096);
  if (lost == 0) {
    EXPECT_EQ(seen, pids);  // every process shows, in the interval it exited
  }
  // Each process's one key was removed once; never more than the few
  // processes alive at a refresh were tracked (200 without forgetting).
  // A process whose every completion was lost never had a key (aggregation
  // happens at completion): at most lost of them.
  if (lost == 0) {
    EXPECT_EQ(released, uint64_t(kProcs));
  } else {
    EXPECT_GE(released + lost, uint64_t(kProcs));
  }
  EXPECT_LE(max_tracked, 5u);
  EXPECT_EQ(last_tracked, 0u);
  // Nothing charged twice or lost: rows' disk time is the device's.
  EXPECT_GT(busy_ns, 0u);
  EXPECT_EQ(rows_ns, busy_ns);
}

}  // namespace
}  // namespace blkrr::testing
