// blkrr record --start-at, as root on a loop device over /dev/shm: the
// capture is loaded before the agreed wall-clock instant, the trace's clock
// anchors are that instant (as late as the wake-up was), and no request
// issued before it is recorded while a workload runs through it.
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <string>

#include "tests/integration/test_capture_skip.h"
#include "core/trace_format.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"

namespace blkrr::testing {
namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

double realtime_s() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

TEST(RecordStartAt, RecordsFromTheAgreedInstantOnly) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(64 << 20);
  ASSERT_TRUE(a) << a.error().message;
  // I/O from before the instant until after the recording's end.
  auto child =
      IoChild::spawn("blkrr-startat", a->path(), make_known_load(2, 16, 2048, 100000), 6000);
  ASSERT_TRUE(child) << child.error().message;
  child->go();
  const double at = std::floor(realtime_s()) + 3;  // 2..3 s away
  const std::string out = "/tmp/blkrr-start-at-test-" + std::to_string(getpid()) + ".blkrr";
  auto rec = BlkrrProcess::start(
      {"record", "-d", a->path(), "-D", "1", "--start-at", seconds_text(at), "-o", out},
      "waiting for --start-at");
  ASSERT_TRUE(rec) << rec.error().message;
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  EXPECT_EQ(child->wait(), 0);

  auto rd = TraceReader::open(out);
  ASSERT_TRUE(rd) << rd.error().message;
  const TraceHeader h = rd->header();
  EXPECT_EQ(h.settings.at("start_at"), seconds_text(at));
  const double anchor_s = static_cast<double>(h.real_anchor_ns) / 1e9;
  EXPECT_GE(anchor_s, at);
  EXPECT_LT(anchor_s - at, 0.05) << "woke up more than 50 ms after --start-at";
  Request r;
  uint64_t n = 0, last_issue = 0;
  while (true) {
    auto got = rd->next(r);
    ASSERT_TRUE(got) << got.error().message;
    if (!*got) break;
    ++n;
    EXPECT_GE(r.issue_ns, h.mono_anchor_ns) << "request issued before --start-at recorded";
    last_issue = std::max(last_issue, r.issue_ns);
  }
  EXPECT_GT(n, 0u);
  EXPECT_LT(last_issue - h.mono_anchor_ns, 1'100'000'000u) << "-D 1 counts from the instant";
  ASSERT_TRUE(rd->trailer());
  auto dropped = rd->trailer()->find("before_start_at_dropped");
  ASSERT_NE(dropped, rd->trailer()->end());
  EXPECT_GT(dropped->second, 0u) << "the workload ran before the instant";
  unlink(out.c_str());
}

// Ctrl-C while the capture waits for the instant ends the command with 130
// and a reason; nothing is written (it used to kill the process outright).
TEST(RecordStartAt, CtrlCWhileWaitingEndsCleanlyWithNothingRecorded) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(64 << 20);
  ASSERT_TRUE(a) << a.error().message;
  const double at = std::floor(realtime_s()) + 60;
  const std::string out = "/tmp/blkrr-start-at-int-" + std::to_string(getpid()) + ".blkrr";
  auto rec =
      BlkrrProcess::start({"record", "-d", a->path(), "--start-at", seconds_text(at), "-o", out},
                          "waiting for --start-at");
  ASSERT_TRUE(rec) << rec.error().message;
  rec->signal(SIGINT);
  EXPECT_EQ(rec->wait(), 130) << rec->output();
  EXPECT_NE(rec->output().find("interrupted while waiting for --start-at"), std::string::npos)
      << rec->output();
  EXPECT_NE(access(out.c_str(), F_OK), 0) << "a trace was written before the instant";
  unlink(out.c_str());
}

}  // namespace
}  // namespace blkrr::testing
