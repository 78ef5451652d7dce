// The screens and JSON of the commands that need the kernel (root, loop
// device): `top -j` and `snoop -j` against docs/schema (the rest is in
// tests/cli/json_schema_test.cpp), the `top -C` and `snoop` screens as
// captured, and `record`'s progress line on a terminal (script(1) gives it a
// pseudo-terminal).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "tests/integration/test_loop_device.h"
#include "tests/cli/test_schema_check.h"
#include "tests/integration/test_top.h"

namespace blkrr::testing {
namespace {

json schema(const std::string& name) {
  std::ifstream in(std::string(BLKRR_SCHEMA_DIR) + "/" + name);
  return json::parse(in);
}

void expect_valid(const json& s, const json& doc, const std::string& what) {
  std::string all;
  for (const auto& e : schema_violations(s, doc)) all += "\n  " + e;
  EXPECT_TRUE(all.empty()) << what << ":" << all << "\n" << doc.dump().substr(0, 1500);
}

json def_of(const json& s, const std::string& def) {
  return {{"$ref", "#/$defs/" + def}, {"$defs", s["$defs"]}};
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

TEST(LiveJsonAndScreens, TopAndSnoopFollowTheirSchemasAndScreens) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(128ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  sleep_ms(300);
  auto jtop = BlkrrProcess::start({"top", "-j", "-d", loop->path(), "0.3"}, "\"seq\":1");
  auto stop = BlkrrProcess::start({"top", "-C", "-d", loop->path(), "0.3"}, "READ/s");
  auto jsnoop = BlkrrProcess::start({"snoop", "-j", "-Q", "-d", loop->path()}, "");
  auto snoop = BlkrrProcess::start({"snoop", "--issue", "-d", loop->path()}, "TIME(s)");
  ASSERT_TRUE(jtop.ok() && stop.ok() && jsnoop.ok() && snoop.ok());
  sleep_ms(600);
  auto c = IoChild::spawn("schema-io", loop->path(), uniform(2, 50, Op::kWrite, 65536, 0));
  ASSERT_TRUE(c.ok());
  c->go();
  ASSERT_EQ(c->wait(), 0);
  sleep_ms(900);
  for (auto* p : {&jtop, &stop}) (*p)->signal(SIGTERM);
  for (auto* p : {&jsnoop, &snoop}) (*p)->signal(SIGINT);
  for (auto* p : {&jtop, &stop, &jsnoop, &snoop}) EXPECT_EQ((*p)->wait(), 0) << (*p)->output();

  const json top_schema = schema("top.json"), req_schema = schema("requests.json");
  size_t top_docs = 0;
  for (const auto& l : lines_of(jtop->output())) {
    if (l.empty() || l[0] != '{') continue;
    expect_valid(top_schema, json::parse(l), "top -j");
    ++top_docs;
  }
  EXPECT_GE(top_docs, 3u);

  std::vector<std::string> sl;  // the JSON lines (stderr is merged into the output)
  for (const auto& l : lines_of(jsnoop->output()))
    if (!l.empty() && l[0] == '{') sl.push_back(l);
  ASSERT_GE(sl.size(), 3u);
  expect_valid(def_of(req_schema, "header"), json::parse(sl.front()), "snoop header");
  expect_valid(def_of(req_schema, "counters"), json::parse(sl.back()), "snoop counters");
  size_t ours = 0;
  for (size_t i = 1; i + 1 < sl.size(); ++i) {
    json j = json::parse(sl[i]);
    expect_valid(req_schema, j, "snoop request");
    ours += j["comm"] == "schema-io";
  }
  EXPECT_EQ(ours, 100u);

  // The screens: rates in binary units per second (top), a TIME(s) column
  // and one unit, ms, for every duration (snoop).
  static const std::regex top_row(
      R"( schema-io .* +[0-9.]+ (B|KiB|MiB|GiB) +[0-9.]+ (KiB|MiB|GiB) +[0-9.]+ +[0-9.]+ [mun]?s +[0-9.]+ [mun]?s +[0-9.]+$)");
  size_t top_rows = 0;
  for (const auto& l : lines_of(stop->output())) top_rows += std::regex_search(l, top_row);
  EXPECT_GE(top_rows, 1u) << stop->output();
  auto snoop_lines = lines_of(snoop->output());
  ASSERT_FALSE(snoop_lines.empty());
  EXPECT_EQ(snoop_lines[0].rfind("   TIME(s)   ISSUE(s) COMM", 0), 0u) << snoop_lines[0];
  EXPECT_NE(snoop_lines[0].find("LAT(ms) DT(ms)"), std::string::npos) << snoop_lines[0];
  static const std::regex snoop_row(
      R"(^ +[0-9]+\.[0-9]{6} +[0-9]+\.[0-9]{6} schema-io .* W +[0-9]+ +65536 +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3}$)");
  size_t snoop_rows = 0;
  for (const auto& l : snoop_lines) snoop_rows += std::regex_match(l, snoop_row);
  EXPECT_EQ(snoop_rows, 100u) << snoop->output().substr(0, 2000);
}

// On a terminal, record shows requests, bytes and losses so far on one line
// that it erases at the end; in a pipe it shows none.
TEST(LiveJsonAndScreens, RecordShowsProgressOnATerminal) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(64ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  char dir[] = "/tmp/blkrr-progress-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string out = std::string(dir) + "/r.blkrr", log = std::string(dir) + "/tty.log";
  const std::string cmd = "script -qfec \"'" BLKRR_BINARY "' record -d " + loop->path() +
                          " -D 2.2 -o " + out + "\" " + log + " > /dev/null 2>&1";
  auto writer = IoChild::spawn("progress-io", loop->path(), uniform(1, 200, Op::kRead, 4096, 0));
  ASSERT_TRUE(writer.ok());
  writer->go();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  ASSERT_EQ(writer->wait(), 0);
  std::ifstream in(log);
  std::stringstream s;
  s << in.rdbuf();
  const std::string tty = s.str();
  EXPECT_NE(tty.find("\rrecording: "), std::string::npos) << tty;
  EXPECT_NE(tty.find(" requests, "), std::string::npos) << tty;
  EXPECT_NE(tty.find(" lost"), std::string::npos) << tty;
  auto piped = BlkrrProcess::start(
      {"record", "-d", loop->path(), "-D", "1.2", "-o", out, "--overwrite"}, "");
  ASSERT_TRUE(piped.ok());
  EXPECT_EQ(piped->wait(), 0);
  EXPECT_EQ(piped->output().find("\rrecording: "), std::string::npos) << piped->output();
  std::system((std::string("rm -rf ") + dir).c_str());
}

}  // namespace
}  // namespace blkrr::testing
