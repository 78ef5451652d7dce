// --timing dependency on a fake clock and engine: a request is never issued
// before its parents completed on the lab device, its think time is kept,
// independent requests keep their timestamps, and the conflict and verify
// modes work as in the other timings (the gate alone: dependency_gate_test.cpp).
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "replay/dependency_gate.h"
#include "replay/test_harness.h"

namespace blkrr::replay {
namespace {

using testing::Harness;

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1'000'000;

Request dep_req(uint32_t tid, uint64_t issue_us, uint64_t complete_us, uint64_t sector,
                Op op = Op::kRead) {
  Request r = testing::make_req(issue_us * kUs, op, sector, 8, tid);
  r.complete_ns = complete_us * kUs;
  return r;
}

// No spinning: the fake clock's busy wait jumps to the deadline, past
// completions that a real loop would have seen while spinning.
void dependency_mode(Harness& h) {
  h.sched.mode = TimingMode::kDependency;
  h.cfg.dependency = true;
  h.cfg.spin_ns = 0;
  h.cfg.adaptive_spin = false;
}

// One thread: each read issued 50 µs after the previous one completed
// (recorded latency 100 µs).
std::vector<Request> chain() {
  return {dep_req(1, 0, 100, 0), dep_req(1, 150, 250, 800), dep_req(1, 300, 400, 1600)};
}

TEST(DependencyReplay, ChainFollowsTheSlowerLabDevice) {
  Harness h;
  dependency_mode(h);
  h.engine.latency = [](const IoOp&) { return 1 * kMs; };
  h.run(chain());
  ASSERT_EQ(h.sink.all.size(), 3u);
  EXPECT_EQ(h.rec(0).submit_ns, 0u);
  EXPECT_EQ(h.rec(1).submit_ns, 1 * kMs + 50 * kUs);
  EXPECT_EQ(h.rec(2).submit_ns, 2 * kMs + 100 * kUs);
  EXPECT_FALSE(h.rec(0).req.after_parents);
  EXPECT_TRUE(h.rec(1).req.after_parents);
  EXPECT_EQ(h.rec(1).req.ready_ns, 1 * kMs);
  EXPECT_EQ(h.rec(2).delay_ns(), 0);
  EXPECT_EQ(h.res.gate.dependent, 2u);
  EXPECT_EQ(h.res.max_in_flight, 1u);
}

// A completion that comes within the reap spin is reaped by polling, without
// sleeping in the engine, and the chain keeps exactly its think times.
TEST(DependencyReplay, FastCompletionsAreReapedWithoutSleeping) {
  for (uint64_t spin : {uint64_t{0}, 50 * kUs}) {
    Harness h;
    dependency_mode(h);
    h.cfg.reap_spin_ns = spin;
    h.engine.latency = [](const IoOp&) { return 10 * kUs; };
    h.run(chain());
    ASSERT_EQ(h.sink.all.size(), 3u);
    EXPECT_EQ(h.rec(1).submit_ns, 10 * kUs + 50 * kUs);
    EXPECT_EQ(h.rec(2).submit_ns, 70 * kUs + 50 * kUs);
    EXPECT_EQ(h.rec(2).complete_ns, 130 * kUs);
    // Three waits for a completion: slept in the engine, or reaped spinning.
    EXPECT_EQ(h.res.reap_spins, spin > 0 ? 3u : 0u);
    EXPECT_EQ(h.res.reap_spin_hits, spin > 0 ? 3u : 0u);
    // (The other waits are timed sleeps through the think times.)
    EXPECT_EQ(h.engine.waits, h.res.sleeps + (spin > 0 ? 0u : 3u));
  }
}

// A slower completion than the spin: the loop spins its bound, then sleeps
// until the completion, which releases the next request as before.
TEST(DependencyReplay, SlowCompletionsSleepAfterABoundedSpin) {
  Harness h;
  dependency_mode(h);
  h.cfg.reap_spin_ns = 50 * kUs;
  h.engine.latency = [](const IoOp&) { return 1 * kMs; };
  h.run(chain());
  ASSERT_EQ(h.sink.all.size(), 3u);
  EXPECT_EQ(h.rec(1).submit_ns, 1 * kMs + 50 * kUs);
  EXPECT_EQ(h.rec(2).submit_ns, 2 * kMs + 100 * kUs);
  EXPECT_EQ(h.res.reap_spins, 3u);
  EXPECT_EQ(h.res.reap_spin_hits, 0u);
  EXPECT_EQ(h.engine.waits, h.res.sleeps + 3u);
}

TEST(DependencyReplay, ChainGoesFasterOnAFasterDevice) {
  Harness h;
  dependency_mode(h);
  h.engine.latency = [](const IoOp&) { return 10 * kUs; };
  h.run(chain());
  EXPECT_EQ(h.rec(1).submit_ns, 60 * kUs);
  EXPECT_EQ(h.rec(2).submit_ns, 120 * kUs);  // recorded at 300 µs
  EXPECT_EQ(h.res.last_complete_ns, 130 * kUs);
}

TEST(DependencyReplay, SpeedupScalesThinkTime) {
  Harness h;
  dependency_mode(h);
  h.sched.speedup = 2;
  h.engine.latency = [](const IoOp&) { return 1 * kMs; };
  h.run(chain());
  EXPECT_EQ(h.rec(1).submit_ns, 1 * kMs + 25 * kUs);
  EXPECT_EQ(h.rec(2).submit_ns, 2 * kMs + 50 * kUs);
}

TEST(DependencyReplay, IndependentRequestsKeepTheirTimestamps) {
  Harness h;
  dependency_mode(h);
  h.engine.latency = [](const IoOp&) { return 1 * kMs; };
  // Thread 2 issues every 5 ms, far outside the windows: open-loop arrivals.
  h.run({dep_req(1, 0, 100, 0), dep_req(2, 1, 101, 5000), dep_req(1, 150, 250, 800),
         dep_req(1, 300, 400, 1600), dep_req(2, 5000, 5100, 6000), dep_req(2, 10000, 10100, 7000)});
  ASSERT_EQ(h.sink.all.size(), 6u);
  EXPECT_EQ(h.rec(1).submit_ns, 1 * kUs);
  EXPECT_EQ(h.rec(2).submit_ns, 1 * kMs + 50 * kUs);
  EXPECT_EQ(h.rec(3).submit_ns, 2 * kMs + 100 * kUs);
  EXPECT_EQ(h.rec(4).submit_ns, 5 * kMs);
  EXPECT_EQ(h.rec(5).submit_ns, 10 * kMs);
  EXPECT_EQ(h.res.gate.dependent, 2u);
}

TEST(DependencyReplay, FanInWaitsForTheLastParent) {
  Harness h;
  dependency_mode(h);
  // Thread 1's request takes 3 ms on the lab device, thread 2's 1 ms, thread 3's 2 ms.
  h.engine.latency = [](const IoOp& op) { return (op.offset / 512 / 1000 + 1) * kMs; };
  h.run({dep_req(1, 0, 100, 2000), dep_req(2, 1, 110, 0), dep_req(3, 2, 120, 1000),
         dep_req(4, 130, 200, 5000)});
  const ReplayRecord& r = h.rec(3);
  EXPECT_EQ(r.req.nparents, 3u);
  EXPECT_EQ(h.rec(0).complete_ns, 3 * kMs);
  EXPECT_EQ(r.submit_ns, 3 * kMs + 10 * kUs);
}

// Many threads, random recorded and lab latencies: every request starts
// after all its parents completed in the replay, plus its think time.
TEST(DependencyReplay, NeverBeforeParentsCompleteAndThinkTimeKept) {
  std::mt19937_64 rng(7);
  std::vector<Request> reqs;
  std::map<uint32_t, uint64_t> next_issue;  // per thread, µs
  for (uint32_t t = 1; t <= 6; ++t) next_issue[t] = t;
  for (int i = 0; i < 600; ++i) {
    auto it = std::min_element(next_issue.begin(), next_issue.end(),
                               [](auto& a, auto& b) { return a.second < b.second; });
    const uint64_t issue = it->second, lat = 20 + rng() % 200, think = rng() % 80;
    reqs.push_back(dep_req(it->first, issue, issue + lat, static_cast<uint64_t>(i) * 64,
                           rng() % 3 == 0 ? Op::kWrite : Op::kRead));
    it->second = issue + lat + think;
  }
  for (bool faster : {false, true}) {
    Harness h;
    dependency_mode(h);
    h.engine.latency = [faster](const IoOp& op) {
      const uint64_t base = faster ? 5 * kUs : 400 * kUs;
      return base + (op.offset / 512 / 64) % 7 * kUs;
    };
    h.run(reqs);
    ASSERT_EQ(h.sink.all.size(), reqs.size());
    std::map<uint64_t, const ReplayRecord*> by_seq;
    for (const auto& r : h.sink.all) by_seq[r.req.seq] = &r;
    uint64_t checked = 0;
    for (const auto& [seq, r] : by_seq) {
      uint64_t last = 0;
      for (uint8_t i = 0; i < r->req.nparents; ++i) {
        const ReplayRecord* p = by_seq.at(r->req.parents[i]);
        ASSERT_GE(r->submit_ns, p->complete_ns) << "request " << seq;
        last = std::max(last, p->complete_ns);
      }
      if (r->req.nparents == 0) continue;
      EXPECT_EQ(r->submit_ns, last + r->req.think_ns) << "request " << seq;
      ++checked;
    }
    EXPECT_GT(checked, 500u);
  }
}

TEST(DependencyReplay, ConflictsArePushedBackAsInTheOtherTimings) {
  Harness h;
  dependency_mode(h);
  // Thread 2's write of sector 0 takes 5 ms; thread 1's dependent write of
  // sector 0 becomes due at 1.05 ms and waits for it.
  h.engine.latency = [](const IoOp& op) { return op.offset == 0 ? 5 * kMs : 1 * kMs; };
  h.run({dep_req(1, 0, 100, 100), dep_req(2, 1, 101, 0, Op::kWrite),
         dep_req(1, 150, 250, 0, Op::kWrite)});
  const ReplayRecord& r = h.rec(2);
  EXPECT_TRUE(r.req.after_parents);
  EXPECT_EQ(r.req.due_ns, 1 * kMs + 50 * kUs);
  EXPECT_EQ(r.submit_ns, 5 * kMs + 1 * kUs);
  EXPECT_TRUE(r.flags & kReplayPushedBack);
  EXPECT_EQ(h.res.pushed_back, 1u);
}

TEST(DependencyReplay, VerifyChecksADependentRead) {
  Harness h;
  dependency_mode(h);
  h.cfg.vmode = VerifyMode::kVerify;
  h.engine.latency = [](const IoOp&) { return 1 * kMs; };
  // A write, then its thread reads it back.
  h.run({dep_req(1, 0, 100, 0, Op::kWrite), dep_req(1, 150, 250, 0)});
  EXPECT_EQ(h.rec(1).submit_ns, 1 * kMs + 50 * kUs);
  EXPECT_EQ(h.res.verify_errors, 0u);
  EXPECT_EQ(h.res.sectors_verified, 8u);
}

TEST(DependencyReplay, InterruptedReplayRecordsWhatWaitedForParents) {
  Harness h;
  dependency_mode(h);
  std::atomic<bool> stop{false};
  h.engine.latency = [&stop](const IoOp&) {
    stop = true;  // stop as soon as the first request is submitted
    return 1 * kMs;
  };
  h.run(chain(), &stop);
  ASSERT_EQ(h.sink.all.size(), 3u);
  EXPECT_EQ(h.res.completed, 1u);
  EXPECT_EQ(h.res.not_started, 2u);
}

// An async thread of queue depth 4 replayed on a slower and a faster device:
// never more than 4 of its requests out, each slot request submitted its
// think time after its thread's latest event, in its thread's order.
TEST(DependencyReplay, AsyncThreadKeepsItsQueueDepth) {
  std::vector<Request> reqs;
  std::vector<uint64_t> done(200);
  for (size_t i = 0; i < done.size(); ++i) {
    const uint64_t issue = i < 4 ? i : done[i - 4] + 3 + (i % 3) * 200;
    done[i] = issue + 100 + (i % 5) * 20;
    reqs.push_back(dep_req(1, issue, done[i], i * 64));
  }
  for (uint64_t lab : {5 * kUs, 700 * kUs}) {
    Harness h;
    dependency_mode(h);
    h.engine.latency = [lab](const IoOp& op) { return lab + (op.offset / 512 / 64) % 3 * kUs; };
    h.run(reqs);
    ASSERT_EQ(h.sink.all.size(), reqs.size());
    std::vector<const ReplayRecord*> by_seq(reqs.size());
    for (const auto& r : h.sink.all) by_seq[r.req.seq] = &r;
    uint64_t slot = 0;
    for (size_t k = 1; k < by_seq.size(); ++k) {
      const ReplayRecord& r = *by_seq[k];
      EXPECT_GE(r.submit_ns, by_seq[k - 1]->submit_ns) << k;
      if (r.req.slots == 0) continue;
      ++slot;
      uint32_t out = 0;
      for (size_t j = 0; j < k; ++j)
        if (by_seq[j]->complete_ns > r.submit_ns) ++out;
      EXPECT_LT(out, r.req.slots) << k;
      if (!r.req.after_parents) continue;
      EXPECT_EQ(r.submit_ns, r.req.ready_ns + r.req.think_ns) << k;
      EXPECT_GE(r.req.ready_ns, by_seq[k - 1]->req.due_ns) << k;
    }
    EXPECT_GT(slot, 190u);
    EXPECT_EQ(h.res.max_in_flight, 4u);
  }
}

// A chain cut by one long pause (beyond the thread window): the request
// after the pause keeps its recorded distance from its thread's previous
// request, not its recorded time, and the chain goes on from there. (A
// thread of mostly independent requests keeps their recorded times:
// IndependentRequestsKeepTheirTimestamps.)
TEST(DependencyReplay, PauseInAChainKeepsItsGapNotTheRecordedClock) {
  Harness h;
  dependency_mode(h);
  h.engine.latency = [](const IoOp&) { return 10 * kUs; };
  // Recorded on a slow device: 1 ms latency, 50 µs gaps, a 5 ms pause.
  h.run({dep_req(1, 0, 1000, 0), dep_req(1, 1050, 2050, 800), dep_req(1, 2100, 3100, 1600),
         dep_req(1, 3150, 4150, 2400), dep_req(1, 9150, 10150, 3200),
         dep_req(1, 10200, 11200, 4000)});
  ASSERT_EQ(h.sink.all.size(), 6u);
  EXPECT_EQ(h.rec(3).submit_ns, 180 * kUs);
  EXPECT_FALSE(h.rec(4).req.after_parents);  // independent: 6 ms after the previous request
  EXPECT_EQ(h.rec(4).submit_ns, 180 * kUs + 6000 * kUs);
  EXPECT_EQ(h.rec(5).submit_ns, 6180 * kUs + 10 * kUs + 50 * kUs);
  EXPECT_EQ(h.res.gate.paced, 1u);
  EXPECT_EQ(h.res.gate.dependent, 4u);
}

}  // namespace
}  // namespace blkrr::replay
