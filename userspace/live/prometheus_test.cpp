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

TEST(Prometheus, EveryLossReasonFromZero) {
  MetricsAccumulator acc({}, fake_lookups());
  std::string t = acc.exposition();
  expect_valid_exposition(t);
  for (auto name : loss_counter_names())
    EXPECT_NE(t.find("blkrr_capture_lost_total{reason=\"" + std::string(name) + "\"} 0\n"),
              std::string::npos)
        << name;
  acc.add(two_second_interval());
  t = acc.exposition();
  EXPECT_NE(t.find("blkrr_capture_lost_total{reason=\"inflight_swept\"} 3\n"), std::string::npos);
  EXPECT_NE(t.find("blkrr_capture_lost_total{reason=\"agg_map_full\"} 0\n"), std::string::npos);
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

TEST(Prometheus, LatencyHistogramPerDeviceAndDirection) {
  MetricsAccumulator acc({}, fake_lookups());
  Snapshot s;
  auto r1 = testing::agg(100, 100, "fio", make_dev(8, 2), Op::kRead, 3, 12288, 0);
  r1.value.latency_ns = 3'500'000;
  r1.value.latency_hist[0] = 1;   // < 1 us
  r1.value.latency_hist[11] = 2;  // [1024, 2048) us
  auto r2 = testing::agg(101, 101, "cat", make_dev(8, 2), Op::kRead, 1, 4096, 0);
  r2.value.latency_ns = 5'000'000'000;
  r2.value.latency_hist[AggValue::kLatencySlots - 1] = 1;  // beyond 4.2 s
  auto f = testing::agg(100, 100, "fio", make_dev(8, 2), Op::kSecureErase, 1, 0, 0);
  f.value.latency_hist[1] = 1;
  s.deltas = {r1, r2, f};
  acc.add(s);
  std::string t = acc.exposition();
  expect_valid_exposition(t);
  EXPECT_NE(t.find("# TYPE blkrr_request_latency_seconds histogram\n"), std::string::npos);
  const std::string rd = "{device=\"sda2\",direction=\"read\",le=";
  // Two processes, one series: buckets are cumulative.
  EXPECT_NE(t.find("blkrr_request_latency_seconds_bucket" + rd + "\"1e-06\"} 1\n"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("blkrr_request_latency_seconds_bucket" + rd + "\"0.001024\"} 1\n"),
            std::string::npos);
  EXPECT_NE(t.find("blkrr_request_latency_seconds_bucket" + rd + "\"0.002048\"} 3\n"),
            std::string::npos);
  EXPECT_NE(t.find("blkrr_request_latency_seconds_bucket" + rd + "\"4.194304\"} 3\n"),
            std::string::npos);
  EXPECT_NE(t.find("blkrr_request_latency_seconds_bucket" + rd + "\"+Inf\"} 4\n"),
            std::string::npos);
  EXPECT_NE(t.find("blkrr_request_latency_seconds_count{device=\"sda2\",direction=\"read\"} 4\n"),
            std::string::npos);
  EXPECT_NE(t.find("blkrr_request_latency_seconds_sum{device=\"sda2\",direction=\"read\"} "
                   "5.003500000\n"),
            std::string::npos);
  // secure-erase is reported as discard; no other direction values appear.
  EXPECT_NE(t.find("{device=\"sda2\",direction=\"discard\",le=\"2e-06\"} 1\n"), std::string::npos);
  std::regex dir("direction=\"([a-z-]*)\"");
  for (auto it = std::sregex_iterator(t.begin(), t.end(), dir); it != std::sregex_iterator();
       ++it) {
    std::string v = (*it)[1];
    EXPECT_TRUE(v == "read" || v == "write" || v == "flush" || v == "discard" || v == "other") << v;
  }
  EXPECT_NE(t.find("blkrr_build_info{version=\""), std::string::npos);
}

TEST(Prometheus, LatencySlotsDoubleFromOneMicrosecond) {
  EXPECT_EQ(latency_slot(999), 0u);
  EXPECT_EQ(latency_slot(1000), 1u);
  EXPECT_EQ(latency_slot(1999), 1u);
  EXPECT_EQ(latency_slot(2000), 2u);
  EXPECT_EQ(latency_slot(1'500'000), 11u);  // [1024, 2048) us
  EXPECT_EQ(latency_slot(4'194'303'999), 22u);
  EXPECT_EQ(latency_slot(4'194'304'000), 23u);
  EXPECT_EQ(latency_slot(UINT64_MAX), 23u);
}

TEST(Prometheus, DirectionLabels) {
  EXPECT_EQ(direction_label(Op::kWriteZeroes), "write");
  EXPECT_EQ(direction_label(Op::kZoneAppend), "write");
  EXPECT_EQ(direction_label(Op::kFlush), "flush");
  EXPECT_EQ(direction_label(Op::kDiscard), "discard");
  EXPECT_EQ(direction_label(Op::kOther), "other");
}

}  // namespace
}  // namespace blkrr::live
