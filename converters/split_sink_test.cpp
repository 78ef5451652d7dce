// convert on the public datasets: --split-by volume with more volumes than
// open writers and a small line buffer (every file's exact content, appended
// gzip members), the
// same data lines as --device-id, and the summary's dataset lines.
#include "converters/split_sink.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "converters/convert.h"
#include "converters/load_format.h"
#include "converters/converter_fixtures.h"

namespace blkrr {
namespace {

using testing::data_path;
using testing::lines_of;
using testing::slurp;
using testing::slurp_raw;
using testing::TempDir;

constexpr int kVolumes = 5, kRounds = 3;

// An Alibaba-layout trace: kRounds rounds, each one request of every volume
// (round r, volume v: time r s + v ms, offset (100 v + r) * 4096).
std::string interleaved() {
  std::string s;
  for (int r = 0; r < kRounds; ++r)
    for (int v = 0; v < kVolumes; ++v)
      s += std::to_string(v) + "," + (r % 2 ? "W" : "R") + "," +
           std::to_string((100 * v + r) * 4096) + ",4096," +
           std::to_string(1577808000000000ull + r * 1000000ull + v * 1000ull) + "\n";
  return s;
}

// The data lines volume v's load must have: times from its first request.
std::vector<std::string> expected_lines(int v) {
  std::vector<std::string> out;
  for (int r = 0; r < kRounds; ++r) {
    char b[128];
    std::snprintf(b, sizeof b, "%17.9f ; %12u ; %4u ;%2s ; 0.0 ; 0.0", r * 1.0,
                  static_cast<unsigned>((100 * v + r) * 8), 8u, r % 2 ? "W" : "R");
    out.push_back(b);
  }
  return out;
}

// The lines after the header of a load.
std::vector<std::string> data_lines(const std::string& path) {
  auto all = lines_of(slurp(path));
  auto h = std::find(all.begin(), all.end(), std::string(load_header(LoadKind::kLoad)));
  if (h == all.end()) return {};
  all.erase(all.begin(), h + 1);
  return all;
}

size_t gzip_members(const std::string& raw) {
  size_t n = 0;
  for (size_t at = raw.find("\x1f\x8b\x08"); at != std::string::npos;
       at = raw.find("\x1f\x8b\x08", at + 1))
    ++n;
  return n;
}

ConvertOptions split_options(const std::string& in, const std::string& dir) {
  ConvertOptions o;
  o.inputs = {in};
  o.output = dir + "/";
  o.split_by_volume = true;
  o.split_max_open = 2;
  o.split_buffer_bytes = 300;  // about 5 lines: compressed out as the input goes
  o.command_line = "blkrr convert (test)";
  return o;
}

TEST(SplitByVolume, MoreVolumesThanOpenFilesExactContent) {
  TempDir t;
  auto in = t.write("io_traces.csv", interleaved());
  const std::string dir = t.file("out");
  auto s = run_convert(split_options(in, dir));
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_TRUE(s->split);
  EXPECT_EQ(s->split->volumes, 5u);
  EXPECT_GT(s->split->reopened, 0u);
  EXPECT_EQ(s->out, 15u);
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 5u);  // no temporary directory left
  size_t members = 0;
  for (int v = 0; v < kVolumes; ++v) {
    const std::string p = SplitSink::volume_path(dir, static_cast<uint32_t>(v));
    EXPECT_EQ(data_lines(p), expected_lines(v)) << p;
    members += gzip_members(slurp_raw(p));
    // blkrr's own load reader reads every member.
    auto src = open_source({p}, {});
    ASSERT_TRUE(src.ok()) << src.error().message;
    Request r;
    int n = 0;
    while (*(*src)->next(r)) ++n;
    EXPECT_EQ(n, kRounds) << p;
    auto text = slurp(p);
    EXPECT_NE(text.find("\nvolume " + std::to_string(v) + "\n"), std::string::npos) << text;
    // --device-id V writes the same data lines.
    ConvertOptions one;
    one.inputs = {in};
    one.output = t.file("one" + std::to_string(v) + ".load.gz");
    one.source.device_id = std::to_string(v);
    ASSERT_TRUE(run_convert(one).ok());
    EXPECT_EQ(data_lines(one.output), expected_lines(v));
  }
  // Every re-opening appended one gzip member to a file opened before.
  EXPECT_EQ(members, kVolumes + s->split->reopened);
  EXPECT_NE(s->text().find("split:          5 volumes -> " + dir), std::string::npos) << s->text();
}

TEST(SplitByVolume, FailureLeavesTheDirectoryAsItWas) {
  TempDir t;
  auto in = t.write("bad.csv", interleaved() + "3,R,x,4096,1577808009000000\n");
  const std::string dir = t.file("out");
  auto s = run_convert(split_options(in, dir));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find(":16: bad offset"), std::string::npos) << s.error().message;
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

// A second split into the same directory replaced the first one's loads.
TEST(SplitByVolume, AnEarlierSplitIsReplacedOnlyWithOverwrite) {
  TempDir t;
  auto in = t.write("io_traces.csv", interleaved());
  const std::string dir = t.file("out");
  ASSERT_TRUE(run_convert(split_options(in, dir)).ok());
  const std::string v0 = SplitSink::volume_path(dir, 0), before = slurp_raw(v0);
  auto again = run_convert(split_options(in, dir));
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("-o " + dir + " holds volume-"), std::string::npos)
      << again.error().message;
  EXPECT_NE(again.error().message.find("--overwrite"), std::string::npos);
  EXPECT_EQ(slurp_raw(v0), before);
  auto o = split_options(in, dir);
  o.existing = Existing::kReplace;
  auto s = run_convert(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->split->volumes, 5u);
}

TEST(SplitByVolume, RefusedWhereItCannotApply) {
  TempDir t;
  auto o = split_options(data_path("linux-mysql.load.gz"), t.file("o"));
  auto s = run_convert(o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("--split-by volume: a load input has no volume ids"),
            std::string::npos);
  o = split_options(data_path("datasets/alibaba.csv"), t.file("p"));
  o.repeat = 2;
  EXPECT_FALSE(run_convert(o).ok());
  o.repeat = 1;
  o.to = OutputFormat::kCsv;
  EXPECT_FALSE(run_convert(o).ok());
}

TEST(DatasetSummary, NamesFormatResolutionAndSpreading) {
  TempDir t;
  ConvertOptions o;
  o.inputs = {data_path("datasets/tencent.csv")};
  o.output = t.file("v.load.gz");
  o.source.device_id = "1063";
  auto s = run_convert(o);
  ASSERT_TRUE(s.ok()) << s.error().message;
  const std::string text = s->text();
  EXPECT_NE(text.find("(tencent) ->"), std::string::npos) << text;
  EXPECT_NE(text.find("  dataset:        Tencent CBS block trace, time resolution 1 s"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  assumed:        times were spread"), std::string::npos) << text;
  EXPECT_NE(text.find("requests of other volumes (not --device-id): 2"), std::string::npos) << text;
  EXPECT_EQ(s->out, 4u);
}

}  // namespace
}  // namespace blkrr
