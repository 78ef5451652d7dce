#include "cli/convert_args.h"

#include <gtest/gtest.h>

#include "cli/args_test_util.h"

namespace blkrr::cli {
namespace {

using testing::Argv;
using testing::kind_of;
using testing::parse_printing;

// `convert in.load.gz OPTS...`: the input need not exist (parsing reads none).
Result<ConvertArgs> parse(std::initializer_list<std::string> opts) {
  std::vector<std::string> v = {"convert", "in.load.gz"};
  v.insert(v.end(), opts);
  Argv a(std::move(v));
  return parse_convert_args(a.argc(), a.argv());
}

TEST(ConvertArgs, Defaults) {
  auto r = parse({"-o", "out.csv"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  const ConvertOptions& o = r->convert;
  EXPECT_FALSE(r->help_printed);
  EXPECT_EQ(o.inputs, std::vector<std::string>{"in.load.gz"});
  EXPECT_EQ(o.output, "out.csv");
  EXPECT_EQ(o.command_line, "convert in.load.gz -o out.csv");
  EXPECT_EQ(o.source.format, InputFormat::kAuto);
  EXPECT_FALSE(o.to.has_value());
  EXPECT_EQ(o.source.blktrace_action, 'D');
  EXPECT_EQ(o.point, StartPoint::kIssue);
  EXPECT_FALSE(o.until_ns.has_value());
  EXPECT_EQ(o.repeat, 1u);
  EXPECT_EQ(o.derive, 0u);
  EXPECT_EQ(o.snippet_ns, 300'000'000'000);
  EXPECT_EQ(o.reorder_window_ns, 10'000'000'000);
  EXPECT_EQ(o.gz_level, 1);
  EXPECT_EQ(o.existing, Existing::kRefuse);
  EXPECT_FALSE(o.split_by_volume);
  EXPECT_FALSE(o.fit.has_value());
  EXPECT_FALSE(o.progress);  // run_convert_command's question
  EXPECT_EQ(r->graph.output, "");
  EXPECT_FALSE(r->quiet || r->verbose);
}

TEST(ConvertArgs, AnInputIsRequired) {
  Argv none{"convert", "-o", "out.csv"};
  EXPECT_EQ(kind_of(parse_convert_args(none.argc(), none.argv())), ErrorKind::kUsage);
}

TEST(ConvertArgs, HelpRunsNothing) {
  std::string out;
  auto r = parse_printing(parse_convert_args, {"convert", "--help"}, out);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->help_printed);
  EXPECT_NE(out.find("IN... -o OUT"), std::string::npos);
}

TEST(ConvertArgs, AnOutputOrADependencyFileIsRequired) {
  EXPECT_EQ(kind_of(parse({})), ErrorKind::kUsage);
  auto r = parse({"--dependencies", "in.deps", "--overwrite", "--reorder-window", "3"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->convert.output, "");
  EXPECT_EQ(r->graph.output, "in.deps");
  // The graph reads the same inputs the same way.
  EXPECT_EQ(r->graph.inputs, std::vector<std::string>{"in.load.gz"});
  EXPECT_EQ(r->graph.existing, Existing::kReplace);
  EXPECT_EQ(r->graph.reorder_window_ns, 3'000'000'000u);
}

TEST(ConvertArgs, InputFormatIsKnown) {
  EXPECT_EQ(kind_of(parse({"-o", "-", "--from", "nope"})), ErrorKind::kUsage);
  auto r = parse({"-o", "-", "--from", "blktrace"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->convert.source.format, InputFormat::kBlktrace);
  EXPECT_EQ(r->graph.source.format, InputFormat::kBlktrace);
}

TEST(ConvertArgs, OutputFormatIsKnown) {
  EXPECT_EQ(kind_of(parse({"-o", "-", "--to", "nope"})), ErrorKind::kUsage);
  auto r = parse({"-o", "-", "--to", "csv"});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->convert.to.has_value());
  EXPECT_EQ(*r->convert.to, OutputFormat::kCsv);
}

TEST(ConvertArgs, SplitByVolumeOnly) {
  EXPECT_EQ(kind_of(parse({"-o", "d/", "--split-by", "disk"})), ErrorKind::kUsage);
  auto r = parse({"-o", "d/", "--split-by", "volume"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->convert.split_by_volume);
}

TEST(ConvertArgs, ActionIsQueuedOrIssued) {
  EXPECT_EQ(kind_of(parse({"-o", "-", "--action", "X"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"-o", "-", "--action", "QD"})), ErrorKind::kUsage);
  auto r = parse({"-o", "-", "--action", "Q"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->convert.source.blktrace_action, 'Q');
}

TEST(ConvertArgs, PointIsIssueOrComplete) {
  EXPECT_EQ(kind_of(parse({"-o", "-", "--point", "middle"})), ErrorKind::kUsage);
  auto r = parse({"-o", "-", "--point", "complete"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->convert.point, StartPoint::kComplete);
}

TEST(ConvertArgs, UntilExcludesRepeatAndIsPositive) {
  EXPECT_EQ(kind_of(parse({"-o", "-", "--repeat", "2", "--until", "10"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"-o", "-", "--until", "0"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"-o", "-", "--until", "abc"})), ErrorKind::kUsage);
  auto r = parse({"-o", "-", "--until", "1m30s"});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->convert.until_ns.has_value());
  EXPECT_EQ(*r->convert.until_ns, 90'000'000'000);
  auto p = parse({"-o", "-", "--repeat", "4"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->convert.repeat, 4u);
}

TEST(ConvertArgs, DeriveAtMostAThousand) {
  EXPECT_EQ(kind_of(parse({"-o", "x", "--derive", "1001"})), ErrorKind::kUsage);
  auto r = parse({"-o", "x", "--derive", "1000"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->convert.derive, 1000u);
}

TEST(ConvertArgs, SnippetIsAPositiveDuration) {
  EXPECT_EQ(kind_of(parse({"-o", "x", "--snippet", "0"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"-o", "x", "--snippet", "5x"})), ErrorKind::kUsage);
  auto r = parse({"-o", "x", "--snippet", "1.5"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->convert.snippet_ns, 1'500'000'000);
}

TEST(ConvertArgs, ReorderWindowIsADuration) {
  EXPECT_EQ(kind_of(parse({"-o", "x", "--reorder-window", "1x"})), ErrorKind::kUsage);
  auto r = parse({"-o", "x", "--reorder-window", "0"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->convert.reorder_window_ns, 0);
}

TEST(ConvertArgs, GzipLevelOneToNine) {
  EXPECT_EQ(kind_of(parse({"-o", "x", "--gzip-level", "0"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"-o", "x", "--gzip-level", "10"})), ErrorKind::kUsage);
  auto r = parse({"-o", "x", "--gzip-level", "9"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->convert.gz_level, 9);
}

TEST(ConvertArgs, WrapOrScaleOnce) {
  EXPECT_EQ(kind_of(parse({"-o", "-", "--wrap", "1G", "--scale", "1G"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"-o", "-", "--wrap", "1G", "--wrap", "2G"})), ErrorKind::kUsage);
  auto r = parse({"-o", "-", "--scale", "2G"});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->convert.fit.has_value());
  EXPECT_EQ(r->convert.fit->mode, MapMode::kScale);
  EXPECT_EQ(r->convert.fit->target_bytes, 2ull << 30);
  EXPECT_EQ(r->convert.fit->target, "2G");
}

TEST(ConvertArgs, OverwriteReplacesOutputs) {
  auto r = parse({"-o", "x", "--overwrite", "-q", "-v"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->convert.existing, Existing::kReplace);
  EXPECT_TRUE(r->quiet);
  EXPECT_TRUE(r->verbose);
}

TEST(ConvertArgs, SelectionOptionsAreParsed) {
  EXPECT_EQ(kind_of(parse({"-o", "-", "--ops", "Q"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"-o", "-", "--window", "1"})), ErrorKind::kUsage);
  EXPECT_EQ(kind_of(parse({"-o", "-", "-c", "1"})), ErrorKind::kUsage);  // removed: -n/--cgroup
  auto r = parse({"-o", "-", "-n", "mysqld", "-n", "fio"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->convert.select.comms, (std::vector<std::string>{"mysqld", "fio"}));
}

}  // namespace
}  // namespace blkrr::cli
