#include "cli/snoop_args.h"

#include <gtest/gtest.h>

#include "cli/args_test_util.h"

namespace blkrr::cli {
namespace {

Result<SnoopArgs> parse(testing::Argv args) {
  return parse_snoop_args(args.argc(), args.argv());
}

void expect_usage(testing::Argv args) {
  auto r = parse_snoop_args(args.argc(), args.argv());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUsage) << r.error().message;
}

TEST(SnoopArgs, Defaults) {
  auto r = parse({"blkrr snoop"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->help_printed);
  EXPECT_TRUE(r->devices.empty());
  EXPECT_FALSE(r->has_pid);
  EXPECT_EQ(r->comm, "");
  EXPECT_FALSE(r->issue || r->majmin || r->queue || r->json);
  EXPECT_EQ(r->duration_ns, 0u);
}

TEST(SnoopArgs, HelpRunsNothing) {
  ::testing::internal::CaptureStdout();
  auto r = parse({"blkrr snoop", "-h"});
  std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->help_printed);
  EXPECT_NE(out.find("--majmin"), std::string::npos);
}

TEST(SnoopArgs, FlagsAndFilters) {
  auto r = parse({"blkrr snoop", "-d", "sda2", "-p", "7", "-n", "postgres", "--issue", "--majmin",
                  "-Q", "-j"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->devices, std::vector<std::string>{"sda2"});
  EXPECT_TRUE(r->has_pid);
  EXPECT_EQ(r->pid, 7u);
  EXPECT_EQ(r->comm, "postgres");
  EXPECT_TRUE(r->issue && r->majmin && r->queue && r->json);
}

TEST(SnoopArgs, PidIsAPositiveNumber) {
  expect_usage({"blkrr snoop", "-p", "0"});
  expect_usage({"blkrr snoop", "-p", "x"});
}

TEST(SnoopArgs, DurationAsOptionOrArgument) {
  EXPECT_EQ(parse({"blkrr snoop", "10"})->duration_ns, 10'000'000'000u);
  EXPECT_EQ(parse({"blkrr snoop", "-D", "1.5s"})->duration_ns, 1'500'000'000u);
  EXPECT_EQ(parse({"blkrr snoop", "-D", "1m30s"})->duration_ns, 90'000'000'000u);
}

TEST(SnoopArgs, DurationOnceAndMoreThanZero) {
  expect_usage({"blkrr snoop", "-D", "1", "5"});
  expect_usage({"blkrr snoop", "-D", "0"});
  expect_usage({"blkrr snoop", "abc"});
  expect_usage({"blkrr snoop", "1", "2"});
}

TEST(SnoopArgs, OldStartIsIssueWithANote) {
  ::testing::internal::CaptureStderr();
  auto r = parse({"blkrr snoop", "--start"});
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->issue);
  EXPECT_EQ(err, "blkrr snoop: --start is now --issue (the ISSUE(s) column)\n");
}

TEST(SnoopArgs, CommAtMostFifteenCharacters) {
  expect_usage({"blkrr snoop", "-n", "sixteen_chars_xx"});
}

TEST(SnoopArgs, RemovedLettersSayWhatToWrite) {
  for (const char* letter : {"-s", "-t", "-N"}) {
    auto r = parse({"blkrr snoop", letter});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, ErrorKind::kUsage);
    EXPECT_NE(r.error().message.find(": write "), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace blkrr::cli
