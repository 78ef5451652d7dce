#include "validate/matcher.h"

#include <gtest/gtest.h>

#include <random>

#include "validate/report_io.h"

namespace blkrr::validate {
namespace {

constexpr uint64_t kUs = 1000;

ReplayedRequest rq(uint64_t id, uint64_t sector, uint32_t sectors, Op op, uint64_t submit_us,
                   uint64_t complete_us, ReplayStatus st = ReplayStatus::kDone) {
  ReplayedRequest r;
  r.id = id;
  r.sector = sector;
  r.sectors = sectors;
  r.op = op;
  r.submit_ns = submit_us * kUs;
  r.complete_ns = complete_us * kUs;
  r.status = st;
  return r;
}

Request blk(uint64_t sector, uint32_t sectors, Op op, uint64_t issue_us, uint64_t complete_us,
            uint32_t pid = 100, const char* comm = "blkrr") {
  Request b;
  b.sector = sector;
  b.bytes = sectors * 512;
  b.op = op;
  b.issue_ns = issue_us * kUs;
  b.complete_ns = complete_us * kUs;
  b.pid = b.tgid = pid;
  b.set_comm(comm);
  return b;
}

Report run(const std::vector<ReplayedRequest>& r, const std::vector<Request>& b,
           const Losses& l = {}, const MatchOptions& o = {}) {
  return match_requests(r, b, l, o);
}

TEST(Matcher, ExactMatchIsComplete) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 8, Op::kRead, 1000, 1100),
                                    rq(1, 500, 16, Op::kWrite, 1050, 1200),
                                    rq(2, 100, 8, Op::kRead, 5000, 5100)};
  std::vector<Request> b = {blk(100, 8, Op::kRead, 1010, 1090),
                            blk(500, 16, Op::kWrite, 1060, 1180),
                            blk(100, 8, Op::kRead, 5010, 5090)};
  Report rep = run(r, b);
  EXPECT_EQ(rep.verdict, Verdict::kComplete);
  EXPECT_EQ(rep.submitted, 3u);
  EXPECT_EQ(rep.covered, 3u);
  EXPECT_DOUBLE_EQ(rep.completeness_pct(), 100.0);
  EXPECT_EQ(rep.matched_block, 3u);
  EXPECT_EQ(rep.foreign_count, 0u);
  EXPECT_EQ(rep.split_requests, 0u);
  EXPECT_EQ(rep.merged_block, 0u);
  EXPECT_EQ(rep.missing_count, 0u);
  EXPECT_EQ(rep.altered_count, 0u);
  // Replayer latencies 100, 150, 100 us; block 80, 120, 80 us.
  EXPECT_EQ(rep.block_latency_us.count, 3u);
  EXPECT_DOUBLE_EQ(rep.replay_latency_us.p50, 100.0);
  EXPECT_DOUBLE_EQ(rep.block_latency_us.p50, 80.0);
  EXPECT_DOUBLE_EQ(rep.overhead_us.min, 20.0);
  EXPECT_DOUBLE_EQ(rep.overhead_us.max, 30.0);
}

TEST(Matcher, SplitInTwoAndThree) {
  std::vector<ReplayedRequest> r = {rq(0, 1000, 256, Op::kWrite, 100, 400),
                                    rq(1, 5000, 384, Op::kRead, 500, 900)};
  // Pieces of request 1 arrive out of sector order.
  std::vector<Request> b = {
      blk(1000, 128, Op::kWrite, 110, 300), blk(1128, 128, Op::kWrite, 111, 390),
      blk(5256, 128, Op::kRead, 510, 800), blk(5000, 128, Op::kRead, 511, 850),
      blk(5128, 128, Op::kRead, 512, 880)};
  MatchOptions o;
  o.per_request = true;
  Report rep = run(r, b, {}, o);
  EXPECT_EQ(rep.verdict, Verdict::kComplete);
  EXPECT_EQ(rep.covered, 2u);
  EXPECT_EQ(rep.split_requests, 2u);
  EXPECT_EQ(rep.split_pieces, 5u);
  EXPECT_EQ(rep.merged_block, 0u);
  EXPECT_EQ(rep.foreign_count, 0u);
  ASSERT_EQ(rep.per_request.size(), 2u);
  EXPECT_EQ(rep.per_request[0].block_ns, (390 - 110) * kUs);  // first issue to last completion
  EXPECT_EQ(rep.per_request[1].block_ns, (880 - 510) * kUs);
  EXPECT_EQ(rep.per_request[1].replay_ns, 400 * kUs);
}

