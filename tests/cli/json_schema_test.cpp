// Real JSON output of every command that runs without root, checked against
// docs/schema/*.json (docs/json.md). top and snoop need the kernel:
// tests/integration/json_schema_live_test.cpp checks them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/test_cli_run.h"
#include "core/trace_format.h"
#include "tests/cli/test_schema_check.h"
#include "tests/cli/test_trace_fixture.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace blkrr {
namespace {

using testing::blkrr_run;
using testing::ScratchDirTest;
using testing::slurp;

json schema_file(const std::string& name) {
  std::ifstream in(std::string(BLKRR_SCHEMA_DIR) + "/" + name);
  json j = json::parse(in, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << name << " is not JSON";
  return j;
}

// `doc` against the schema of `file`, or against its $defs/`def`.
void expect_valid(const std::string& file, const json& doc, const std::string& def = "") {
  json s = schema_file(file);
  if (!def.empty()) {
    json defs = s["$defs"];
    s = {{"$ref", "#/$defs/" + def}, {"$defs", defs}};
  }
  auto errors = testing::schema_violations(s, doc);
  std::string all;
  for (const auto& e : errors) all += "\n  " + e;
  EXPECT_TRUE(errors.empty()) << file << (def.empty() ? "" : " " + def) << ":" << all << "\n"
                              << doc.dump().substr(0, 2000);
}

json parse(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << text.substr(0, 400);
  return j;
}

// A blkrr.requests stream: a header, requests, and (dump, snoop) counters.
size_t expect_request_stream(const std::string& text, bool counters) {
  std::istringstream in(text);
  std::vector<json> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(parse(l));
  EXPECT_GE(lines.size(), 2u);
  if (lines.size() < 2) return 0;
  expect_valid("requests.json", lines.front(), "header");
  size_t end = lines.size();
  if (counters) expect_valid("requests.json", lines[--end], "counters");
  for (size_t i = 1; i < end; ++i) expect_valid("requests.json", lines[i]);
  return end - 1;
}

class JsonSchema : public ScratchDirTest {
 protected:
  JsonSchema() : ScratchDirTest("schema") {}

  // A native trace with a partition, a request whose completion was not
  // seen and one whose issue was not seen.
  std::string trace() {
    TraceHeader h;
    h.tool_version = "json_schema_test";
    const DeviceInfo d = testing::disk_sdz_with_sdz2(1 << 30);
    const PartitionInfo& p = d.partitions.front();
    h.devices.push_back(d);
    h.settings["devices"] = "sdz";
    auto w = TraceWriter::create(path("t.blkrr"), h);
    EXPECT_TRUE(w.ok());
    Request r;
    r.issue_ns = 1'000'000;
    r.complete_ns = 1'900'000;
    r.disk_time_ns = 450'000;
    r.dev = d.dev;
    r.part = p.dev;
    r.sector = 4096;
    r.bytes = 4096;
    r.op = Op::kWrite;
    r.flags = kFlagSync;
    r.pid = 11;
    r.tgid = 10;
    r.cgroup_id = (uint64_t{1} << 60) + 3;  // beyond 2^53: a string in JSON
    r.set_comm("mysqld");
    EXPECT_TRUE(w->append(r).ok());
    r.issue_ns = 2'000'000;
    r.complete_ns = kNoTime;
    r.rec_flags = kRecCompletionNotSeen;
    EXPECT_TRUE(w->append(r).ok());
    r.issue_ns = 3'000'000;
    r.complete_ns = 3'500'000;
    r.rec_flags = kRecIssueNotSeen;
    r.op = Op::kFlush;
    EXPECT_TRUE(w->append(r).ok());
    EXPECT_TRUE(w->close({{"capture: lost_events", 0}}).ok());
    return path("t.blkrr");
  }
  // A 64 MiB regular file to replay on (--allow-file).
  void make_image() {
    { std::ofstream f(path("img")); }
    fs::resize_file(path("img"), 64 << 20);
  }
};

const std::string kLoad = std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz";

TEST_F(JsonSchema, DumpWritesTheRequestsStream) {
  auto r = blkrr_run({"dump", "-j", trace()}, false);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(expect_request_stream(r.out, true), 3u);
  auto lines = r.out;
  EXPECT_NE(lines.find("\"cgroup_id\":\"1152921504606846979\""), std::string::npos) << lines;
  EXPECT_NE(lines.find("\"start_ns\":null"), std::string::npos) << lines;  // issue not seen
  EXPECT_NE(lines.find("\"pid\":10"), std::string::npos);                  // the process
  EXPECT_NE(lines.find("\"tid\":11"), std::string::npos);                  // the thread
}

TEST_F(JsonSchema, ConvertWritesTheSameStreamForEveryInput) {
  auto t = trace();
  ASSERT_EQ(blkrr_run({"convert", t, "-o", path("t.jsonl"), "-q"}).status, 0);
  EXPECT_EQ(expect_request_stream(slurp(path("t.jsonl")), false), 3u);
  // A blkreplay load: no process, device or completion fields.
  auto l = blkrr_run({"convert", kLoad, "--window", "0:2", "-o", path("l.jsonl"), "-q"});
  ASSERT_EQ(l.status, 0) << l.out;
  EXPECT_GT(expect_request_stream(slurp(path("l.jsonl")), false), 10u);
  // Replay results: a dry run on a file, then to JSON lines.
  ASSERT_EQ(blkrr_run({"convert", kLoad, "--window", "0:2", "-o", path("w.load"), "-q"}).status, 0);
  make_image();
  auto d = blkrr_run({"replay", path("w.load"), path("img"), "--allow-file", "--dry-run",
                      "--timing", "fullspeed", "-q", "-o", path("w.replay.gz")});
  ASSERT_EQ(d.status, 0) << d.out;
  auto c = blkrr_run({"convert", path("w.replay.gz"), "-o", "-", "--to", "json", "-q"}, false);
  ASSERT_EQ(c.status, 0) << c.out.substr(0, 400);
  EXPECT_GT(expect_request_stream(c.out, false), 10u);
}

TEST_F(JsonSchema, ReplayAndValidateSummaries) {
  ASSERT_EQ(blkrr_run({"convert", kLoad, "--window", "0:2", "-o", path("w.load"), "-q"}).status, 0);
  make_image();
  auto r = blkrr_run({"replay", path("w.load"), path("img"), "--allow-file", "--dry-run",
                      "--timing", "fullspeed", "-q", "-j", "-o", path("w.replay.gz")},
                     false);
  ASSERT_EQ(r.status, 0) << r.out;
  json j = parse(r.out);
  expect_valid("replay.json", j);
  EXPECT_TRUE(j["settings"]["run_id"].is_string());
  EXPECT_TRUE(j["latency_ns"]["all"]["p999"].is_number_integer());
  // --json-file writes the same document.
  auto f = blkrr_run({"replay", path("w.load"), path("img"), "--allow-file", "--dry-run",
                      "--timing", "fullspeed", "-q", "--json-file", path("r.json")});
  ASSERT_EQ(f.status, 0) << f.out;
  expect_valid("replay.json", parse(slurp(path("r.json"))));

  ASSERT_EQ(blkrr_run({"convert", path("w.load"), "-o", path("w.blkrr"), "-q"}).status, 0);
  auto v = blkrr_run({"validate", path("w.replay.gz"), path("w.blkrr"), "-j", "-q"}, false);
  ASSERT_EQ(v.status, 0) << v.out;
  expect_valid("validate.json", parse(v.out));
}

// --timing dependency: the summary's dependency block; loads refused; the
// graph of convert --dependencies.
TEST_F(JsonSchema, DependencyTiming) {
  const std::string t = trace();
  make_image();
  auto r = blkrr_run(
      {"replay", t, path("img"), "--allow-file", "--dry-run", "--timing", "dependency", "-q", "-j"},
      false);
  ASSERT_EQ(r.status, 0) << r.out;
  json j = parse(r.out);
  expect_valid("replay.json", j);
  EXPECT_EQ(j["settings"]["timing"], "dependency");
  EXPECT_EQ(j["dependency"]["inferred"]["requests"], 3);
  EXPECT_EQ(j["dependency"]["inferred"]["no_completion"], 1);
  EXPECT_EQ(j["dependency"]["thread_window_ns"], 1'000'000);
  auto l = blkrr_run(
      {"replay", kLoad, path("img"), "--allow-file", "--dry-run", "--timing", "dependency", "-q"});
  EXPECT_EQ(l.status, 2) << l.out;
  EXPECT_NE(l.out.find("carries no completion times and so no dependencies"), std::string::npos)
      << l.out;
  auto c = blkrr_run({"convert", t, "--dependencies", path("t.deps"), "-q"});
  ASSERT_EQ(c.status, 0) << c.out;
  const std::string g = slurp(path("t.deps"));
  EXPECT_EQ(g.rfind("# blkrr dependencies 2\n", 0), 0u) << g;
  EXPECT_NE(g.find("\n0\t1000000\t1900000\t11\tW\t4096\t8\tindependent\t0\t0\t-\t0\n"),
            std::string::npos)
      << g;
}

// report.json of static, dynamic and --compare reports, and fleet.json.
TEST_F(JsonSchema, ReportAndFleetSummaries) {
  ASSERT_EQ(blkrr_run({"convert", kLoad, "--window", "0:2", "-o", path("w.load"), "-q"}).status, 0);
  make_image();
  fs::create_directories(path("fleet"));
  auto r = blkrr_run({"replay", path("w.load"), path("img"), "--allow-file", "--dry-run",
                      "--timing", "fullspeed", "-q", "--json-file", path("fleet/lab1.json"), "-o",
                      path("fleet/lab1.replay.gz")});
  ASSERT_EQ(r.status, 0) << r.out;
  auto rep = blkrr_run({"report", "-q", "--gnuplot", "/nonexistent", "--compare", path("w.load"),
                        path("fleet/lab1.replay.gz"), "-o", path("rep")});
  ASSERT_EQ(rep.status, 0) << rep.out;
  json j = parse(slurp(path("rep/report.json")));
  expect_valid("report.json", j);
  EXPECT_TRUE(j.contains("fidelity")) << j.dump().substr(0, 400);
  auto st =
      blkrr_run({"report", "-q", "--gnuplot", "/nonexistent", path("w.load"), "-o", path("rep2")});
  ASSERT_EQ(st.status, 0) << st.out;
  expect_valid("report.json", parse(slurp(path("rep2/report.json"))));
  auto fl = blkrr_run(
      {"report", "--fleet", "-q", "--gnuplot", "/nonexistent", path("fleet"), "-o", path("frep")});
  ASSERT_EQ(fl.status, 0) << fl.out;
  expect_valid("fleet.json", parse(slurp(path("frep/fleet.json"))));
}

TEST_F(JsonSchema, DevicesAndFeatures) {
  auto d = blkrr_run({"devices", "-j"}, false);
  ASSERT_EQ(d.status, 0) << d.out;
  expect_valid("devices.json", parse(d.out));
  auto f = blkrr_run({"features", "-j"}, false);
  expect_valid("features.json", parse(f.out));
}

// Every schema file is JSON, names its document and version, and uses only
// keywords the test validator implements (an empty object passes each).
TEST_F(JsonSchema, SchemaFilesAreComplete) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(BLKRR_SCHEMA_DIR)) {
    json s = schema_file(e.path().filename().string());
    EXPECT_EQ(s.value("$schema", ""), "https://json-schema.org/draft/2020-12/schema") << e.path();
    EXPECT_NE(s.value("title", "").find("version 1"), std::string::npos) << e.path();
    ++n;
  }
  EXPECT_EQ(n, 8u);
}

}  // namespace
}  // namespace blkrr
