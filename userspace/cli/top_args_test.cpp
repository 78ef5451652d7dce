#include "cli/top_args.h"

#include <gtest/gtest.h>

#include "cli/args_test_util.h"

namespace blkrr::cli {
namespace {

Result<TopArgs> parse(testing::Argv args) {
  return parse_top_args(args.argc(), args.argv());
}

void expect_usage(testing::Argv args) {
  auto r = parse_top_args(args.argc(), args.argv());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUsage) << r.error().message;
}

TEST(TopArgs, Defaults) {
  auto r = parse({"blkrr top"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->help_printed);
  EXPECT_TRUE(r->devices.empty());
  EXPECT_FALSE(r->has_pid);
  EXPECT_EQ(r->by, live::GroupBy::kPid);
  EXPECT_EQ(r->sort, live::SortKey::kTime);
  EXPECT_FALSE(r->prometheus.has_value());
  EXPECT_EQ(r->interval_ns, 1'000'000'000u);
  EXPECT_EQ(r->count, 0u);
  EXPECT_EQ(r->top_n, 0u);
  EXPECT_FALSE(r->rolling || r->json || r->quiet || r->utc || r->prometheus_pid);
}

TEST(TopArgs, HelpRunsNothing) {
  ::testing::internal::CaptureStdout();
  auto r = parse({"blkrr top", "--help"});
  std::string out = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->help_printed);
  EXPECT_NE(out.find("--prometheus ADDR:PORT"), std::string::npos);
}

TEST(TopArgs, FlagsAndValues) {
  auto r = parse({"blkrr top", "-d", "sda", "-d", "8:16", "-p", "42", "-C", "-r", "10", "-j",
                  "--utc", "--prometheus-pid"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->devices, (std::vector<std::string>{"sda", "8:16"}));
  EXPECT_TRUE(r->has_pid);
  EXPECT_EQ(r->pid, 42u);
  EXPECT_TRUE(r->rolling && r->json && r->utc && r->prometheus_pid);
  EXPECT_EQ(r->top_n, 10u);
}

TEST(TopArgs, PidIsAPositiveNumber) {
  expect_usage({"blkrr top", "-p", "abc"});
  expect_usage({"blkrr top", "-p", "0"});
}

TEST(TopArgs, SortKeyFromEachSpelling) {
  EXPECT_EQ(parse({"blkrr top", "-s", "lat"})->sort, live::SortKey::kLatency);
  EXPECT_EQ(parse({"blkrr top", "-s", "write"})->sort, live::SortKey::kWrite);
  EXPECT_EQ(parse({"blkrr top", "--bytes"})->sort, live::SortKey::kBytes);
  EXPECT_EQ(parse({"blkrr top", "--disktime"})->sort, live::SortKey::kTime);
  EXPECT_EQ(parse({"blkrr top", "--percent"})->sort, live::SortKey::kTime);
}

TEST(TopArgs, OneSortColumnOnly) {
  expect_usage({"blkrr top", "-s", "read", "--bytes"});
  expect_usage({"blkrr top", "--disktime", "--percent"});
  expect_usage({"blkrr top", "--bytes", "--percent"});
}

TEST(TopArgs, UnknownSortKey) {
  expect_usage({"blkrr top", "-s", "bogus"});
}

TEST(TopArgs, GroupBy) {
  EXPECT_EQ(parse({"blkrr top", "--by", "cgroup"})->by, live::GroupBy::kCgroup);
  EXPECT_EQ(parse({"blkrr top", "--by", "comm"})->by, live::GroupBy::kComm);
  expect_usage({"blkrr top", "--by", "foo"});
}

TEST(TopArgs, PrometheusAddress) {
  auto r = parse({"blkrr top", "-q", "--prometheus", "127.0.0.1:9111"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->prometheus.has_value());
  EXPECT_EQ(r->prometheus->host, "127.0.0.1");
  EXPECT_EQ(r->prometheus->port, 9111);
  EXPECT_TRUE(r->quiet);
  expect_usage({"blkrr top", "--prometheus", "bad:addr:x"});
}

TEST(TopArgs, QuietNeedsPrometheus) {
  auto r = parse({"blkrr top", "-q"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUsage);
  EXPECT_EQ(r.error().message, "-q without --prometheus would show nothing");
}

TEST(TopArgs, IntervalAndCount) {
  auto r = parse({"blkrr top", "0.5", "3"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->interval_ns, 500'000'000u);
  EXPECT_EQ(r->count, 3u);
  EXPECT_EQ(parse({"blkrr top", "250ms"})->interval_ns, 250'000'000u);
  EXPECT_EQ(parse({"blkrr top", "0.01"})->interval_ns, 10'000'000u);
}

TEST(TopArgs, IntervalAtLeastTenMilliseconds) {
  expect_usage({"blkrr top", "0.001"});
  expect_usage({"blkrr top", "abc"});
}

TEST(TopArgs, CountIsPositive) {
  expect_usage({"blkrr top", "1", "0"});
  expect_usage({"blkrr top", "1", "x"});
  expect_usage({"blkrr top", "1", "2", "3"});
}

TEST(TopArgs, NumericDeviceIsIotopsInterval) {
  auto r = parse({"blkrr top", "-d", "5"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUsage);
  EXPECT_NE(r.error().message.find("blkrr top 5"), std::string::npos) << r.error().message;
}

TEST(TopArgs, CommAtMostFifteenCharacters) {
  EXPECT_EQ(parse({"blkrr top", "-n", "fifteen_chars_x"})->comm, "fifteen_chars_x");
  expect_usage({"blkrr top", "-n", "sixteen_chars_xx"});
}

TEST(TopArgs, NumericCommIsATaskNameWithANote) {
  ::testing::internal::CaptureStderr();
  auto r = parse({"blkrr top", "-n", "123"});
  std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->comm, "123");
  EXPECT_EQ(err,
            "blkrr top: -n 123 shows the tasks named '123'; for 123 refreshes (iotop's -n) "
            "write blkrr top 1 123\n");
}

TEST(TopArgs, RemovedLettersSayWhatToWrite) {
  for (const char* letter : {"-b", "-P", "-t", "-o"}) expect_usage({"blkrr top", letter});
}

}  // namespace
}  // namespace blkrr::cli
