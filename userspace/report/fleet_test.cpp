#include "report/fleet.h"
#include "report/report_fixtures.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace blkrr::report {
namespace {

namespace fs = std::filesystem;

Sample sample(uint64_t t_ms, uint32_t sectors, uint64_t latency_us, int64_t delay_us, bool replay) {
  Sample s;
  s.t_ns = t_ms * 1'000'000;
  s.sectors = sectors;
  s.latency_ns = latency_us * 1000;
  s.flags = kSampleHasLatency;
  if (replay) {
    s.delay_ns = delay_us * 1000;
    s.flags |= kSampleHasDelay;
  }
  return s;
}

// Four 4 KiB requests over one second, latencies 100..400 us.
Dataset replay_set(const std::string& label, int64_t delay_us) {
  Dataset d;
  d.label = label;
  d.kind = DataKind::kReplay;
  for (int i = 0; i < 4; ++i)
    d.samples.push_back(sample(i * 333, 8, 100 * (i + 1), delay_us + i, true));
  return d;
}

TEST(Fleet, HostRowThroughputAndPercentiles) {
  Dataset d = replay_set("lab1", 10);
  // Span: first issue at 10 us to the last completion 999 ms + 13 us + 400 us.
  HostRow r = host_row(d, {});
  EXPECT_EQ(r.requests, 4u);
  EXPECT_EQ(r.bytes, 4u * 4096);
  EXPECT_NEAR(r.span_s, 0.999403, 1e-9);
  EXPECT_NEAR(r.iops, 4 / 0.999403, 1e-6);
  EXPECT_EQ(r.latency_us.count, 4u);
  EXPECT_DOUBLE_EQ(r.latency_us.max, 400);
  EXPECT_DOUBLE_EQ(r.latency_us.p50, 250);
  EXPECT_DOUBLE_EQ(r.delay_us.min, 10);
  EXPECT_DOUBLE_EQ(r.delay_us.max, 13);
}

TEST(Fleet, StartSpreadAgainstTheRequestedInstant) {
  auto s = start_spread({{1000.0, 1000.0004}, {1000.0, 1000.0011}, {1000.0, 999.9999}});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->hosts, 3u);
  ASSERT_TRUE(s->requested);
  EXPECT_EQ(*s->requested, 1000.0);
  EXPECT_NEAR(s->spread_ms, 1.2, 1e-6);
  EXPECT_NEAR(*s->worst_offset_ms, 1.1, 1e-6);
  // Different requested instants: no common one; none requested: no offset.
  auto d = start_spread({{1000.0, 1000.0}, {2000.0, 2000.0}});
  EXPECT_FALSE(d->requested);
  auto n = start_spread({{std::nullopt, 5.0}, {std::nullopt, 5.5}});
  EXPECT_FALSE(n->worst_offset_ms);
  EXPECT_NEAR(n->spread_ms, 500, 1e-9);
  EXPECT_FALSE(start_spread({}));
}

