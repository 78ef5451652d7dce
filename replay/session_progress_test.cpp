#include "replay/session_progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "converters/converter_fixtures.h"

namespace blkrr::replay {
namespace {

// An open-ended replay's line had neither the total nor an ETA.
TEST(SessionProgress, TheLineNamesTheTotalAndAnEta) {
  Progress p;
  p.elapsed_ns = 60'000'000'000;  // a minute in
  p.due_ns = 900'000'000'000;     // at load time 15 min
  p.completed = 20000;
  p.in_flight = 3;
  p.last_delay_ns = 12'300;
  LoadSize total{80794, 3'600'000'000'000};
  EXPECT_EQ(progress_line(p, 0, total, 333.4),
            " 25.0% of 60 min  ETA 3 min  333 IOPS  delay 12.3 us  in flight 3  done "
            "20000/80794");
  // Before the count is in: the load time, as before.
  EXPECT_EQ(progress_line(p, 0, std::nullopt, 0),
            "load t=900.0s  0 IOPS  delay 12.3 us  in flight 3  done 20000");
  // Full speed (no due times): by requests done.
  p.due_ns = 0;
  EXPECT_EQ(progress_line(p, 0, LoadSize{80000, 0}, 0),
            " 25.0%  ETA 3 min  0 IOPS  delay 12.3 us  in flight 3  done 20000/80000");
}

TEST(SessionProgress, TheCounterCountsTheLoadInReplayTime) {
  const std::string load = blkrr::testing::data_path("linux-mysql.load.gz");
  ScheduleOptions so;
  so.speedup = 2;
  LoadCounter c([&load] { return open_source({load}, {}); }, Schedule(so), false);
  auto n = c.wait();
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->requests, 80794u);
  // The shipped hour at twice the speed: its last start minus its first, halved.
  EXPECT_NEAR(static_cast<double>(n->span_ns) / 1e9, 1800, 1);
  LoadCounter gone([] { return open_source({"/nonexistent/x.load"}, {}); }, Schedule(so), false);
  EXPECT_FALSE(gone.wait().has_value());
}

}  // namespace
}  // namespace blkrr::replay
