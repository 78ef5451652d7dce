#include "cli/report_args.h"

#include <gtest/gtest.h>

#include "cli/args_test_util.h"

namespace blkrr::cli {
namespace {

Result<ReportArgs> parse(testing::Argv args) {
  return parse_report_args(args.argc(), args.argv());
}

void expect_usage(testing::Argv args, const std::string& message) {
  auto r = parse_report_args(args.argc(), args.argv());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUsage);
  EXPECT_EQ(r.error().message, message);
}

TEST(ReportArgs, Defaults) {
  auto r = parse({"blkrr report", "a.load.gz", "-o", "rep"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->help_printed);
  EXPECT_EQ(r->report.out_dir, "rep");
  EXPECT_EQ(r->report.bins, 50u);
  EXPECT_EQ(r->report.gnuplot, "gnuplot");
  EXPECT_EQ(r->report.jobs, 2);
  EXPECT_FALSE(r->report.compare || r->report.want_static || r->report.want_dynamic);
  EXPECT_EQ(r->files, std::vector<std::string>{"a.load.gz"});
  EXPECT_TRUE(r->labels.empty());
  EXPECT_FALSE(r->overwrite || r->quiet || r->exact_percentiles);
}

TEST(ReportArgs, HelpRunsNothing) {
  ::testing::internal::CaptureStdout();
  auto r = parse({"blkrr report", "--help"});
  std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->help_printed);
  EXPECT_NE(out.find("--compare ORIGINAL"), std::string::npos);
}

TEST(ReportArgs, FlagsAndValues) {
  auto r = parse({"blkrr report", "--static", "--dynamic", "--bins", "7", "--gnuplot", "/bin/gp",
                  "--overwrite", "-q", "--exact-percentiles", "-l", "x", "a", "b", "-o", "d"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->report.want_static && r->report.want_dynamic);
  EXPECT_EQ(r->report.bins, 7u);
  EXPECT_EQ(r->report.gnuplot, "/bin/gp");
  EXPECT_TRUE(r->overwrite && r->quiet && r->exact_percentiles);
  EXPECT_EQ(r->labels, std::vector<std::string>{"x"});
  EXPECT_EQ(r->files, (std::vector<std::string>{"a", "b"}));
}

TEST(ReportArgs, OutputDirectoryRequired) {
  expect_usage({"blkrr report", "a.load.gz"}, "missing -o DIR (where the report goes)");
}

TEST(ReportArgs, OutputDirectoryWithoutTrailingSlashes) {
  EXPECT_EQ(parse({"blkrr report", "-o", "rep//"})->report.out_dir, "rep");
  EXPECT_EQ(parse({"blkrr report", "-o", "/"})->report.out_dir, "/");
}

TEST(ReportArgs, BinsAtMostOneHundredThousand) {
  EXPECT_EQ(parse({"blkrr report", "-o", "d", "--bins", "100000"})->report.bins, 100000u);
  expect_usage({"blkrr report", "-o", "d", "--bins", "100001"},
               "--bins 100001 is too many (at most 100000)");
}

TEST(ReportArgs, CompareNamesTheOriginalFirst) {
  auto r =
      parse({"blkrr report", "--compare", "orig.blkrr", "r1.replay.gz", "r2.replay.gz", "-o", "d"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->report.compare);
  EXPECT_EQ(r->files, (std::vector<std::string>{"orig.blkrr", "r1.replay.gz", "r2.replay.gz"}));
}

TEST(ReportArgs, CompareNeedsAReplayResult) {
  expect_usage({"blkrr report", "--compare", "orig", "-o", "d"},
               "--compare orig needs at least one replay result FILE");
}

TEST(ReportArgs, AtMostOneLabelPerInput) {
  expect_usage({"blkrr report", "-l", "a", "-l", "b", "-l", "c", "x", "y", "-o", "d"},
               "more --label options than inputs");
  auto r = parse({"blkrr report", "-l", "o", "-l", "r", "--compare", "x", "y", "-o", "d"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->labels, (std::vector<std::string>{"o", "r"}));
}

TEST(ReportArgs, WithoutInputsReReports) {
  auto r = parse({"blkrr report", "-o", "rep/", "--bins", "100", "-l", "ignored"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->files.empty());
  EXPECT_FALSE(r->report.compare);
  EXPECT_EQ(r->report.out_dir, "rep");
  EXPECT_EQ(r->report.bins, 100u);
}

TEST(ReportArgs, CommandLineAsGiven) {
  auto r = parse({"blkrr report", "a b", "-o", "d"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->report.command_line, "blkrr report a b -o d");
}

TEST(ReportArgs, RemovedLettersSayWhatToWrite) {
  for (const char* letter : {"-s", "-c", "-b", "-d"}) {
    auto r = parse({"blkrr report", letter, "-o", "d"});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::kUsage) << letter;
  }
}

}  // namespace
}  // namespace blkrr::cli