TEST(Matcher, MergedPairs) {
  std::vector<ReplayedRequest> r = {
      rq(0, 0, 8, Op::kWrite, 100, 300), rq(1, 8, 8, Op::kWrite, 101, 300),
      rq(2, 64, 8, Op::kRead, 400, 600), rq(3, 72, 8, Op::kRead, 402, 600)};
  std::vector<Request> b = {blk(0, 16, Op::kWrite, 120, 280), blk(64, 16, Op::kRead, 420, 580)};
  Report rep = run(r, b);
  EXPECT_EQ(rep.verdict, Verdict::kComplete);
  EXPECT_EQ(rep.covered, 4u);
  EXPECT_EQ(rep.merged_block, 2u);
  EXPECT_EQ(rep.merged_requests, 4u);
  EXPECT_EQ(rep.split_requests, 0u);
  EXPECT_EQ(rep.partly_foreign, 0u);
}

TEST(Matcher, SplitAndMergeAcrossBoundaries) {
  std::vector<ReplayedRequest> r = {rq(0, 0, 12, Op::kRead, 100, 300),
                                    rq(1, 12, 12, Op::kRead, 100, 300)};
  std::vector<Request> b = {blk(0, 8, Op::kRead, 110, 200), blk(8, 8, Op::kRead, 111, 210),
                            blk(16, 8, Op::kRead, 112, 220)};
  Report rep = run(r, b);
  EXPECT_EQ(rep.covered, 2u);
  EXPECT_EQ(rep.split_requests, 2u);
  EXPECT_EQ(rep.split_pieces, 4u);
  EXPECT_EQ(rep.merged_block, 1u);
  EXPECT_EQ(rep.merged_requests, 2u);
  EXPECT_EQ(rep.foreign_count, 0u);
}

TEST(Matcher, MissingRequestsAreListed) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 8, Op::kRead, 100, 200),
                                    rq(1, 900, 24, Op::kWrite, 150, 250),
                                    rq(2, 300, 8, Op::kRead, 160, 260)};
  std::vector<Request> b = {blk(100, 8, Op::kRead, 110, 190), blk(300, 8, Op::kRead, 170, 250)};
  Report rep = run(r, b);
  EXPECT_EQ(rep.verdict, Verdict::kIncomplete);
  EXPECT_EQ(rep.covered, 2u);
  EXPECT_EQ(rep.missing_count, 1u);
  ASSERT_EQ(rep.missing.size(), 1u);
  EXPECT_EQ(rep.missing[0].id, 1u);
  EXPECT_EQ(rep.missing[0].sector, 900u);
  EXPECT_EQ(rep.missing[0].sectors, 24u);
  EXPECT_EQ(rep.missing[0].op, Op::kWrite);
  EXPECT_NEAR(rep.completeness_pct(), 66.667, 0.001);
}

TEST(Matcher, OutsideTheTimeWindowIsMissingAndForeign) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 8, Op::kRead, 1000, 1100)};
  // Same sectors 5 ms later: another request, not this one.
  std::vector<Request> b = {blk(100, 8, Op::kRead, 6100, 6200, 77, "cat")};
  Report rep = run(r, b);
  EXPECT_EQ(rep.missing_count, 1u);
  EXPECT_EQ(rep.foreign_count, 1u);
  ASSERT_EQ(rep.foreign.size(), 1u);
  EXPECT_EQ(rep.foreign[0].comm, "cat");
}