TEST(Fleet, GroupsAggregateAndCountVerdicts) {
  std::vector<Dataset> data = testing::datasets(replay_set("lab1", 10), replay_set("lab2", 20));
  Dataset t;
  t.label = "prod1";
  t.kind = DataKind::kTrace;
  t.samples.push_back(sample(0, 16, 50, 0, false));
  data.push_back(std::move(t));
  FleetMeta m1, m2, m3;
  m1.verdict = "complete";
  m1.requested_start = 1000;
  m1.start = 1000.0002;
  m1.first_issue = 1000.0003;
  m2.verdict = "complete";
  m2.requested_start = 1000;
  m2.start = 1000.0007;
  m3.start = 990;
  FleetSummary s = summarize_fleet(data, {m1, m2, m3});
  ASSERT_EQ(s.groups.size(), 2u);
  EXPECT_EQ(s.groups[0].kind, "trace");
  const FleetGroup& g = s.groups[1];
  EXPECT_EQ(g.kind, "replay");
  ASSERT_EQ(g.hosts.size(), 2u);
  EXPECT_EQ(g.aggregate.requests, 8u);
  EXPECT_NEAR(g.aggregate.iops, g.hosts[0].iops + g.hosts[1].iops, 1e-9);
  EXPECT_EQ(g.aggregate.latency_us.count, 8u);
  EXPECT_DOUBLE_EQ(g.aggregate.delay_us.max, 23);
  EXPECT_EQ(g.verdicts.at("complete"), 2);
  ASSERT_TRUE(g.start);
  EXPECT_NEAR(g.start->spread_ms, 0.5, 1e-6);
  EXPECT_EQ(g.first_issue->hosts, 1u);
  EXPECT_FALSE(s.groups[0].start->worst_offset_ms);

  const std::string text = format_text(s);
  EXPECT_NE(text.find("start instants achieved: spread 0.500 ms across 2 hosts, requested "
                      "1000.000, worst offset from requested 0.700 ms"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("verdicts: complete 2\n"), std::string::npos) << text;
  nlohmann::json j = to_json(s);
  EXPECT_EQ(j["groups"][1]["hosts"][0]["verdict"], "complete");
  EXPECT_EQ(j["groups"][1]["verdicts"]["complete"], 2);
  EXPECT_EQ(j["groups"][1]["start"]["spread_ns"], 500000);  // integer ns (docs/json.md)
  EXPECT_EQ(j["schema"]["name"], "blkrr.fleet");
}

class FleetFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("blkrr-fleet-test-" + std::to_string(getpid()));
    fs::create_directories(dir_ / "results");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  fs::path dir_;
};

TEST_F(FleetFiles, FindsResultsWithTheirSummariesAndReadsTheClock) {
  write("results/lab2.replay.gz", "x");
  write("results/lab1.replay.gz", "x");
  write("results/lab1.json",
        R"({"start_unix": 1000.25, "settings": {"start_at": 1000.0},
            "validation": {"verdict": "complete", "completeness_pct": 100.0}})");
  write("results/notes.txt", "ignored");
  auto in = find_fleet_inputs({dir_.string()});
  ASSERT_TRUE(in) << in.error().message;
  ASSERT_EQ(in->size(), 2u);
  EXPECT_EQ((*in)[0].path, (dir_ / "results/lab1.replay.gz").string());
  EXPECT_EQ((*in)[0].json_path, (dir_ / "results/lab1.json").string());
  EXPECT_EQ((*in)[1].json_path, "");

  auto m = read_fleet_meta((*in)[0], replay_set("lab1", 40));
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->verdict, "complete");
  EXPECT_EQ(*m->completeness_pct, 100.0);
  EXPECT_EQ(*m->requested_start, 1000.0);
  EXPECT_EQ(*m->start, 1000.25);
  EXPECT_NEAR(*m->first_issue, 1000.25 + 40e-6, 1e-9);

  auto missing = find_fleet_inputs({(dir_ / "missing").string()});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kUsage);
  fs::create_directories(dir_ / "empty");
  auto none = find_fleet_inputs({(dir_ / "empty").string()});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().kind, ErrorKind::kUsage);
  EXPECT_NE(none.error().message.find("no traces"), std::string::npos);
}

TEST_F(FleetFiles, WritesTheThreeFiles) {
  FleetSummary s = summarize_fleet(testing::datasets(replay_set("lab1", 10)), {FleetMeta{}});
  ASSERT_TRUE(write_fleet_files(s, dir_.string()).ok());
  for (const char* f : {"fleet.json", "fleet.txt", "fleet.html"})
    EXPECT_TRUE(fs::exists(dir_ / f)) << f;
  EXPECT_FALSE(fs::exists(dir_ / "fleet.json.tmp"));
  std::ifstream j(dir_ / "fleet.json");
  auto js = nlohmann::json::parse(j);
  EXPECT_EQ(js["groups"][0]["hosts"][0]["label"], "lab1");
  EXPECT_TRUE(js["groups"][0]["hosts"][0]["verdict"].is_null());
}

}  // namespace
}  // namespace blkrr::report
