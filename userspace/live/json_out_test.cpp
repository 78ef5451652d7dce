#include "live/json_out.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/units.h"
#include "live/screen.h"
#include "live/test_snapshot.h"

namespace blkrr::live {
namespace {

using testing::two_second_interval;

TEST(JsonOut, OneObjectWithEveryCounter) {
  Snapshot s = two_second_interval();
  nlohmann::json j = nlohmann::json::parse(snapshot_json(s).dump());
  EXPECT_EQ(j["schema"], nlohmann::json({{"name", "blkrr.top"}, {"version", 1}}));
  EXPECT_EQ(j["seq"], 1);
  EXPECT_EQ(j["interval_ns"], 2000000000u);
  EXPECT_DOUBLE_EQ(j["interval_s"].get<double>(), 2.0);
  EXPECT_EQ(j["time"], "2026-11-18T11:06:40.000Z");
  EXPECT_EQ(j["group_by"], "pid");
  EXPECT_DOUBLE_EQ(j["loadavg"][2].get<double>(), 0.125);
  EXPECT_EQ(j["totals"]["read"]["bytes"], 1572864u);
  EXPECT_EQ(j["totals"]["write"]["requests"], 9u);
  EXPECT_EQ(j["totals"]["all"]["disk_time_ns"], 3500250000u);
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][0]["device"], "sda");
  EXPECT_EQ(j["devices"][0]["busy_ns"], 1500250000u);
  EXPECT_EQ(j["devices"][0]["dev"], "8:0");
  EXPECT_EQ(j["devices"][0]["io_ticks_ns"], 1520000000u);
  EXPECT_TRUE(j["devices"][1]["io_ticks_ns"].is_null());
  ASSERT_EQ(j["rows"].size(), 3u);
  const auto& fio = j["rows"][1];
  EXPECT_EQ(fio["comm"], "fio");
  EXPECT_EQ(fio["pid"], 100);
  EXPECT_EQ(fio["uid"], 1000);
  EXPECT_EQ(fio["ppid"], 1);
  EXPECT_EQ(fio["device"], "sda2");
  EXPECT_EQ(fio["dev"], "8:2");
  EXPECT_EQ(fio["direction"], "read");
  EXPECT_EQ(fio["requests"], 384);
  EXPECT_EQ(fio["bytes"], 1572864);
  EXPECT_EQ(fio["disk_time_ns"], 1500000000u);
  EXPECT_DOUBLE_EQ(fio["io_percent"].get<double>(), 75.0);
  EXPECT_EQ(fio["latency_ns"], 4500000000u);
  EXPECT_EQ(fio["tasks"], 2);
  EXPECT_TRUE(j["rows"][2]["uid"].is_null());  // exited before it was seen
  EXPECT_EQ(j["lost"], nlohmann::json({{"inflight_swept", 3}}));
  EXPECT_EQ(j["counters"]["issues"], 400);
  EXPECT_EQ(j["tracked_keys"], 4);  // fio's two threads, dd, tar
  EXPECT_EQ(j["released_keys"], 0);
}

// The numbers a script reads are those of the screen.
TEST(JsonOut, SameNumbersAsTheScreen) {
  Snapshot s = two_second_interval();
  nlohmann::json j = snapshot_json(s);
  auto rows = screen_rows(s, SortKey::kBytes);
  ASSERT_EQ(rows.size(), j["rows"].size());  // one direction per row in this interval
  for (const auto& r : j["rows"]) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const ScreenRow& x) {
      return x.pid == r["pid"].get<uint32_t>() && x.device == r["device"].get<std::string>();
    });
    ASSERT_NE(it, rows.end());
    EXPECT_EQ(it->read_bytes + it->write_bytes, r["bytes"].get<uint64_t>());
    EXPECT_EQ(it->requests, r["requests"].get<uint64_t>());
    EXPECT_EQ(it->disk_time_ns, r["disk_time_ns"].get<uint64_t>());
  }
}

TEST(JsonOut, GroupedByCgroup) {
  nlohmann::json j = snapshot_json(two_second_interval(GroupBy::kCgroup));
  EXPECT_EQ(j["group_by"], "cgroup");
  EXPECT_EQ(j["rows"][1]["cgroup"], "/system.slice/db.service");
  EXPECT_EQ(j["rows"][1]["cgroup_id"], "77");  // a 64-bit id: a string (docs/json.md)
  EXPECT_FALSE(j["rows"][1].contains("pid"));
}

}  // namespace
}  // namespace blkrr::live