TEST(Matcher, AlteredOperation) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 8, Op::kWrite, 100, 200)};
  std::vector<Request> b = {blk(100, 8, Op::kRead, 110, 190)};
  Report rep = run(r, b);
  EXPECT_EQ(rep.verdict, Verdict::kIncomplete);
  EXPECT_EQ(rep.covered, 0u);
  EXPECT_EQ(rep.missing_count, 0u);
  EXPECT_EQ(rep.altered_count, 1u);
  ASSERT_EQ(rep.altered.size(), 1u);
  EXPECT_EQ(rep.altered[0].kind, AlterKind::kOp);
  EXPECT_EQ(rep.altered[0].seen_op, Op::kRead);
  EXPECT_EQ(rep.altered[0].covered_sectors, 8u);
  EXPECT_EQ(rep.foreign_count, 0u);
}

TEST(Matcher, AlteredSizeShortAndLarger) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 16, Op::kRead, 100, 200),
                                    rq(1, 800, 8, Op::kWrite, 100, 200)};
  std::vector<Request> b = {blk(100, 8, Op::kRead, 110, 190), blk(800, 16, Op::kWrite, 110, 190)};
  Report rep = run(r, b);
  EXPECT_EQ(rep.covered, 1u);  // the larger one served every sector asked
  EXPECT_EQ(rep.altered_count, 2u);
  ASSERT_EQ(rep.altered.size(), 2u);
  EXPECT_EQ(rep.altered[0].kind, AlterKind::kShort);
  EXPECT_EQ(rep.altered[0].covered_sectors, 8u);
  EXPECT_EQ(rep.altered[1].kind, AlterKind::kLarger);
  EXPECT_EQ(rep.altered[1].seen_sectors, 16u);
  EXPECT_EQ(rep.partly_foreign, 1u);
  EXPECT_EQ(rep.verdict, Verdict::kIncomplete);
}

TEST(Matcher, ForeignIoWithPidAndComm) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 8, Op::kRead, 100, 200)};
  std::vector<Request> b = {blk(100, 8, Op::kRead, 110, 190),
                            blk(5000, 256, Op::kWrite, 120, 400, 4242, "dd"),
                            blk(5256, 256, Op::kWrite, 130, 410, 4242, "dd"),
                            blk(100, 8, Op::kRead, 150, 180, 555, "cat")};
  Report rep = run(r, b);
  EXPECT_EQ(rep.verdict, Verdict::kComplete);  // foreign I/O does not make a replay incomplete
  EXPECT_EQ(rep.foreign_count, 3u);
  EXPECT_EQ(rep.foreign_bytes, (256u + 256u + 8u) * 512u);
  ASSERT_EQ(rep.foreign_by_process.size(), 2u);
  EXPECT_EQ(rep.foreign_by_process[0].comm, "dd");
  EXPECT_EQ(rep.foreign_by_process[0].pid, 4242u);
  EXPECT_EQ(rep.foreign_by_process[0].requests, 2u);
  EXPECT_EQ(rep.foreign_by_process[1].comm, "cat");
}

TEST(Matcher, DroppedAreExpectedMissing) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 8, Op::kWrite, 100, 200),
                                    rq(1, 104, 8, Op::kWrite, 0, 0, ReplayStatus::kDropped),
                                    rq(2, 900, 8, Op::kWrite, 0, 0, ReplayStatus::kNotStarted)};
  std::vector<Request> b = {blk(100, 8, Op::kWrite, 110, 190)};
  Report rep = run(r, b);
  EXPECT_EQ(rep.verdict, Verdict::kComplete);
  EXPECT_EQ(rep.submitted, 1u);
  EXPECT_EQ(rep.dropped, 1u);
  EXPECT_EQ(rep.not_started, 1u);
  EXPECT_EQ(rep.missing_count, 0u);
  EXPECT_EQ(rep.expected_missing_count, 1u);
  ASSERT_EQ(rep.expected_missing.size(), 1u);
  EXPECT_EQ(rep.expected_missing[0].id, 1u);
}

