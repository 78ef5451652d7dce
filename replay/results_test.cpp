#include "replay/results.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "converters/load_format.h"

namespace blkrr::replay {
namespace {

ReplayRecord rec(uint64_t seq, Op op, uint64_t due, uint64_t submit, uint64_t complete,
                 uint8_t flags = 0) {
  ReplayRecord r;
  r.req.seq = seq;
  r.req.load_ns = due;
  r.req.due_ns = due;
  r.req.sector = 100 * seq;
  r.req.sectors = 8;
  r.req.op = op;
  r.submit_ns = submit;
  r.complete_ns = complete;
  r.result = 4096;
  r.flags = flags;
  return r;
}

TEST(OutputSink, CompletionOrderLowerCasePushedBackNoDropped) {
  std::string path = "/tmp/blkrr-results-test-" + std::to_string(getpid()) + ".replay.gz";
  auto s = OutputSink::create(path, {"preamble line"}, {"INFO: x"});
  ASSERT_TRUE(s.ok()) << s.error().message;
  std::vector<ReplayRecord> v = {rec(2, Op::kRead, 2000, 2500, 9000),
                                 rec(1, Op::kWrite, 1000, 5000, 8000, kReplayPushedBack),
                                 rec(3, Op::kWrite, 3000, 0, 0, kReplayDropped)};
  s->on_records(v);
  ASSERT_TRUE(s->finish({"# tail : 1"}).ok());
  auto r = LoadReader::open(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->kind(), LoadKind::kReplay);
  LoadRecord l;
  ASSERT_TRUE(*r->next(l));
  EXPECT_EQ(l.sector, 200u);
  EXPECT_EQ(l.delay_ns, 500);
  EXPECT_EQ(l.duration_ns, 6500);
  EXPECT_FALSE(l.pushed_back);
  ASSERT_TRUE(*r->next(l));
  EXPECT_EQ(l.sector, 100u);
  EXPECT_EQ(l.op, Op::kWrite);
  EXPECT_TRUE(l.pushed_back);
  EXPECT_EQ(l.delay_ns, 4000);
  EXPECT_FALSE(*r->next(l));  // the dropped request is not a result line
  ASSERT_EQ(r->info_lines().size(), 2u);
  EXPECT_EQ(r->info_lines()[1], "# tail : 1");
  unlink(path.c_str());
}

TEST(Summary, CountsRatesAndDistributions) {
  StatsSink stats;
  std::vector<ReplayRecord> v = {rec(0, Op::kRead, 0, 10'000, 110'000),
                                 rec(1, Op::kWrite, 1'000'000, 1'030'000, 1'230'000),
                                 rec(2, Op::kRead, 2'000'000, 2'000'000, 2'050'000),
                                 rec(3, Op::kWrite, 3'000'000, 0, 0, kReplayDropped)};
  stats.on_records(v);
  PlanCounters p;
  p.planned = 4;
  p.first_due_ns = 0;
  p.last_due_ns = 3'000'000;
  p.planned_bytes_read = 8192;
  p.planned_bytes_written = 8192;
  MapCounters m;
  ReplayResult r;
  r.completed = 3;
  r.dropped = 1;
  r.first_submit_ns = 10'000;
  r.last_complete_ns = 2'050'000;
  r.reads_done = 2;
  r.writes_done = 1;
  r.bytes_read = 8192;
  r.bytes_written = 4096;
  r.max_in_flight = 2;
  SummaryInput in;
  in.plan = &p;
  in.map = &m;
  in.result = &r;
  in.stats = &stats;
  in.wraparound_factor = 1.5;
  in.fake_reasons = {"--dry-run"};
  auto j = build_summary(in);
  EXPECT_EQ(j["requests"]["planned"], 4);
  EXPECT_EQ(j["requests"]["done"], 3);
  EXPECT_EQ(j["requests"]["dropped"], 1);
  EXPECT_DOUBLE_EQ(j["demanded"]["iops"].get<double>(), 4 / 0.003);
  EXPECT_DOUBLE_EQ(j["achieved"]["iops"].get<double>(), 3 / 0.00204);
  EXPECT_EQ(j["delay_ns"]["all"]["count"], 3);
  EXPECT_EQ(j["delay_ns"]["all"]["max"], 30000);
  EXPECT_EQ(j["delay_ns"]["read"]["p50"], 5000);
  EXPECT_EQ(j["latency_ns"]["write"]["max"], 200000);
  EXPECT_EQ(j["max_in_flight"], 2);
  EXPECT_DOUBLE_EQ(j["mapping"]["wraparound_factor"].get<double>(), 1.5);
  EXPECT_TRUE(j["fake"].get<bool>());
  auto lines = summary_lines(j);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "# FAKE RESULTS: not a measurement of the device");
}

}  // namespace
}  // namespace blkrr::replay
