#include "report/units.h"

#include <gtest/gtest.h>

namespace blkrr::report {
namespace {

TEST(Units, BytesInBinaryUnits) {
  EXPECT_EQ(fmt_bytes(512), "512 B");
  EXPECT_EQ(fmt_bytes(4096), "4.00 KiB");
  EXPECT_EQ(fmt_bytes(1.5 * 1024 * 1024 * 1024), "1.50 GiB");
  EXPECT_EQ(byte_scale(5e12).unit, "TiB");
  EXPECT_EQ(byte_scale(0).unit, "B");
}

TEST(Units, Durations) {
  EXPECT_EQ(fmt_duration_ns(850'000), "850 us");
  EXPECT_EQ(fmt_duration_ns(1'234'567), "1.23 ms");
  EXPECT_EQ(fmt_duration_ns(2.5e9), "2.50 s");
  EXPECT_EQ(fmt_elapsed(45.25), "45.2 s");
  EXPECT_EQ(fmt_elapsed(725), "12 min 5 s");
  EXPECT_EQ(fmt_elapsed(30 * 3600 + 60), "30 h 1 min");
  EXPECT_EQ(fmt_elapsed(120), "2 min");
  EXPECT_EQ(fmt_elapsed(5), "5 s");
  EXPECT_EQ(fmt_elapsed(0.5), "0.500 s");
}

TEST(Units, PowerOfTwoSizeLabels) {
  EXPECT_EQ(size_label(512), "512");
  EXPECT_EQ(size_label(4096), "4K");
  EXPECT_EQ(size_label(128 * 1024), "128K");
  EXPECT_EQ(size_label(1 << 20), "1M");
  EXPECT_EQ(size_label(2ull << 30), "2G");
}

TEST(Units, LogTicsInEngineeringUnits) {
  std::string t = ms_log_tics("y");
  EXPECT_EQ(t.substr(0, 31), "set ytics (\"1 us\" 0.001, \"10 us");
  EXPECT_NE(t.find("\"1 s\" 1000"), std::string::npos);
}

TEST(Units, UtcTime) {
  EXPECT_EQ(fmt_utc(0), "1970-01-01 00:00:00 UTC");
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
