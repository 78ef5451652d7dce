#include "report/time_axis.h"

#include <gtest/gtest.h>

namespace blkrr::report {
namespace {

TEST(Units, LogTicsInEngineeringUnits) {
  std::string t = ms_log_tics("y");
  EXPECT_EQ(t.substr(0, 31), "set ytics (\"1 us\" 0.001, \"10 us");
  EXPECT_NE(t.find("\"1 s\" 1000"), std::string::npos);
}

TEST(Units, TimeAxisKeepsAtMostAThousandBins) {
  TimeAxis a = choose_time_axis(3, std::nullopt);
  EXPECT_EQ(a.bin_s, 1);
  EXPECT_EQ(a.bins, 3u);
  EXPECT_EQ(a.unit, "s");
  TimeAxis h = choose_time_axis(3600, std::nullopt);
  EXPECT_EQ(h.bin_s, 5);
  EXPECT_EQ(h.bins, 720u);
  EXPECT_EQ(h.unit, "min");
  EXPECT_DOUBLE_EQ(h.x(90), 1.5);
  TimeAxis d = choose_time_axis(30 * 3600, std::nullopt);
  EXPECT_EQ(d.bin_s, 120);
  EXPECT_EQ(d.bins, 900u);
  EXPECT_EQ(d.unit, "h");
  EXPECT_EQ(d.label("time since start"), "time since start [h]");
  TimeAxis w = choose_time_axis(600, 1e9);
  EXPECT_TRUE(w.wall);
  EXPECT_DOUBLE_EQ(w.x(5), 1e9 + 5);
  EXPECT_EQ(w.gnuplot(), "set format x \"%H:%M\" timedate\nset xtics 120\n");
  EXPECT_FALSE(choose_time_axis(30, 1e9).wall);  // under a minute: seconds since start
  EXPECT_EQ(w.label("time"), "time [UTC]");
}

TEST(Units, FoldBinsKeepsMeanAndSpread) {
  auto b = fold_bins({1, 3, 2, 10, 0}, 1, 2);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_DOUBLE_EQ(b[0].mean, 2);
  EXPECT_DOUBLE_EQ(b[0].min, 1);
  EXPECT_DOUBLE_EQ(b[0].max, 3);
  EXPECT_DOUBLE_EQ(b[1].mean, 6);
  EXPECT_DOUBLE_EQ(b[1].t0_s, 2);
  EXPECT_DOUBLE_EQ(b[1].t1_s, 4);
  EXPECT_DOUBLE_EQ(b[2].mean, 0);
  EXPECT_DOUBLE_EQ(b[2].t1_s, 5);  // a partial last bin ends with the data
}

}  // namespace
}  // namespace blkrr::report
