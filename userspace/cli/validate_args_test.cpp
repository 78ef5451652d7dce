#include "cli/validate_args.h"

#include <gtest/gtest.h>

#include "cli/args_test_util.h"

namespace blkrr::cli {
namespace {

Result<ValidateArgs> parse(testing::Argv args) {
  return parse_validate_args(args.argc(), args.argv());
}

void expect_usage(testing::Argv args) {
  auto r = parse_validate_args(args.argc(), args.argv());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUsage) << r.error().message;
}

TEST(ValidateArgs, Defaults) {
  auto r = parse({"blkrr validate", "run.replay.gz", "run.blkrr"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->help_printed);
  EXPECT_EQ(r->replay, "run.replay.gz");
  EXPECT_EQ(r->traces, std::vector<std::string>{"run.blkrr"});
  EXPECT_EQ(r->device, "");
  EXPECT_EQ(r->json_path, "");
  EXPECT_FALSE(r->overwrite || r->fail_incomplete || r->quiet || r->exact_percentiles);
  EXPECT_EQ(r->list, 10u);
  const auto& o = r->offline;
  EXPECT_EQ(o.match.pre_slack_ns, 5'000'000u);
  EXPECT_EQ(o.match.post_slack_ns, 5'000'000u);
  EXPECT_EQ(o.match.max_listed, 1000u);
  EXPECT_FALSE(o.match.strict_completions || o.match.per_request);
  EXPECT_FALSE(o.offset_ns.has_value());
  EXPECT_EQ(o.sector_offset, 0u);
}

TEST(ValidateArgs, HelpRunsNothing) {
  ::testing::internal::CaptureStdout();
  auto r = parse({"blkrr validate", "--help"});
  std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->help_printed);
  EXPECT_NE(out.find("--fail-incomplete"), std::string::npos);
}

TEST(ValidateArgs, AReplayAndAtLeastOneTrace) {
  expect_usage({"blkrr validate", "run.replay.gz"});
  auto r = parse({"blkrr validate", "r", "cap.blktrace.0", "cap.blktrace.1"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->traces, (std::vector<std::string>{"cap.blktrace.0", "cap.blktrace.1"}));
  EXPECT_EQ(r->inputs(), (std::vector<std::string>{"r", "cap.blktrace.0", "cap.blktrace.1"}));
}

TEST(ValidateArgs, FlagsAndValues) {
  auto r = parse({"blkrr validate", "r", "t", "-d", "sdb", "--strict", "--per-request",
                  "--sector-offset", "8", "--list", "3", "--max-listed", "2", "--fail-incomplete",
                  "-q", "--overwrite", "--exact-percentiles"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->device, "sdb");
  EXPECT_TRUE(r->offline.match.strict_completions && r->offline.match.per_request);
  EXPECT_EQ(r->offline.sector_offset, 8u);
  EXPECT_EQ(r->list, 3u);
  EXPECT_EQ(r->offline.match.max_listed, 2u);
  EXPECT_TRUE(r->fail_incomplete && r->quiet && r->overwrite && r->exact_percentiles);
}

TEST(ValidateArgs, SlackIsADuration) {
  auto r = parse({"blkrr validate", "r", "t", "--slack", "500us"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->offline.match.pre_slack_ns, 500'000u);
  EXPECT_EQ(r->offline.match.post_slack_ns, 500'000u);
  expect_usage({"blkrr validate", "r", "t", "--slack", "xx"});
}

TEST(ValidateArgs, OffsetInSecondsMayBeNegative) {
  auto r = parse({"blkrr validate", "r", "t", "--offset", "-0.25"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->offline.offset_ns.has_value());
  EXPECT_EQ(*r->offline.offset_ns, -250'000'000);
  auto bad = parse({"blkrr validate", "r", "t", "--offset", "abc"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kUsage);
  EXPECT_EQ(bad.error().message, "--offset 'abc': not a number: 'abc'");
}

TEST(ValidateArgs, JsonOnStandardOutputOrIntoAFile) {
  EXPECT_EQ(parse({"blkrr validate", "r", "t", "--json"})->json_path, "-");
  EXPECT_EQ(parse({"blkrr validate", "r", "t", "--json-file", "v.json"})->json_path, "v.json");
  auto both = parse({"blkrr validate", "r", "t", "--json", "--json-file", "v.json"});
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().kind, ErrorKind::kUsage);
  EXPECT_EQ(both.error().message, "give --json or --json-file, not both");
}

TEST(ValidateArgs, RemovedLettersSayWhatToWrite) {
  for (const char* letter : {"-F", "-s", "-O", "-S", "-x", "-r", "-l", "-L"})
    expect_usage({"blkrr validate", letter, "r", "t"});
}

}  // namespace
}  // namespace blkrr::cli