TEST(Matcher, LostEventsMakeTheVerdictUnknown) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 8, Op::kRead, 100, 200)};
  std::vector<Request> b = {blk(100, 8, Op::kRead, 110, 190)};
  Losses l;
  losses_from_counters({{"ringbuf_reserve_failed", 3}, {"completions", 1}}, l);
  Report rep = run(r, b, l);
  EXPECT_EQ(rep.covered, 1u);
  EXPECT_EQ(rep.verdict, Verdict::kUnknown);
  EXPECT_EQ(rep.losses.ringbuf_full, 3u);

  Losses l2;
  losses_from_counters({{"completion_without_issue", 1}}, l2);
  EXPECT_EQ(run(r, b, l2).verdict, Verdict::kUnknown);
  Losses l3;
  l3.counters_missing = true;
  EXPECT_EQ(run(r, b, l3).verdict, Verdict::kUnknown);
  // A missing request with losses is unknown, not incomplete.
  EXPECT_EQ(run(r, {}, l2).verdict, Verdict::kUnknown);
  // So is one of a trace of rotated pieces with a gap between two.
  Losses l4;
  l4.trace_gaps = 1;
  EXPECT_EQ(run(r, {}, l4).verdict, Verdict::kUnknown);
  EXPECT_EQ(run(r, {}, Losses{}).verdict, Verdict::kIncomplete);
}

TEST(Matcher, CompletionNotSeen) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 8, Op::kRead, 100, 200)};
  Request b = blk(100, 8, Op::kRead, 110, 0);
  b.complete_ns = kNoTime;
  b.rec_flags = kRecCompletionNotSeen;
  Report rep = run(r, {b});
  // The issue was seen and the replayer saw the completion: covered, latency unknown.
  EXPECT_EQ(rep.verdict, Verdict::kComplete);
  EXPECT_EQ(rep.latency_unknown, 1u);
  EXPECT_EQ(rep.block_latency_us.count, 0u);
  EXPECT_EQ(rep.losses.completion_not_seen, 1u);
  EXPECT_EQ(rep.losses.completion_not_seen_served, 1u);
  MatchOptions strict;
  strict.strict_completions = true;
  EXPECT_EQ(run(r, {b}, {}, strict).verdict, Verdict::kUnknown);
}

// The kernel skipped BPF programs (recursion). Skips that left a trace (a
// record flagged "completion not seen", a completion without issue, an
// attribution at issue) are explained; one more skip may be an issue and its
// completion both skipped, a request the capture never saw: a request not
// found is then "unknown", not "missing" (incomplete), and never complete.
TEST(Matcher, SkippedProgramsAreClassified) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 8, Op::kRead, 100, 200),
                                    rq(1, 900, 8, Op::kRead, 300, 400)};
  Request seen_issue = blk(100, 8, Op::kRead, 110, 0);
  seen_issue.complete_ns = kNoTime;  // issue seen, completion program skipped
  seen_issue.rec_flags = kRecCompletionNotSeen;
  Request done = blk(900, 8, Op::kRead, 310, 390);

  // One skip, explained by the flagged record: both requests covered.
  Losses one;
  losses_from_counters({{"prog_recursion_misses", 1}}, one);
  Report a = run(r, {seen_issue, done}, one);
  EXPECT_EQ(a.verdict, Verdict::kComplete) << format_text(a);
  EXPECT_EQ(a.covered, 2u);
  EXPECT_EQ(a.missing_count, 0u);
  EXPECT_EQ(a.losses.completion_not_seen, 1u);
  EXPECT_EQ(a.losses.programs_skipped, 1u);
  EXPECT_EQ(a.losses.skips_unexplained(), 0u);

  // Three skips: one explained by the record, one by an attribution at
  // issue, one unexplained; request 1 not in the capture: unknown.
  Losses three;
  losses_from_counters({{"prog_recursion_misses", 3}, {"task_from_issue", 1}}, three);
  Report b = run(r, {seen_issue}, three);
  EXPECT_EQ(b.verdict, Verdict::kUnknown) << format_text(b);
  EXPECT_EQ(b.losses.skips_unexplained(), 1u);
  EXPECT_EQ(b.covered, 1u);
  EXPECT_EQ(b.missing_count, 1u);
  EXPECT_NE(format_text(b).find("not seen (the capture lost events: maybe served)"),
            std::string::npos);
  EXPECT_NE(format_text(b).find("programs skipped by the kernel: 3 (1 left no trace"),
            std::string::npos)
      << format_text(b);
  auto j = to_json(b);
  EXPECT_EQ(j["losses"]["programs_skipped"], 3);
  EXPECT_EQ(j["losses"]["programs_skipped_unexplained"], 1);
  EXPECT_EQ(j["verdict"], "unknown");

  // Without skips, the same capture is incomplete: request 1 is missing.
  Report c = run(r, {seen_issue});
  EXPECT_EQ(c.verdict, Verdict::kIncomplete) << format_text(c);
  ASSERT_EQ(c.missing.size(), 1u);
  EXPECT_EQ(c.missing[0].id, 1u);
}

