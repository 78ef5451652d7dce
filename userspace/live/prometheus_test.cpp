#include "live/prometheus.h"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "live/test_snapshot.h"

namespace blkrr::live {
namespace {

using testing::fake_lookups;
using testing::two_second_interval;

// Every line is a comment (# HELP / # TYPE) or `name{labels} value`.
void expect_valid_exposition(const std::string& text) {
  static const std::regex sample(
      R"re(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? -?[0-9.]+(e[+-]?[0-9]+)?$)re");
  static const std::regex comment(R"(^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* .+$)");
  std::istringstream in(text);
  size_t n = 0;
  for (std::string l; std::getline(in, l); ++n)
    EXPECT_TRUE(std::regex_match(l, sample) || std::regex_match(l, comment))
        << "line " << n << ": " << l;
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
}

TEST(Prometheus, CountersInBaseUnitsWithoutPid) {
  MetricsAccumulator acc({}, fake_lookups());
  acc.add(two_second_interval());
  std::string t = acc.exposition();
  expect_valid_exposition(t);
  EXPECT_NE(t.find("# TYPE blkrr_disk_time_seconds_total counter\n"), std::string::npos);
  EXPECT_NE(t.find("blkrr_disk_time_seconds_total{device=\"sda2\",direction=\"read\",comm=\"fio\"} "
                   "1.500000000\n"),
            std::string::npos)
      << t;
  EXPECT_NE(
      t.find("blkrr_io_bytes_total{device=\"sdb\",direction=\"write\",comm=\"dd\"} 8388608\n"),
      std::string::npos);
  EXPECT_NE(
      t.find("blkrr_io_requests_total{device=\"sda2\",direction=\"read\",comm=\"fio\"} 384\n"),
      std::string::npos);
  EXPECT_NE(t.find("blkrr_device_busy_seconds_total{device=\"sda\"} 1.500250000\n"),
            std::string::npos);
  EXPECT_NE(t.find("blkrr_device_io_ticks_seconds_total{device=\"sda\"} 1.520000000\n"),
            std::string::npos);
  EXPECT_NE(t.find("blkrr_capture_lost_total{reason=\"inflight_swept\"} 3\n"), std::string::npos);
  EXPECT_EQ(t.find("pid="), std::string::npos);
}

TEST(Prometheus, AccumulatesAcrossIntervalsAndKeepsExitedSeries) {
  MetricsAccumulator acc({}, fake_lookups());
  acc.add(two_second_interval());
  Snapshot second = two_second_interval();
  second.deltas.resize(1);  // only fio's first thread did I/O again
  second.lost.clear();
  acc.add(second);
  std::string t = acc.exposition();
  // fio: 256+128 then 256 more.
  EXPECT_NE(
      t.find("blkrr_io_requests_total{device=\"sda2\",direction=\"read\",comm=\"fio\"} 640\n"),
      std::string::npos)
      << t;
  // tar exited after the first interval: its counter stays, unchanged.
  EXPECT_NE(t.find("blkrr_io_bytes_total{device=\"sda2\",direction=\"write\",comm=\"tar\"} 4096\n"),
            std::string::npos);
  EXPECT_NE(t.find("blkrr_top_refreshes_total 2\n"), std::string::npos);
}

TEST(Prometheus, CgroupAndPidLabels) {
  MetricsAccumulator acc({true, true}, fake_lookups());
  acc.add(two_second_interval());
  std::string t = acc.exposition();
  expect_valid_exposition(t);
  EXPECT_NE(t.find("blkrr_io_requests_total{device=\"sda2\",direction=\"read\",cgroup=\"/system."
                   "slice/db.service\",pid=\"100\"} 384\n"),
            std::string::npos)
      << t;
}

TEST(Prometheus, EscapingAndSeconds) {
  EXPECT_EQ(escape_label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(ns_to_seconds(0), "0.000000000");
  EXPECT_EQ(ns_to_seconds(1500000001), "1.500000001");
  EXPECT_EQ(ns_to_seconds(18446744073709551615ull), "18446744073.709551615");
}

}  // namespace
}  // namespace blkrr::live
