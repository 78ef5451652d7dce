// Dependency inference on constructed traces: exact parents, kinds and think
// times.
#include "core/dependency.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <vector>

namespace blkrr {
namespace {

constexpr uint64_t kUs = 1000;

Request req(uint32_t tid, uint64_t issue_us, uint64_t complete_us, uint64_t sector,
            uint32_t sectors = 8) {
  Request r;
  r.pid = tid;
  r.tgid = tid;
  r.issue_ns = issue_us * kUs;
  r.complete_ns = complete_us == ~0ull ? kNoTime : complete_us * kUs;
  r.sector = sector;
  r.bytes = sectors * 512;
  return r;
}

std::vector<Dependency> infer(const std::vector<Request>& rs, DependencyOptions o = {}) {
  DependencyInferrer inf(o);
  std::vector<Dependency> out;
  for (size_t i = 0; i < rs.size(); ++i) out.push_back(inf.add(rs[i], i));
  return out;
}

std::vector<uint64_t> parents(const Dependency& d) {
  return {d.parents.begin(), d.parents.begin() + d.nparents};
}

TEST(Dependency, SynchronousChainOfOneThread) {
  // Each read is issued 50 µs after the previous one completed.
  auto d = infer(
      {req(7, 0, 100, 0), req(7, 150, 250, 800), req(7, 300, 420, 40), req(7, 470, 500, 9000)});
  EXPECT_TRUE(d[0].independent());
  EXPECT_EQ(d[0].kind, DepKind::kIndependent);
  for (size_t i = 1; i < d.size(); ++i) {
    EXPECT_EQ(d[i].kind, DepKind::kThread) << i;
    EXPECT_EQ(parents(d[i]), std::vector<uint64_t>{i - 1}) << i;
    EXPECT_EQ(d[i].think_ns, 50 * kUs) << i;
    EXPECT_EQ(d[i].depth, i) << i;
  }
}

TEST(Dependency, ArrivalsFarApartAreIndependent) {
  DependencyOptions o;
  o.thread_window_ns = 1000 * kUs;
  // 5 ms apart, 100 µs latency: the previous completion is 4.9 ms old.
  auto d = infer({req(1, 0, 100, 0), req(1, 5000, 5100, 8), req(1, 10000, 10100, 16)}, o);
  for (const auto& x : d) {
    EXPECT_TRUE(x.independent());
    EXPECT_EQ(x.think_ns, 0u);
  }
  // ... but with a 10 ms window they are a chain with 4.9 ms think time.
  o.thread_window_ns = 10000 * kUs;
  d = infer({req(1, 0, 100, 0), req(1, 5000, 5100, 8), req(1, 10000, 10100, 16)}, o);
  EXPECT_EQ(parents(d[2]), std::vector<uint64_t>{1});
  EXPECT_EQ(d[2].think_ns, 4900 * kUs);
}

TEST(Dependency, FanInFromOtherThreads) {
  // Threads 1-3 each complete one request; thread 4 starts 10 µs after the last.
  auto d =
      infer({req(1, 0, 100, 0), req(2, 1, 110, 100), req(3, 2, 120, 200), req(4, 130, 200, 300)});
  EXPECT_EQ(d[3].kind, DepKind::kCross);
  EXPECT_EQ(parents(d[3]), (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(d[3].think_ns, 10 * kUs);
}

TEST(Dependency, FanInIsCappedNewestFirst) {
  DependencyOptions o;
  o.max_fanin = 2;
  DependencyInferrer inf(o);
  inf.add(req(1, 0, 100, 0), 0);
  inf.add(req(2, 1, 110, 100), 1);
  inf.add(req(3, 2, 120, 200), 2);
  const Dependency d = inf.add(req(4, 125, 200, 300), 3);
  EXPECT_EQ(parents(d), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(d.think_ns, 5 * kUs);
  EXPECT_EQ(inf.counters().fanin_capped, 1u);
}

TEST(Dependency, CompletionsOutsideTheCrossWindowAreNotParents) {
  DependencyOptions o;
  o.cross_window_ns = 100 * kUs;
  // Thread 1 completed 150 µs before thread 2's issue.
  auto d = infer({req(1, 0, 100, 0), req(2, 250, 300, 8)}, o);
  EXPECT_TRUE(d[1].independent());
}

TEST(Dependency, TransitiveEdgesAreDropped) {
  // A (thread 1) releases B (thread 2); C (thread 3) follows both completions:
  // waiting for B implies A.
  DependencyInferrer inf;
  inf.add(req(1, 0, 100, 0), 0);
  const Dependency b = inf.add(req(2, 110, 150, 8), 1);
  EXPECT_EQ(parents(b), std::vector<uint64_t>{0});
  const Dependency c = inf.add(req(3, 160, 200, 16), 2);
  EXPECT_EQ(parents(c), std::vector<uint64_t>{1});
  EXPECT_EQ(c.think_ns, 10 * kUs);
  EXPECT_EQ(inf.counters().transitive_dropped, 1u);
}

TEST(Dependency, MixedThreadsFollowTheirOwnCompletions) {
  // Two synchronous threads interleaved: each request depends on its own
  // thread's previous one even though the other thread completed later.
  auto d = infer({req(1, 0, 100, 0), req(2, 10, 105, 1000), req(1, 120, 200, 8),
                  req(2, 125, 220, 1008), req(1, 230, 300, 16)});
  EXPECT_TRUE(d[0].independent());
  EXPECT_EQ(parents(d[1]), std::vector<uint64_t>{});  // 0 had not completed at 10 µs
  EXPECT_EQ(parents(d[2]), std::vector<uint64_t>{0});
  EXPECT_EQ(d[2].think_ns, 20 * kUs);
  EXPECT_EQ(parents(d[3]), std::vector<uint64_t>{1});
  EXPECT_EQ(d[3].think_ns, 20 * kUs);
  EXPECT_EQ(parents(d[4]), std::vector<uint64_t>{2});
  EXPECT_EQ(d[4].kind, DepKind::kThread);
}

TEST(Dependency, ClockSkewBetweenIssueAndCompletion) {
  // The completion is stamped 3 µs after the next issue (another CPU's clock).
  std::vector<Request> rs = {req(1, 0, 103, 0), req(1, 100, 200, 8)};
  // Without a skew the first request was still in flight: two at once, an
  // async thread (a slot of two); by completions, no parent at all.
  auto d = infer(rs);
  EXPECT_EQ(d[1].kind, DepKind::kSlot);
  EXPECT_EQ(d[1].slots, 2u);
  DependencyOptions by_completion;
  by_completion.async = DependencyOptions::Async::kCompletion;
  d = infer(rs, by_completion);
  EXPECT_TRUE(d[1].independent());
  DependencyOptions o;
  o.skew_ns = 5 * kUs;
  DependencyInferrer inf(o);
  inf.add(rs[0], 0);
  const Dependency x = inf.add(rs[1], 1);
  EXPECT_EQ(parents(x), std::vector<uint64_t>{0});
  EXPECT_EQ(x.think_ns, 0u);
  EXPECT_EQ(inf.counters().skewed, 1u);
}

TEST(Dependency, SplitCallGivesSiblingsWithOneParent) {
  // A completes; one call then issues B and C (contiguous, 2 µs apart); B
  // completes before C is issued on this fast device, yet C is B's sibling.
  auto d = infer({req(1, 0, 100, 0), req(1, 150, 151, 800, 8), req(1, 152, 300, 808, 8),
                  req(1, 350, 400, 5000)});
  EXPECT_EQ(parents(d[1]), std::vector<uint64_t>{0});
  EXPECT_EQ(d[1].kind, DepKind::kThread);
  // B completed at 151 < 152: a chain, not siblings, by the rule (B was done).
  EXPECT_EQ(parents(d[2]), std::vector<uint64_t>{1});
  auto e = infer({req(1, 0, 100, 0), req(1, 150, 290, 800, 8), req(1, 152, 300, 808, 8),
                  req(1, 350, 400, 5000)});
  EXPECT_EQ(e[2].kind, DepKind::kSibling);
  EXPECT_EQ(parents(e[2]), std::vector<uint64_t>{0});
  EXPECT_EQ(e[2].think_ns, 52 * kUs);
  EXPECT_EQ(e[2].depth, 1u);  // a sibling, not a link of the chain
  EXPECT_EQ(e[3].depth, 2u);
  // The next call waits for the later of the two siblings' completions.
  EXPECT_EQ(parents(e[3]), std::vector<uint64_t>{2});
  EXPECT_EQ(e[3].think_ns, 50 * kUs);
}

TEST(Dependency, AsyncThreadIsReleasedByTheCompletionNotItsPreviousRequest) {
  // Queue depth 4 in one thread: four requests at start, then each new one
  // follows a completion by 2 µs. By completions (not slots):
  DependencyOptions o;
  o.async = DependencyOptions::Async::kCompletion;
  auto d =
      infer({req(1, 0, 100, 0), req(1, 1, 110, 1000), req(1, 2, 120, 2000), req(1, 3, 130, 3000),
             req(1, 102, 200, 4000), req(1, 112, 210, 5000), req(1, 122, 220, 6000)},
            o);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(d[i].independent()) << i;
  EXPECT_EQ(parents(d[4]), std::vector<uint64_t>{0});
  EXPECT_EQ(parents(d[5]), std::vector<uint64_t>{1});
  EXPECT_EQ(parents(d[6]), std::vector<uint64_t>{2});
  for (int i = 4; i < 7; ++i) EXPECT_EQ(d[i].think_ns, 2 * kUs) << i;
}

TEST(Dependency, RequestsWithoutCompletionAreNeverParents) {
  DependencyInferrer inf;
  inf.add(req(1, 0, ~0ull, 0), 0);
  const Dependency d = inf.add(req(1, 200, 300, 8), 1);
  EXPECT_TRUE(d.independent());
  EXPECT_EQ(inf.counters().no_completion, 1u);
}

TEST(Dependency, IssueTimesGoingBackAreTakenAtThePreviousOne) {
  // (Two in flight at 150 µs: by completions, as slots would not name a parent.)
  DependencyOptions o;
  o.async = DependencyOptions::Async::kCompletion;
  auto d = infer({req(1, 0, 100, 0), req(1, 150, 200, 8), req(1, 140, 260, 5000)}, o);
  // Taken at 150 µs: request 0 (completed at 100) is its thread parent.
  EXPECT_EQ(parents(d[2]), std::vector<uint64_t>{0});
  EXPECT_EQ(d[2].think_ns, 50 * kUs);
}

TEST(Dependency, MemoryStaysBoundedOnLongTraces) {
  DependencyInferrer inf;
  // 200k requests of 64 threads, 10 µs apart, 300 µs latency: only the
  // completions of the last windows are kept.
  for (uint64_t i = 0; i < 200'000; ++i)
    inf.add(req(static_cast<uint32_t>(i % 64), i * 10, i * 10 + 300, i * 8), i);
  EXPECT_LE(inf.tracked(), 140u);
  EXPECT_EQ(inf.counters().requests, 200'000u);
  EXPECT_EQ(inf.counters().forgotten, 0u);

  DependencyOptions o;
  o.max_tracked = 8;
  DependencyInferrer small(o);
  for (uint64_t i = 0; i < 100; ++i) small.add(req(1, i, i + 1000, i * 8), i);
  EXPECT_EQ(small.tracked(), 8u);
  EXPECT_EQ(small.counters().forgotten, 92u);
}

TEST(Dependency, CountersAddUp) {
  DependencyInferrer inf;
  std::vector<Request> rs = {req(1, 0, 100, 0), req(2, 105, 200, 80), req(1, 150, 290, 8),
                             req(1, 152, 300, 16)};
  for (size_t i = 0; i < rs.size(); ++i) inf.add(rs[i], i);
  const auto& c = inf.counters();
  EXPECT_EQ(c.requests, 4u);
  EXPECT_EQ(c.independent, 1u);
  EXPECT_EQ(c.cross, 1u);
  EXPECT_EQ(c.thread, 1u);
  EXPECT_EQ(c.sibling, 1u);
}

// A synchronous thread that works 30 µs between requests, but whose wake-up
// after a completion took up to 900 µs more on the recording host: its
// think time is its work, the rest is counted as cut.
std::vector<Request> noisy_chain(uint32_t tid, uint64_t start_us, int n, uint64_t sector) {
  std::vector<Request> rs;
  uint64_t t = start_us;
  for (int i = 0; i < n; ++i) {
    rs.push_back(req(tid, t, t + 100, sector + static_cast<uint64_t>(i) * 64));
    const uint64_t noise = i % 4 == 0 ? 0 : 100 + static_cast<uint64_t>(i * 37 % 800);
    t += 100 + 30 + noise;
  }
  return rs;
}

TEST(Dependency, NoisyGapsOfAChainGiveTheThreadsWork) {
  const auto rs = noisy_chain(1, 0, 60, 0);
  auto d = infer(rs);
  uint64_t cut = 0;
  for (size_t i = 1; i < d.size(); ++i) {
    EXPECT_EQ(d[i].kind, DepKind::kThread) << i;
    EXPECT_EQ(parents(d[i]), std::vector<uint64_t>{i - 1}) << i;
    EXPECT_EQ(d[i].think_ns, 30 * kUs) << i;
    cut += rs[i].issue_ns - rs[i - 1].complete_ns - 30 * kUs;
  }
  DependencyInferrer inf;
  for (size_t i = 0; i < rs.size(); ++i) inf.add(rs[i], i);
  EXPECT_EQ(inf.counters().think_cut_ns, cut);
  EXPECT_GT(cut, 0u);
  // --dep-think recorded keeps the whole gap.
  DependencyOptions o;
  o.think = DependencyOptions::Think::kRecorded;
  d = infer(rs, o);
  for (size_t i = 1; i < d.size(); ++i)
    EXPECT_EQ(d[i].think_ns, rs[i].issue_ns - rs[i - 1].complete_ns) << i;
  // A higher quantile keeps more of the gaps: the median is above the work.
  o.think = DependencyOptions::Think::kWork;
  o.think_quantile = 50;
  d = infer(rs, o);
  EXPECT_GT(d.back().think_ns, 30 * kUs);
}

// A chain whose gaps are a timer sleep of 200 us that overshoots by 0-49 us:
// its low quantile is most of its median, so it is tight and cut at its
// median, the sleep's typical length, not at its shortest sleeps. Tightness
// is judged from the 64th gap on, every 16 gaps.
TEST(Dependency, TightGapsOfAChainAreCutAtTheirMedian) {
  std::vector<Request> rs;
  std::vector<uint64_t> gaps;
  uint64_t t = 0;
  for (int i = 0; i < 80; ++i) {
    rs.push_back(req(1, t, t + 100, static_cast<uint64_t>(i) * 64));
    gaps.push_back(200 + static_cast<uint64_t>(i * 37 % 50));
    t += 100 + gaps.back();
  }
  DependencyInferrer inf;
  std::vector<Dependency> d;
  for (size_t i = 0; i < rs.size(); ++i) d.push_back(inf.add(rs[i], i));
  uint64_t tight = 0;
  for (size_t i = 1; i < d.size(); ++i) {
    const uint64_t gap = gaps[i - 1] * kUs;
    ASSERT_EQ(d[i].kind, DepKind::kThread) << i;
    // The window of gaps the rule saw: this one and up to 31 before it.
    const size_t first = i > kThinkSamples ? i - kThinkSamples + 1 : 1;
    std::vector<uint64_t> w(gaps.begin() + static_cast<ptrdiff_t>(first - 1),
                            gaps.begin() + static_cast<ptrdiff_t>(i));
    std::sort(w.begin(), w.end());
    const uint64_t low = w[(w.size() - 1) * 10 / 100] * kUs;
    const uint64_t median = w[(w.size() - 1) / 2] * kUs;
    if (i >= kTightMin) {
      EXPECT_EQ(d[i].think_ns, std::min(gap, median)) << i;
      ++tight;
    } else {
      EXPECT_EQ(d[i].think_ns, std::min(gap, low)) << i;
    }
  }
  EXPECT_EQ(inf.counters().think_tight, tight);
  EXPECT_EQ(tight, 16u);
  // With the rule off every request is cut at the low quantile.
  DependencyOptions o;
  o.think_tight = 0;
  const auto off = infer(rs, o);
  uint64_t sum_on = 0, sum_off = 0;
  for (size_t i = 1; i < d.size(); ++i) {
    sum_on += d[i].think_ns;
    sum_off += off[i].think_ns;
    EXPECT_LE(off[i].think_ns, d[i].think_ns) << i;
  }
  EXPECT_LT(sum_off, sum_on);
  // A wide chain (noisy_chain: 30 us of work, wake-ups of 100-930 us) is
  // not tight: its low quantile is far below its median.
  DependencyInferrer wide;
  const auto rw = noisy_chain(1, 0, 60, 0);
  for (size_t i = 0; i < rw.size(); ++i) wide.add(rw[i], i);
  EXPECT_EQ(wide.counters().think_tight, 0u);
}

// A chain without work of its own: its gaps are wake-ups, 3-5 us when the
// thread had not slept yet and 14-17 us when it had, in runs of 32 and 64.
// Any 32 of them may be alike, but over its history its low quantile is a
// quarter of its median: not tight, cut at the quantile throughout.
TEST(Dependency, WakeUpGapsInRunsAreNotTight) {
  std::vector<Request> rs;
  uint64_t t = 0;
  for (int i = 0; i < 300; ++i) {
    rs.push_back(req(1, t, t + 20, static_cast<uint64_t>(i) * 64));
    t += 20 +
         ((i / 32) % 3 == 0 ? 3 + static_cast<uint64_t>(i % 3) : 14 + static_cast<uint64_t>(i % 4));
  }
  DependencyInferrer inf;
  for (size_t i = 0; i < rs.size(); ++i) inf.add(rs[i], i);
  EXPECT_EQ(inf.counters().thread, 299u);
  EXPECT_EQ(inf.counters().think_tight, 0u);
}

// Queue depth 4: four requests at once, then each next one 2 µs (+ noise
// every other time) after a completion, four in flight at every issue.
std::vector<Request> qd4(uint32_t tid, int n, uint64_t sector) {
  std::vector<Request> rs;
  std::vector<uint64_t> done;
  for (int i = 0; i < n; ++i) {
    const uint64_t prev = rs.empty() ? 0 : rs.back().issue_ns / kUs + 1;
    const uint64_t issue =
        i < 4 ? static_cast<uint64_t>(i)
              : std::max(prev, done[static_cast<size_t>(i - 4)] + 2 + (i % 2 ? 300 : 0));
    const uint64_t lat = 100 + static_cast<uint64_t>(i % 4) * 10;
    done.push_back(issue + lat);
    rs.push_back(req(tid, issue, issue + lat, sector + static_cast<uint64_t>(i) * 64));
  }
  return rs;
}

TEST(Dependency, AsyncThreadGoesByItsQueueDepth) {
  const auto rs = qd4(1, 40, 0);
  DependencyInferrer inf;
  std::vector<Dependency> d;
  for (size_t i = 0; i < rs.size(); ++i) d.push_back(inf.add(rs[i], i));
  EXPECT_TRUE(d[0].independent());
  EXPECT_EQ(d[1].slots, 2u);  // the depth as far as it was seen
  EXPECT_EQ(d[2].slots, 3u);
  for (size_t i = 3; i < d.size(); ++i) {
    EXPECT_EQ(d[i].kind, DepKind::kSlot) << i;
    EXPECT_EQ(d[i].slots, 4u) << i;
    EXPECT_EQ(d[i].nparents, 0u) << i;  // no one completion: any of its thread's
    EXPECT_FALSE(d[i].independent()) << i;
  }
  // Think time after the thread's latest event (an issue or a completion):
  // its work, at most 2 µs; the 300 µs of noise are cut.
  for (size_t i = 8; i < d.size(); ++i) EXPECT_LE(d[i].think_ns, 2 * kUs) << i;
  EXPECT_GT(inf.counters().think_cut_ns, 5 * 290 * kUs);
  EXPECT_EQ(inf.counters().slot, d.size() - 1);
}

TEST(Dependency, SyncAndAsyncThreadsMixed) {
  std::vector<Request> a = qd4(2, 40, 1'000'000), s = noisy_chain(1, 5, 40, 0), rs;
  std::merge(a.begin(), a.end(), s.begin(), s.end(), std::back_inserter(rs),
             [](const Request& x, const Request& y) { return x.issue_ns < y.issue_ns; });
  auto d = infer(rs);
  std::vector<uint64_t> last_of_1;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (rs[i].pid == 1) {
      if (!last_of_1.empty()) {
        EXPECT_EQ(d[i].kind, DepKind::kThread) << i;
        EXPECT_EQ(parents(d[i]), std::vector<uint64_t>{last_of_1.back()}) << i;
        EXPECT_EQ(d[i].think_ns, 30 * kUs) << i;
      }
      last_of_1.push_back(i);
    } else if (i > 8) {
      EXPECT_EQ(d[i].kind, DepKind::kSlot) << i;
      EXPECT_EQ(d[i].slots, 4u) << i;
    }
  }
}

TEST(Dependency, AsyncThreadsLateWakeUpIsNotAPause) {
  // Queue depth 4 with quick gaps, then a request 3 ms (three windows) after
  // the thread's latest completion: still a slot request; 15 ms after: not.
  auto rs = qd4(1, 40, 0);
  uint64_t last = 0;
  for (const auto& r : rs) last = std::max(last, r.complete_ns / kUs);
  rs.push_back(req(1, last + 3000, last + 3100, 90'000));
  rs.push_back(req(1, last + 3100 + 15'000, last + 3100 + 15'100, 91'000));
  auto d = infer(rs);
  EXPECT_EQ(d[40].kind, DepKind::kSlot);
  EXPECT_LE(d[40].think_ns, 2 * kUs);
  EXPECT_TRUE(d[41].independent());
  // Too few gaps to know the thread's typical one: beyond the window is open loop.
  auto e = infer({req(1, 0, 100, 0), req(1, 10, 120, 100), req(1, 3120, 3200, 200)});
  EXPECT_TRUE(e[2].independent());
}

TEST(Dependency, LateWakeUpOfAQuickChainIsNotAPause) {
  // A chain with 20 µs gaps; then one gap of 3 ms (three windows) and one of
  // 15 ms (fifteen windows).
  std::vector<Request> rs;
  uint64_t t = 0;
  for (int i = 0; i < 12; ++i, t += 120) rs.push_back(req(1, t, t + 100, i * 64u));
  const uint64_t late = t - 20 + 3000;
  rs.push_back(req(1, late, late + 100, 5000));
  const uint64_t pause = late + 100 + 15'000;
  rs.push_back(req(1, pause, pause + 100, 6000));
  auto d = infer(rs);
  EXPECT_EQ(d[12].kind, DepKind::kThread);
  EXPECT_EQ(parents(d[12]), std::vector<uint64_t>{11});
  EXPECT_EQ(d[12].think_ns, 20 * kUs);  // its work; the rest was the late wake-up
  EXPECT_TRUE(d[13].independent());
  // Too few gaps to know the thread's typical one: beyond the window is a pause.
  std::vector<Request> few(rs.begin(), rs.begin() + 3);
  few.push_back(req(1, 240 + 100 + 3000, 240 + 100 + 3100, 5000));
  EXPECT_TRUE(infer(few)[3].independent());
}

}  // namespace
}  // namespace blkrr