TEST(Matcher, RepeatedSectorsPairByTime) {
  std::vector<ReplayedRequest> r;
  std::vector<Request> b;
  for (uint64_t i = 0; i < 50; i++) {
    r.push_back(rq(i, 4096, 8, i % 2 ? Op::kWrite : Op::kRead, 1000 + i * 50, 1000 + i * 50 + 40));
    b.push_back(
        blk(4096, 8, i % 2 ? Op::kWrite : Op::kRead, 1000 + i * 50 + 5, 1000 + i * 50 + 35));
  }
  b.erase(b.begin() + 20);  // request 20 never reached the device
  Report rep = run(r, b);
  EXPECT_EQ(rep.covered, 49u);
  EXPECT_EQ(rep.foreign_count, 0u);
  ASSERT_EQ(rep.missing.size(), 1u);
  EXPECT_EQ(rep.missing[0].id, 20u);
}

// Two reads of one sector in flight together, issued in the other order:
// the later-submitted request B reached the device first and completed early;
// request A was issued late (e.g. held back in io_uring's worker) and
// completed long after B's window closed. The early block request belongs to
// the replayed request whose completion follows it closest (B); giving it to
// the earlier submission (A) left A's late block request with no open
// window: one request reported missing, one foreign, although both were
// served.
TEST(Matcher, ConcurrentSameSectorPairsByCompletion) {
  std::vector<ReplayedRequest> r = {rq(0, 4096, 8, Op::kRead, 1000, 10000),  // A
                                    rq(1, 4096, 8, Op::kRead, 1000, 2000)};  // B
  std::vector<Request> b = {blk(4096, 8, Op::kRead, 1100, 1900),             // B's
                            blk(4096, 8, Op::kRead, 5000, 9900)};  // A's, after B's window
  MatchOptions o;
  o.per_request = true;
  Report rep = run(r, b, {}, o);
  EXPECT_EQ(rep.verdict, Verdict::kComplete) << format_text(rep);
  EXPECT_EQ(rep.covered, 2u);
  EXPECT_EQ(rep.missing_count, 0u);
  EXPECT_EQ(rep.foreign_count, 0u);
  ASSERT_EQ(rep.per_request.size(), 2u);
  for (const auto& p : rep.per_request)
    EXPECT_EQ(p.block_ns, p.id == 0 ? 4900 * kUs : 800 * kUs) << "request " << p.id;
}

// The case seen in a fullspeed run validated offline (request #209578 of a
// 300,000-request bench run): two reads of one sector in flight together,
// times aligned by an offset that is only known within the vote's spread.
// A's block request appears to complete 6 us after the replayer saw A
// complete, so without tolerance it is not "strictly inside" A but is inside
// B; B takes it, A's window no longer accepts the other block request (it
// completed 3 ms after A), and A is reported missing although both were
// served. With the alignment's tolerance both pair right.
TEST(Matcher, ClockToleranceOfTheAlignmentPairsSameSectorRequests) {
  std::vector<ReplayedRequest> r = {rq(0, 1123888, 8, Op::kRead, 1000, 1609),   // A
                                    rq(1, 1123888, 8, Op::kRead, 1113, 4737)};  // B
  std::vector<Request> b = {blk(1123888, 8, Op::kRead, 1160, 1615),             // A's (455 us)
                            blk(1123888, 8, Op::kRead, 1242, 4673)};            // B's (3431 us)
  MatchOptions o;
  o.per_request = true;
  Report exact = run(r, b, {}, o);  // live: one clock, no tolerance
  EXPECT_EQ(exact.verdict, Verdict::kIncomplete);
  ASSERT_EQ(exact.missing.size(), 1u);
  EXPECT_EQ(exact.missing[0].id, 0u);

  o.clock_tolerance_ns = 243 * kUs;  // spread 223 us + clock error 20 us
  Report rep = run(r, b, {}, o);
  EXPECT_EQ(rep.verdict, Verdict::kComplete) << format_text(rep);
  EXPECT_EQ(rep.foreign_count, 0u);
  ASSERT_EQ(rep.per_request.size(), 2u);
  for (const auto& p : rep.per_request)
    EXPECT_EQ(p.block_ns, p.id == 0 ? 455 * kUs : 3431 * kUs) << "request " << p.id;
}

