// What the streaming matcher holds: a run of equal records is held once with
// a count and reported exactly as the records one by one; the cap on held
// records shrinks the window only when it is reached and loses nothing while
// records come in time (what it loses when they do not is counted:
// WindowMatcher.HeldRecordsStayUnderTheCapAtAnyRate); what one held record
// takes.
#include <gtest/gtest.h>
#include <malloc.h>

#include "validate/report_io.h"
#include "validate/test_streams.h"
#include "validate/window_matcher.h"

namespace blkrr::validate {
namespace {

using testing::kStreamPid;
using testing::kStreamT0;
using testing::stream_block;

constexpr uint64_t kUs = 1'000, kMs = 1'000'000;

// A load that rewrites one block: batches of 32 writes of sector 800,
// submitted together and reaped together (one submission and one completion
// time per batch, as io_uring's batches stamp them), ids in a row; each
// write reaches the block layer as its own request. Batch `short_batch`
// loses its last two block-layer requests.
struct Rewrites {
  static constexpr uint64_t kBatches = 50, kPer = 32, kShortBatch = 7;
  std::vector<ReplayedRequest> replayed;
  std::vector<Request> block;
  Rewrites() {
    for (uint64_t b = 0; b < kBatches; b++) {
      const uint64_t t = kStreamT0 + b * kMs;
      for (uint64_t i = 0; i < kPer; i++) {
        ReplayedRequest r;
        r.id = b * kPer + i;
        r.sector = 800;
        r.sectors = 8;
        r.op = Op::kWrite;
        r.submit_ns = t;
        r.complete_ns = t + 100 * kUs;
        replayed.push_back(r);
        if (b == kShortBatch && i >= kPer - 2) continue;
        block.push_back(stream_block(800, 8, Op::kWrite, t + 1 * kUs + i * 10,
                                     t + 50 * kUs + i * 10, kStreamPid, "blkrr"));
      }
    }
  }
};

MatchOptions listing() {
  MatchOptions o;
  o.per_request = true;  // every request's id and latencies in the report
  o.max_listed = 100'000;
  o.window_ns = 1000 * kMs;
  return o;
}

// Feeds each batch's requests with their arrival indexes (in a row, or in
// reverse order within the batch), then its block-layer records, resolving
// up to kLag batches (ms) back: a window of 20 batches.
constexpr uint64_t kLag = 20;
Report feed(const Rewrites& w, WindowMatcher& m, bool reversed, uint64_t* held_in_window) {
  size_t next_block = 0;
  for (uint64_t b = 0; b < Rewrites::kBatches; b++) {
    for (uint64_t k = 0; k < Rewrites::kPer; k++) {
      const uint64_t i = b * Rewrites::kPer + (reversed ? Rewrites::kPer - 1 - k : k);
      m.add_replayed(w.replayed[i], i);
    }
    if (b + 1 == kLag) *held_in_window = m.held_requests();  // 20 batches, none resolved
    for (; next_block < w.block.size() && w.block[next_block].issue_ns < kStreamT0 + (b + 1) * kMs;
         next_block++)
      m.add_block(w.block[next_block], next_block);
    if (b >= kLag) m.advance(kStreamT0 + (b - kLag) * kMs);
  }
  return m.finish({});
}

// The run of 32 equal requests is held as one record; the report is byte
// for byte the one of the same requests held one by one (their indexes out
// of order, so that no two are in a row): every covered request with its
// own id and latencies, the two that lost their block-layer requests the
// last two of their batch.
TEST(WindowMatcherHeld, EqualRequestsInARowAreHeldOnceAndReportedExactly) {
  Rewrites w;
  WindowMatcher merged(listing());
  uint64_t merged_window = 0, apart_window = 0;
  Report rep = feed(w, merged, false, &merged_window);
  WindowMatcher apart(listing());
  Report ref = feed(w, apart, true, &apart_window);

  EXPECT_EQ(merged_window, kLag);
  EXPECT_EQ(apart_window, kLag * Rewrites::kPer);
  EXPECT_EQ(merged.identical_requests(), Rewrites::kBatches * (Rewrites::kPer - 1));
  EXPECT_EQ(apart.identical_requests(), 0u);
  EXPECT_EQ(merged.identical_blocks(), 0u);  // each block-layer request has its own times
  // Later, also the requests of the batches whose windows are open (held one
  // by one while they are matched).
  EXPECT_LE(merged.max_held_requests(), 4 * Rewrites::kPer);
  EXPECT_GE(apart.max_held_requests(), kLag * Rewrites::kPer);

  EXPECT_EQ(to_json(rep).dump(1), to_json(ref).dump(1));
  EXPECT_EQ(rep.submitted, Rewrites::kBatches * Rewrites::kPer);
  EXPECT_EQ(rep.covered, Rewrites::kBatches * Rewrites::kPer - 2);
  ASSERT_EQ(rep.missing.size(), 2u);
  EXPECT_EQ(rep.missing[0].id, Rewrites::kShortBatch * Rewrites::kPer + 30);
  EXPECT_EQ(rep.missing[1].id, Rewrites::kShortBatch * Rewrites::kPer + 31);
  ASSERT_EQ(rep.per_request.size(), rep.covered);
  // Request i of a batch is paired with the batch's i-th block request:
  // block latency 49 us, replay latency 100 us.
  EXPECT_EQ(rep.per_request[5].id, 5u);
  EXPECT_EQ(rep.per_request[5].block_ns, 49 * kUs);
  EXPECT_EQ(rep.per_request[5].replay_ns, 100 * kUs);
  EXPECT_EQ(rep.verdict, Verdict::kIncomplete);
}

// Only records equal in everything the matcher uses are held together:
// another submission time or an id out of the row starts a new record.
TEST(WindowMatcherHeld, RequestsThatDifferAreHeldApart) {
  WindowMatcher m(MatchOptions{});
  Rewrites w;
  ReplayedRequest r = w.replayed[0];
  m.add_replayed(r);
  r.id = 1;
  m.add_replayed(r);  // equal, next id: held with the first
  EXPECT_EQ(m.held_requests(), 1u);
  r.id = 5;
  m.add_replayed(r);  // an id out of the row
  EXPECT_EQ(m.held_requests(), 2u);
  r.id = 6;
  r.submit_ns += 1;
  m.add_replayed(r);  // another submission time
  EXPECT_EQ(m.held_requests(), 3u);
  r.id = 7;
  r.sector += 8;
  r.submit_ns -= 1;
  m.add_replayed(r);  // other sectors
  EXPECT_EQ(m.held_requests(), 4u);
  EXPECT_EQ(m.identical_requests(), 1u);
  Report rep = m.finish({});
  EXPECT_EQ(rep.submitted, 5u);
  EXPECT_EQ(rep.missing_count, 5u);
}

// A block-layer record repeated 1,000 times in a row (the same times,
// sectors, process) is held once; the first serves the request, the 999
// others are foreign, as when held one by one.
TEST(WindowMatcherHeld, ARepeatedBlockRecordIsHeldOnce) {
  Rewrites w;
  auto run = [&](bool reversed, WindowMatcher& m) {
    m.add_replayed(w.replayed[0]);
    for (uint64_t k = 0; k < 1000; k++) m.add_block(w.block[0], reversed ? 999 - k : k);
    return m.finish({});
  };
  WindowMatcher merged(MatchOptions{});
  Report rep = run(false, merged);
  WindowMatcher apart(MatchOptions{});
  Report ref = run(true, apart);
  EXPECT_EQ(merged.max_held_blocks(), 1u);
  EXPECT_EQ(apart.max_held_blocks(), 1000u);
  EXPECT_EQ(merged.identical_blocks(), 999u);
  EXPECT_EQ(rep.covered, 1u);
  EXPECT_EQ(rep.matched_block, 1u);
  EXPECT_EQ(rep.foreign_count, 999u);
  EXPECT_EQ(to_json(rep).dump(1), to_json(ref).dump(1));
}

// Requests one after another (queue depth 1, 100,000 a second), each
// record arriving after every record of an earlier time: a stream nothing
// can come late in.
struct InTime {
  std::vector<ReplayedRequest> replayed;
  std::vector<Request> block;
  explicit InTime(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
      const uint64_t t = kStreamT0 + i * 10 * kUs;
      ReplayedRequest r;
      r.id = i;
      r.sector = 8 * (i % 5000);
      r.sectors = 8;
      r.submit_ns = t;
      r.complete_ns = t + 9 * kUs;
      replayed.push_back(r);
      block.push_back(
          stream_block(r.sector, 8, Op::kRead, t + 1 * kUs, t + 8 * kUs, kStreamPid, "blkrr"));
    }
  }
  Report feed(WindowMatcher& m, uint64_t* most) const {
    for (size_t i = 0; i < replayed.size(); i++) {
      m.advance(replayed[i].submit_ns > 5000 * kMs ? replayed[i].submit_ns - 5000 * kMs : 0);
      m.add_block(block[i]);
      m.add_replayed(replayed[i]);
      *most = std::max(*most, m.held_bytes());
    }
    return m.finish({});
  }
};

std::string without_cap(const Report& r) {
  auto j = to_json(r);
  j.erase("held_cap");
  return j.dump(1);
}

// The cap reached: the window shrinks (counted), but records that come in
// time are matched as without the cap, byte for byte; below the cap nothing
// is counted.
TEST(WindowMatcherHeld, CapReachedLosesNothingWhileRecordsComeInTime) {
  InTime s(20'000);
  MatchOptions capped;
  capped.window_ns = 5000 * kMs;
  // 4,000 records waiting; the requests whose windows are open (2 ms of
  // them: 200 at 400 bytes) are far fewer.
  capped.max_held_bytes = 4'000 * WindowMatcher::kWaitingBytes;
  WindowMatcher m(capped);
  uint64_t most = 0;
  Report rep = s.feed(m, &most);
  MatchOptions open = capped;
  open.max_held_bytes = 0;
  WindowMatcher whole(open);
  uint64_t most_whole = 0;
  Report ref = s.feed(whole, &most_whole);

  EXPECT_LE(most, capped.max_held_bytes);
  EXPECT_EQ(most_whole, 40'000u * WindowMatcher::kWaitingBytes);  // the whole run: 5 s is longer
  EXPECT_GT(rep.window_shrinks, 10u);
  EXPECT_GT(rep.min_window_ns, 0u);
  EXPECT_LT(rep.min_window_ns, 30 * kMs);  // 4,000 records at 200,000 a second: ~20 ms
  EXPECT_EQ(rep.late_requests + rep.late_blocks, 0u);
  EXPECT_EQ(rep.covered, 20'000u);
  EXPECT_EQ(rep.verdict, Verdict::kComplete);
  EXPECT_EQ(without_cap(rep), without_cap(ref));
  EXPECT_EQ(to_json(rep)["held_cap"]["shrinks"], rep.window_shrinks);

  MatchOptions roomy = capped;
  roomy.max_held_bytes = 50'000 * WindowMatcher::kWaitingBytes;
  WindowMatcher below(roomy);
  uint64_t most_below = 0;
  Report under = s.feed(below, &most_below);
  EXPECT_EQ(under.window_shrinks, 0u);
  EXPECT_EQ(under.min_window_ns, 0u);
  EXPECT_EQ(without_cap(under), without_cap(ref));
}

// Bytes of the heap in use (small chunks and mmapped ones).
size_t heap_in_use() {
  const auto m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// What one held record takes, in each place it can be held, against the
// bytes WindowMatcher::held_bytes() counts for it: waiting for the window
// (the usual case), resolved and waiting for an earlier one to be reported,
// and with its window open (at most the requests in flight and of the last
// slack, but measured with 100,000 of them).
TEST(WindowMatcherHeld, BytesPerHeldRecord) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator does not report through mallinfo2";
#endif
  const uint64_t n = 100'000;
  const InTime s(n);
  auto per_record = [](size_t before, const WindowMatcher& m) {
    return static_cast<double>(heap_in_use() - before) /
           static_cast<double>(m.held_requests() + m.held_blocks());
  };
  {
    const size_t before = heap_in_use();
    WindowMatcher m(MatchOptions{});
    for (size_t i = 0; i < n; i++) {
      m.add_block(s.block[i]);
      m.add_replayed(s.replayed[i]);
    }
    EXPECT_EQ(m.held_requests() + m.held_blocks(), 2 * n);
    EXPECT_LE(per_record(before, m), WindowMatcher::kWaitingBytes);
    EXPECT_EQ(m.held_bytes(), 2 * n * WindowMatcher::kWaitingBytes);
  }
  {
    const size_t before = heap_in_use();
    WindowMatcher m(MatchOptions{});
    ReplayedRequest slow = s.replayed[0];  // open for 100 s: everything after it waits
    slow.sector = 1u << 30;
    slow.complete_ns = slow.submit_ns + 100'000 * kMs;
    m.add_replayed(slow);
    for (size_t i = 1; i < n; i++) {
      m.add_block(s.block[i]);
      m.add_replayed(s.replayed[i]);
    }
    m.advance(s.replayed[n - 1].submit_ns);
    EXPECT_EQ(m.held_requests(), n);
    EXPECT_LE(per_record(before, m), WindowMatcher::kResolvedBytes);
  }
  {
    const size_t before = heap_in_use();
    WindowMatcher m(MatchOptions{});
    for (size_t i = 0; i < n; i++) {
      ReplayedRequest r = s.replayed[i];
      r.submit_ns = kStreamT0 + i;
      r.complete_ns = kStreamT0 + 100'000 * kMs;
      m.add_replayed(r);
    }
    m.advance(kStreamT0 + n + 2 * kMs);  // every window open
    EXPECT_EQ(m.held_requests(), n);
    EXPECT_LE(per_record(before, m), WindowMatcher::kOpenBytes);
    EXPECT_EQ(m.held_bytes(), n * WindowMatcher::kOpenBytes);
  }
}

}  // namespace
}  // namespace blkrr::validate
