// The streaming matcher: fed as the live validator feeds it (records in
// arrival order, resolving everything older than the window as it goes), it
// reports exactly what matching the whole inputs at once reports, holds only
// the records of about one window, and resolves a request whose block-layer
// record did not come within the window as missing.
#include "validate/window_matcher.h"

#include <gtest/gtest.h>

#include "validate/matcher.h"
#include "validate/report_io.h"
#include "validate/test_streams.h"

namespace blkrr::validate {
namespace {

using testing::kStreamPid;
using testing::kStreamT0;
using testing::make_stream;
using testing::Stream;
using testing::StreamShape;

constexpr uint64_t kMs = 1'000'000;

// Feeds `s` in arrival order, resolving up to `window` before each arrival.
Report streamed(const Stream& s, uint64_t window, WindowMatcher& m, const Losses& l = {}) {
  for (const auto& a : s.arrivals) {
    if (a.at > window) m.advance(a.at - window);
    if (a.block)
      m.add_block(s.block[a.index]);
    else
      m.add_replayed(s.replayed[a.index]);
  }
  return m.finish(l);
}

std::string json_of(const Report& r) {
  return to_json(r).dump(1);
}

struct Variant {
  const char* name;
  StreamShape shape;
  MatchOptions (*options)(MatchOptions);
};

MatchOptions live_options(MatchOptions o) {
  return o;
}
MatchOptions offline_options(MatchOptions o) {  // blkrr validate: wider slack, clock tolerance
  o.pre_slack_ns = o.post_slack_ns = 5 * kMs;
  o.clock_tolerance_ns = 20'000;
  return o;
}
MatchOptions listing_options(MatchOptions o) {
  o.per_request = true;
  o.strict_completions = true;
  o.flush_reaches_device = false;
  o.max_listed = 5;
  return o;
}

// Every rule of the matcher on random streams: streamed with a window longer
// than any request and any record's delay (records without a completion
// come up to 1.5 s late), the report is the one of whole inputs, byte for
// byte, and nothing is late.
TEST(WindowMatcher, StreamedReportEqualsWholeInputs) {
  StreamShape probe;
  probe.probe = true;
  StreamShape hot;
  hot.hot_sectors = 2;
  hot.gap_ns = 5000;
  const Variant variants[] = {{"live", {}, live_options},
                              {"offline with probe", probe, offline_options},
                              {"lists and latencies", {}, listing_options},
                              {"two hot sectors, 5 us apart", hot, live_options}};
  for (const Variant& v : variants)
    for (uint64_t seed = 1; seed <= 6; seed++) {
      SCOPED_TRACE(std::string(v.name) + ", seed " + std::to_string(seed));
      Stream s = make_stream(seed, v.shape);
      MatchOptions o = v.options(s.options);
      Report whole = match_requests(s.replayed, s.block, {}, o);
      WindowMatcher m(o);
      Report rep = streamed(s, 2000 * kMs, m);
      EXPECT_EQ(rep.late_requests, 0u);
      EXPECT_EQ(rep.late_blocks, 0u);
      EXPECT_GT(whole.covered, whole.submitted * 9 / 10);
      EXPECT_GT(whole.split_requests + whole.merged_block + whole.altered_count +
                    whole.missing_count + whole.foreign_count,
                0u);
      EXPECT_EQ(json_of(rep), json_of(whole));
      EXPECT_EQ(format_text(rep, 50), format_text(whole, 50));
    }
}

// A long stream (300,000 requests at 50,000 a second, 6 s) through a 100 ms
// window: the matcher never holds more than the records of about a window
// and the longest delay of a record, a small fraction of the run.
TEST(WindowMatcher, StateStaysBoundedOnALongStream) {
  StreamShape shape;
  shape.requests = 300'000;
  shape.gap_ns = 20'000;  // 50,000 requests a second
  Stream s = make_stream(7, shape);
  WindowMatcher m(s.options);
  uint64_t most_r = 0, most_b = 0;
  for (const auto& a : s.arrivals) {
    if (a.at > 100 * kMs) m.advance(a.at - 100 * kMs);
    if (a.block)
      m.add_block(s.block[a.index]);
    else
      m.add_replayed(s.replayed[a.index]);
    most_r = std::max(most_r, m.held_requests());
    most_b = std::max(most_b, m.held_blocks());
  }
  EXPECT_EQ(m.max_held_requests(), most_r);
  EXPECT_EQ(m.max_held_blocks(), most_b);
  // 100 ms at 50,000 a second is 5,000 requests; with the records that come
  // late (no completion, up to 1.5 s: 1 % of them) and the requests waiting
  // for them to be reported in order, below 12,000 of each.
  EXPECT_LT(most_r, 12'000u);
  EXPECT_LT(most_b, 12'000u);
  EXPECT_GT(most_r, 1'000u);
  const uint64_t held_at_end = m.held_requests();
  Report rep = m.finish({});
  EXPECT_EQ(rep.replayed, s.replayed.size());
  EXPECT_EQ(rep.observed, s.block.size());
  EXPECT_LT(held_at_end, 12'000u);
  // Records without a completion come up to 1.5 s after their issue: past
  // the 100 ms window they are late, and so are the requests they served.
  EXPECT_GT(rep.late_blocks, 0u);
  EXPECT_EQ(rep.verdict, Verdict::kUnknown);
}

ReplayedRequest request(uint64_t id, uint64_t sector, uint64_t submit, uint64_t complete) {
  ReplayedRequest r;
  r.id = id;
  r.sector = sector;
  r.sectors = 8;
  r.submit_ns = submit;
  r.complete_ns = complete;
  return r;
}

// A request whose block-layer record does not come within the window is
// resolved as missing, at once and for good; the record that comes later is
// late (not foreign); a request that comes after the window passed its
// submission is missing and late too. The verdict cannot be "incomplete".
TEST(WindowMatcher, RequestNotSeenWithinTheWindowIsMissing) {
  MatchOptions o;
  o.window_ns = 100 * kMs;
  WindowMatcher m(o);
  const uint64_t t = kStreamT0;
  m.add_replayed(request(1, 800, t, t + 200'000));
  m.add_replayed(request(2, 1600, t + 1 * kMs, t + 1 * kMs + 200'000));
  m.add_block(testing::stream_block(1600, 8, Op::kRead, t + 1 * kMs + 10'000, t + 1 * kMs + 190'000,
                                    kStreamPid, "blkrr"));
  EXPECT_EQ(m.held_requests(), 2u);
  m.advance(t + 500 * kMs);  // 500 ms later: both resolved and reported
  EXPECT_EQ(m.held_requests(), 0u);
  EXPECT_EQ(m.held_blocks(), 0u);
  // Request 1's record, 600 ms late; request 3, submitted 400 ms ago.
  m.add_block(
      testing::stream_block(800, 8, Op::kRead, t + 10'000, t + 190'000, kStreamPid, "blkrr"));
  m.add_replayed(request(3, 2400, t + 100 * kMs, t + 100 * kMs + 200'000));
  Report rep = m.finish({});
  EXPECT_EQ(rep.submitted, 3u);
  EXPECT_EQ(rep.covered, 1u);
  EXPECT_EQ(rep.missing_count, 2u);
  ASSERT_EQ(rep.missing.size(), 2u);
  EXPECT_EQ(rep.missing[0].id, 1u);
  EXPECT_EQ(rep.missing[1].id, 3u);
  EXPECT_EQ(rep.late_requests, 1u);
  EXPECT_EQ(rep.late_blocks, 1u);
  EXPECT_EQ(rep.foreign_count, 0u);
  EXPECT_EQ(rep.matched_block, 1u);
  EXPECT_EQ(rep.verdict, Verdict::kUnknown);
  EXPECT_NE(rep.verdict_reason.find("--validate-window"), std::string::npos) << rep.verdict_reason;
  auto j = to_json(rep);
  EXPECT_EQ(j["requests"]["late"], 1);
  EXPECT_EQ(j["block_requests"]["late"], 1);
  EXPECT_EQ(j["settings"]["validate_window_ns"], 100 * kMs);
  EXPECT_NE(format_text(rep).find("window 100 ms: 1 requests and 1 block-layer requests came"),
            std::string::npos)
      << format_text(rep);
}

// Without records coming late, a request with no block-layer I/O stays
// "incomplete" as with whole inputs; one resolved by the window before the
// end is reported the same.
TEST(WindowMatcher, MissingWithoutLateRecordsIsIncomplete) {
  WindowMatcher m(MatchOptions{});
  const uint64_t t = kStreamT0;
  m.add_replayed(request(1, 800, t, t + 200'000));
  m.advance(t + 50 * kMs);
  EXPECT_EQ(m.held_requests(), 0u);
  Report rep = m.finish({});
  EXPECT_EQ(rep.missing_count, 1u);
  EXPECT_EQ(rep.verdict, Verdict::kIncomplete);
  EXPECT_TRUE(to_json(rep)["settings"]["validate_window_ns"].is_null());
}

// The cap on held records: a clean stream at 50,000 requests a second fed
// with a 5 s window would hold ~250,000 records per side; capped at 512,000
// bytes (8,000 records waiting) it holds at most that, the window shrinks (counted, with the
// shortest window it left) and the report says so. Without the cap the
// same stream holds far more and nothing is counted.
TEST(WindowMatcher, HeldRecordsStayUnderTheCapAtAnyRate) {
  StreamShape shape;
  shape.requests = 100'000;
  shape.gap_ns = 20'000;
  shape.clean = true;
  Stream s = make_stream(11, shape);
  MatchOptions capped = s.options;
  capped.max_held_bytes = 8'000 * WindowMatcher::kWaitingBytes;  // 8,000 records waiting
  WindowMatcher m(capped);
  uint64_t most = 0;
  for (const auto& a : s.arrivals) {
    if (a.at > 5000 * kMs) m.advance(a.at - 5000 * kMs);
    if (a.block)
      m.add_block(s.block[a.index]);
    else
      m.add_replayed(s.replayed[a.index]);
    most = std::max(most, m.held_requests() + m.held_blocks());
  }
  // At most 8,000 records (fewer when some are open, at 400 bytes).
  EXPECT_LE(most, 8'000u);
  Report rep = m.finish({});
  EXPECT_EQ(rep.replayed, s.replayed.size());
  EXPECT_EQ(rep.observed, s.block.size());
  EXPECT_GT(rep.window_shrinks, 10u);
  EXPECT_LT(rep.min_window_ns, 200 * kMs);         // 8,000 records at 100,000 a second: ~80 ms
  EXPECT_GT(rep.covered, rep.submitted * 9 / 10);  // records still mostly in time
  // Records that came for the instants the cap passed: counted late on each
  // side, their requests missing, the verdict "unknown" and why.
  EXPECT_GT(rep.late_blocks, 0u);
  EXPECT_GE(rep.missing_count, rep.late_requests);
  EXPECT_EQ(rep.matched_block + rep.foreign_count + rep.late_blocks, rep.observed);
  EXPECT_EQ(rep.verdict, Verdict::kUnknown);
  EXPECT_NE(rep.verdict_reason.find("validation window"), std::string::npos) << rep.verdict_reason;
  auto j = to_json(rep);
  EXPECT_EQ(j["held_cap"]["max_held_bytes"], 512'000);
  EXPECT_LE(m.max_held_bytes(), 512'000u);
  EXPECT_EQ(j["held_cap"]["shrinks"], rep.window_shrinks);
  EXPECT_NE(format_text(rep).find("held-record cap of 0.5 MB reached"), std::string::npos)
      << format_text(rep);

  WindowMatcher open(s.options);
  Report whole = streamed(s, 5000 * kMs, open);
  EXPECT_GT(open.max_held_requests() + open.max_held_blocks(), 50'000u);
  EXPECT_EQ(whole.window_shrinks, 0u);
  EXPECT_FALSE(to_json(whole).contains("held_cap"));
}

}  // namespace
}  // namespace blkrr::validate
