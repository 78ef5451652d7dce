// The adaptive disk I/O time algorithm (core/disktime.h) on the scenarios of
// Brendan Gregg's description (simple, concurrent, sparse, mixed) and on
// random interleavings, checked against the union of in-flight intervals.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "core/disktime.h"

namespace blkrr {
namespace {

struct Io {
  uint64_t issue, complete;
};

// Feeds the requests of one device in time order (completions first at equal
// times) and returns the disk time charged to each.
std::vector<uint64_t> charge(const std::vector<Io>& ios) {
  struct Ev {
    uint64_t t;
    bool done;
    size_t i;
  };
  std::vector<Ev> evs;
  for (size_t i = 0; i < ios.size(); ++i) {
    evs.push_back({ios[i].issue, false, i});
    evs.push_back({ios[i].complete, true, i});
  }
  std::sort(evs.begin(), evs.end(),
            [](const Ev& a, const Ev& b) { return a.t != b.t ? a.t < b.t : (a.done && !b.done); });
  DiskTimeTracker tr;
  std::vector<uint64_t> out(ios.size());
  for (const auto& e : evs) {
    if (e.done)
      out[e.i] = tr.complete(e.t);
    else
      tr.issue(e.t);
  }
  EXPECT_EQ(tr.pending(), 0u);
  return out;
}

uint64_t sum(const std::vector<uint64_t>& v) {
  uint64_t s = 0;
  for (auto x : v) s += x;
  return s;
}

uint64_t busy(const std::vector<Io>& ios) {
  std::vector<Interval> iv;
  iv.reserve(ios.size());
  for (const auto& io : ios) iv.push_back({io.issue, io.complete});
  return union_length(iv);
}

// One request at a time: each is charged its own issue-to-completion time.
TEST(AdaptiveDiskTime, SimpleEvents) {
  std::vector<Io> ios = {{100, 130}, {130, 150}, {150, 200}};
  EXPECT_EQ(charge(ios), (std::vector<uint64_t>{30, 20, 50}));
  EXPECT_EQ(sum(charge(ios)), busy(ios));
}

// Requests issued together: each completion is charged the time since the
// previous completion, so the device's busy time is split, not multiplied.
TEST(AdaptiveDiskTime, ConcurrentEvents) {
  std::vector<Io> ios = {{0, 10}, {0, 20}, {0, 30}, {0, 40}};
  EXPECT_EQ(charge(ios), (std::vector<uint64_t>{10, 10, 10, 10}));
  EXPECT_EQ(sum(charge(ios)), 40u);  // latencies would sum to 100
}

// Requests separated by idle time: the idle time is charged to nobody.
TEST(AdaptiveDiskTime, SparseEvents) {
  std::vector<Io> ios = {{0, 10}, {25, 30}, {100, 160}};
  EXPECT_EQ(charge(ios), (std::vector<uint64_t>{10, 5, 60}));
  EXPECT_EQ(sum(charge(ios)), busy(ios));
}

// Overlaps with different start times, then idle, then more.
TEST(AdaptiveDiskTime, MixedEvents) {
  //  A: 0..10   B: 5..15   C: 12..30   (idle 30..40)   D: 40..45   E: 42..44
  std::vector<Io> ios = {{0, 10}, {5, 15}, {12, 30}, {40, 45}, {42, 44}};
  EXPECT_EQ(charge(ios), (std::vector<uint64_t>{10, 5, 15, 1, 4}));
  EXPECT_EQ(sum(charge(ios)), 35u);
  EXPECT_EQ(busy(ios), 35u);
}

// A request shorter than one that was already in flight is charged from the
// start of the busy period (not its own issue): the time is the device's.
TEST(AdaptiveDiskTime, ShortRequestInsideLongOne) {
  std::vector<Io> ios = {{0, 100}, {50, 60}};
  EXPECT_EQ(charge(ios), (std::vector<uint64_t>{40, 60}));
}

// Back-to-back: a completion and the next issue at the same instant.
TEST(AdaptiveDiskTime, BackToBack) {
  std::vector<Io> ios = {{0, 10}, {10, 20}, {20, 30}};
  EXPECT_EQ(charge(ios), (std::vector<uint64_t>{10, 10, 10}));
}

// A completion the program never saw: dropping the stale entry lets the
// device go idle, so the idle gap is not charged to the next request.
TEST(AdaptiveDiskTime, StaleEntryDropped) {
  DiskTimeTracker tr;
  tr.issue(0);  // completion lost
  tr.issue(5);
  EXPECT_EQ(tr.complete(10), 10u);
  EXPECT_EQ(tr.pending(), 1u);  // the lost one still looks in flight
  tr.drop_stale();
  EXPECT_EQ(tr.pending(), 0u);
  tr.issue(1000);
  EXPECT_EQ(tr.complete(1004), 4u);
}

// Requests in flight before tracking began complete without an issue: the
// pending count stays at zero, never wraps.
TEST(AdaptiveDiskTime, CompletionWithoutIssueClampsPending) {
  DiskTimeTracker tr;
  tr.complete(50);
  EXPECT_EQ(tr.pending(), 0u);
  tr.issue(60);
  EXPECT_EQ(tr.complete(70), 10u);
}

// Random loads on several devices: per device, the disk time summed over its
// requests equals the union of its requests' in-flight intervals.
TEST(AdaptiveDiskTime, RandomInterleavingsEqualUnion) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 300; ++round) {
    size_t n = 1 + rng() % 200;
    int devices = 1 + static_cast<int>(rng() % 3);
    uint64_t horizon = 1 + rng() % 100000;
    uint64_t max_len = 1 + rng() % 5000;
    std::vector<Request> reqs(n);
    std::map<DevT, std::vector<Interval>> per_dev;
    for (auto& r : reqs) {
      r.dev = make_dev(7, static_cast<uint32_t>(rng() % devices));
      r.issue_ns = rng() % horizon;
      r.complete_ns = r.issue_ns + 1 + rng() % max_len;
      per_dev[r.dev].push_back({r.issue_ns, r.complete_ns});
    }
    compute_disk_times(reqs);
    std::map<DevT, uint64_t> charged;
    for (const auto& r : reqs) charged[r.dev] += r.disk_time_ns;
    for (const auto& [dev, iv] : per_dev)
      ASSERT_EQ(charged[dev], union_length(iv)) << "round " << round << " dev " << dev;
  }
}

// The streaming tracker and the offline computation agree request by request.
TEST(AdaptiveDiskTime, TrackerMatchesOffline) {
  std::mt19937_64 rng(777);
  std::vector<Io> ios(500);
  std::vector<Request> reqs(ios.size());
  for (size_t i = 0; i < ios.size(); ++i) {
    ios[i].issue = rng() % 1000000;
    ios[i].complete = ios[i].issue + 1 + rng() % 20000;
    reqs[i].issue_ns = ios[i].issue;
    reqs[i].complete_ns = ios[i].complete;
  }
  auto online = charge(ios);
  compute_disk_times(reqs);
  for (size_t i = 0; i < ios.size(); ++i) ASSERT_EQ(online[i], reqs[i].disk_time_ns) << i;
  EXPECT_EQ(sum(online), busy(ios));
}

}  // namespace
}  // namespace blkrr
