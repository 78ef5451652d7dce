// Dependency timing through the binary: a graph written by convert
// --dependencies replayed with --dependencies FILE, and report --compare over
// repeated replays of several timings (the spread by timing on the page, in
// data/cmp-repeat-spread.csv and report.json, and the best timing in the
// summary).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/trace_format.h"
#include "tests/cli/test_cli_run.h"
#include "tests/cli/test_schema_check.h"
#include "tests/cli/test_trace_fixture.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace blkrr {
namespace {

using testing::blkrr_run;
using testing::slurp;

constexpr int kChain = 40;
constexpr uint64_t kLatencyNs = 1'000'000, kThinkNs = 100'000;

class DependencyCli : public testing::ScratchDirTest {
 protected:
  DependencyCli() : ScratchDirTest("dependency-cli") {}

  // One synchronous thread: 40 reads, each 1 ms long, each issued 100 µs
  // after the previous one completed. Span 40 x 1 ms + 39 x 100 µs.
  std::string chain_trace(const std::string& name, uint64_t first_sector = 0) {
    TraceHeader h;
    h.tool_version = "dependency_cli_test";
    h.devices.push_back(testing::disk_sdz_with_sdz2(1 << 30));
    h.settings["devices"] = "sdz";
    auto w = TraceWriter::create(path(name), h);
    EXPECT_TRUE(w.ok());
    Request r;
    r.dev = h.devices[0].dev;
    r.part = r.dev;
    r.bytes = 4096;
    r.pid = 21;
    r.tgid = 21;
    uint64_t t = 1'000'000'000;
    for (int i = 0; i < kChain; ++i) {
      r.issue_ns = t;
      r.complete_ns = t + kLatencyNs;
      r.sector = first_sector + static_cast<uint64_t>(i) * 64;
      EXPECT_TRUE(w->append(r).ok());
      t = r.complete_ns + kThinkNs;
    }
    EXPECT_TRUE(w->close({{"capture: lost_events", 0}}).ok());
    return path(name);
  }
  void make_image() {
    { std::ofstream f(path("img")); }
    fs::resize_file(path("img"), 64 << 20);
  }
  // `merge`: stderr into out (false for JSON on stdout).
  testing::CliRun replay(const std::vector<std::string>& extra, bool merge = true) {
    std::vector<std::string> args{"replay",       path("chain.blkrr"), path("img"),
                                  "--allow-file", "--dry-run",         "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    return blkrr_run(args, merge);
  }
};

void expect_valid(const std::string& file, const json& doc) {
  std::ifstream in(std::string(BLKRR_SCHEMA_DIR) + "/" + file);
  const auto errors = testing::schema_violations(json::parse(in), doc);
  EXPECT_TRUE(errors.empty()) << file << ": " << (errors.empty() ? "" : errors.front());
}

TEST_F(DependencyCli, ReplaysTheStoredGraph) {
  chain_trace("chain.blkrr");
  make_image();
  ASSERT_EQ(
      blkrr_run({"convert", path("chain.blkrr"), "--dependencies", path("c.deps"), "-q"}).status,
      0);
  auto r = replay({"--timing", "dependency", "--dependencies", path("c.deps"), "-j"}, false);
  ASSERT_EQ(r.status, 0) << r.out;
  const json j = json::parse(r.out);
  expect_valid("replay.json", j);
  EXPECT_EQ(j["dependency"]["graph"], path("c.deps"));
  EXPECT_EQ(j["dependency"]["inferred"]["requests"], kChain);
  EXPECT_EQ(j["dependency"]["inferred"]["thread"], kChain - 1);
  EXPECT_EQ(j["dependency"]["dependent_replayed"], kChain - 1);
  auto inferred = replay({"--timing", "dependency", "-j"}, false);
  ASSERT_EQ(inferred.status, 0) << inferred.out;
  EXPECT_TRUE(json::parse(inferred.out)["dependency"]["graph"].is_null());

  auto no_timing = replay({"--dependencies", path("c.deps")});
  EXPECT_EQ(no_timing.status, 2) << no_timing.out;
  EXPECT_NE(no_timing.out.find("gives the parents of --timing dependency"), std::string::npos)
      << no_timing.out;
  auto repeated =
      replay({"--timing", "dependency", "--dependencies", path("c.deps"), "--repeat", "2"});
  EXPECT_EQ(repeated.status, 2) << repeated.out;
  // The graph of another trace (other sectors) is refused with its line.
  chain_trace("other.blkrr", 8);
  ASSERT_EQ(
      blkrr_run({"convert", path("other.blkrr"), "--dependencies", path("o.deps"), "-q"}).status,
      0);
  auto other = replay({"--timing", "dependency", "--dependencies", path("o.deps")});
  EXPECT_NE(other.status, 0);
  EXPECT_NE(other.out.find("o.deps:5: request 0 of the trace"), std::string::npos) << other.out;
}

// Two replays in timestamp and two in dependency timing, all dry runs (every
// request completes when submitted): timestamp keeps the recorded 44 ms,
// dependency timing shrinks to the think times (about 4 ms).
// The reaction time comes off think times by default only when they are
// whole recorded gaps: the inference's rule, or the stored graph's.
TEST_F(DependencyCli, CompensationFollowsTheThinkRule) {
  chain_trace("chain.blkrr");
  make_image();
  const auto compensated = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args{"--timing", "dependency", "-j"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = replay(args, false);
    EXPECT_EQ(r.status, 0) << r.out;
    return json::parse(r.out)["dependency"]["reaction_compensation"].get<bool>();
  };
  EXPECT_FALSE(compensated({}));
  EXPECT_TRUE(compensated({"--dep-think", "recorded"}));
  EXPECT_TRUE(compensated({"--compensation"}));
  EXPECT_FALSE(compensated({"--dep-think", "recorded", "--no-compensation"}));
  ASSERT_EQ(blkrr_run({"convert", path("chain.blkrr"), "--dependencies", path("r.deps"),
                       "--dep-think", "recorded", "-q"})
                .status,
            0);
  EXPECT_TRUE(compensated({"--dependencies", path("r.deps")}));
  ASSERT_EQ(
      blkrr_run({"convert", path("chain.blkrr"), "--dependencies", path("w.deps"), "-q"}).status,
      0);
  EXPECT_FALSE(compensated({"--dependencies", path("w.deps")}));
  EXPECT_FALSE(compensated({"--dependencies", path("w.deps"), "--dep-think", "recorded"}));
}

TEST_F(DependencyCli, CompareGivesTheSpreadOfRepeatedReplaysByTiming) {
  chain_trace("chain.blkrr");
  make_image();
  std::vector<std::string> args{"report",       "-q",        "--gnuplot",
                                "/nonexistent", "--compare", path("chain.blkrr")};
  for (const char* timing : {"timestamp", "dependency"})
    for (int k = 1; k <= 2; ++k) {
      const std::string out = path(std::string(timing) + std::to_string(k) + ".replay.gz");
      auto r = replay({"--timing", timing, "-o", out});
      ASSERT_EQ(r.status, 0) << r.out;
      args.push_back(out);
    }
  args.insert(args.end(), {"-o", path("rep")});
  auto rep = blkrr_run(args);
  ASSERT_EQ(rep.status, 0) << rep.out;
  const json j = json::parse(slurp(path("rep/report.json")));
  expect_valid("report.json", j);
  const json& by = j["fidelity"]["repeats"]["by_timing"];
  ASSERT_EQ(by.size(), 2u) << by.dump();
  EXPECT_EQ(by[0]["timing"], "timestamp");
  EXPECT_EQ(by[0]["replays"], json({"timestamp1", "timestamp2"}));
  EXPECT_EQ(by[1]["timing"], "dependency");
  const double span = (kChain * kLatencyNs + (kChain - 1) * kThinkNs) / 1e9;
  for (const json& g : by) {
    const json& s = g["metrics"]["span_s"];
    EXPECT_EQ(s["n"], 2);
    EXPECT_NEAR(s["original"].get<double>(), span, 1e-9);
    EXPECT_LE(s["min"].get<double>(), s["mean"].get<double>());
    EXPECT_LE(s["mean"].get<double>(), s["max"].get<double>());
    EXPECT_NEAR(s["error_rel"].get<double>(), s["mean"].get<double>() / span - 1, 1e-9);
    EXPECT_NEAR(g["metrics"]["iops"]["original"].get<double>(), kChain / span, 1e-6);
    EXPECT_TRUE(s["sd"].is_number());
  }
  EXPECT_LT(by[1]["metrics"]["span_s"]["error_rel"].get<double>(), -0.5);  // about -90 %
  EXPECT_EQ(j["fidelity"]["repeats"]["best_timing"], "timestamp");
  const std::string best = j["summary"]["best_timing"].get<std::string>();
  EXPECT_EQ(best.rfind("timestamp timing reproduced the original best (2 replays): span ", 0), 0u)
      << best;
  EXPECT_NE(best.find("; dependency: span -"), std::string::npos) << best;
  EXPECT_NE(slurp(path("rep/index.html")).find("timing reproduced the original best"),
            std::string::npos);
  const std::string csv = slurp(path("rep/data/cmp-repeat-spread.csv"));
  EXPECT_EQ(
      csv.rfind("timing,metric,replays,mean,sd,min,max,original,error_rel,error_max_rel\n", 0), 0u)
      << csv;
  EXPECT_NE(csv.find("\ndependency,span_s,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\ntimestamp,iops,2,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace blkrr