TEST(Matcher, Flushes) {
  std::vector<ReplayedRequest> r = {rq(0, 0, 0, Op::kFlush, 100, 300),
                                    rq(1, 0, 0, Op::kFlush, 110, 310),
                                    rq(2, 0, 0, Op::kFlush, 5000, 5100)};
  std::vector<Request> b = {blk(0, 0, Op::kFlush, 150, 250)};
  Report rep = run(r, b);
  EXPECT_EQ(rep.covered, 2u);  // one flush request served both concurrent flushes
  EXPECT_EQ(rep.missing_count, 1u);
  EXPECT_EQ(rep.foreign_count, 0u);
  MatchOptions o;
  o.flush_reaches_device = false;
  Report rep2 = run(r, b, {}, o);
  EXPECT_EQ(rep2.verdict, Verdict::kComplete);
  EXPECT_EQ(rep2.flushes_absorbed, 1u);
}

TEST(Matcher, ManyRandomRequestsWithSplits) {
  std::mt19937_64 rng(42);
  std::vector<ReplayedRequest> r;
  std::vector<Request> b;
  const uint64_t n = 200000;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t sector = (rng() % 1000000) * 8;
    uint32_t len = 8u << (rng() % 6);  // 4 KiB .. 128 KiB
    uint64_t t = 1000 + i * 3;         // ~300k IOPS, 30 us latency, queue ~10
    r.push_back(rq(i, sector, len, rng() % 3 ? Op::kRead : Op::kWrite, t, t + 30));
    if (i % 1000 == 7) continue;  // 200 missing
    if (len > 64) {               // split at 32 KiB
      for (uint32_t off = 0; off < len; off += 64)
        b.push_back(blk(sector + off, 64, r.back().op, t + 2, t + 25));
    } else {
      b.push_back(blk(sector, len, r.back().op, t + 2, t + 25));
    }
  }
  for (int i = 0; i < 100; i++)
    b.push_back(blk(9000000 + i * 8, 8, Op::kRead, 1000 + i * 30, 1010 + i * 30, 9, "x"));
  Report rep = run(r, b);
  EXPECT_EQ(rep.submitted, n);
  EXPECT_EQ(rep.missing_count, n / 1000);
  EXPECT_EQ(rep.covered, n - n / 1000);
  EXPECT_EQ(rep.foreign_count, 100u);
  EXPECT_EQ(rep.altered_count, 0u);
  EXPECT_GT(rep.split_requests, n / 4);
}

TEST(ReportIo, JsonAndText) {
  std::vector<ReplayedRequest> r = {rq(0, 100, 8, Op::kRead, 100, 200),
                                    rq(1, 900, 8, Op::kWrite, 100, 200)};
  std::vector<Request> b = {blk(100, 8, Op::kRead, 110, 190),
                            blk(7, 8, Op::kWrite, 120, 150, 42, "dd")};
  Report rep = run(r, b);
  auto j = to_json(rep);
  EXPECT_EQ(j["verdict"], "incomplete");
  EXPECT_EQ(j["requests"]["missing"], 1);
  EXPECT_EQ(j["missing"][0]["sector"], 900);
  EXPECT_EQ(j["foreign_by_process"][0]["comm"], "dd");
  EXPECT_DOUBLE_EQ(j["completeness_pct"].get<double>(), 50.0);
  std::string t = format_text(rep);
  EXPECT_NE(t.find("INCOMPLETE"), std::string::npos);
  EXPECT_NE(t.find("#1 write sector 900 +8"), std::string::npos);
  EXPECT_NE(t.find("dd[42]: 1 requests"), std::string::npos);
}

}  // namespace
}  // namespace blkrr::validate
