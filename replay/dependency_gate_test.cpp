// The dependency gate alone: when a request held for its parents, a slot of
// its thread or its thread's earlier requests is handed out, and its due time.
#include "replay/dependency_gate.h"

#include <gtest/gtest.h>

#include <vector>

namespace blkrr::replay {
namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1'000'000;

TEST(DependencyGate, CompensatesTheMeasuredReactionTime) {
  for (bool compensate : {true, false}) {
    DependencyGate g(compensate);
    g.learn_reaction(20 * kUs);
    PlannedRequest p, c, d;
    p.seq = 0;
    c.seq = 1;
    c.nparents = 1;
    c.parents[0] = 0;
    c.think_ns = 50 * kUs;
    d = c;
    d.seq = 2;
    d.think_ns = 10 * kUs;  // shorter than the reaction: due at the completion
    g.add(p, 0, 0);
    g.add(c, 0, 0);
    g.add(d, 0, 0);
    EXPECT_EQ(g.held(), 3u);
    uint8_t f = 0;
    ASSERT_TRUE(g.ready());
    EXPECT_EQ(g.pop(f).seq, 0u);
    EXPECT_FALSE(g.ready());
    g.on_done(0, 1 * kMs);
    ASSERT_TRUE(g.ready());
    const PlannedRequest first = g.pop(f), second = g.pop(f);
    EXPECT_EQ(first.seq, 2u);
    EXPECT_EQ(first.due_ns, compensate ? 1 * kMs : 1 * kMs + 10 * kUs);
    EXPECT_EQ(second.due_ns, compensate ? 1 * kMs + 30 * kUs : 1 * kMs + 50 * kUs);
    EXPECT_EQ(g.counters().compensated_ns, compensate ? 30 * kUs : 0u);
    EXPECT_EQ(g.reaction_ns(), 20 * kUs);
  }
}

TEST(DependencyGate, CompensationByDefaultOnlyUnderTheRecordedThinkRule) {
  using Think = DependencyOptions::Think;
  // The work rule's think time is the application's work: its reaction is
  // not in it, so the replay's own reaction is not taken off.
  EXPECT_FALSE(compensates(Compensation::kAuto, Think::kWork));
  EXPECT_TRUE(compensates(Compensation::kAuto, Think::kRecorded));
  // Asked for, either way, whatever the rule.
  EXPECT_TRUE(compensates(Compensation::kOn, Think::kWork));
  EXPECT_TRUE(compensates(Compensation::kOn, Think::kRecorded));
  EXPECT_FALSE(compensates(Compensation::kOff, Think::kWork));
  EXPECT_FALSE(compensates(Compensation::kOff, Think::kRecorded));
}

TEST(DependencyGate, SlotRequestsGoWhenTheirThreadHasAFreeSlot) {
  DependencyGate g(false);
  std::vector<PlannedRequest> p(5);
  for (uint64_t i = 0; i < p.size(); ++i) {
    p[i].seq = i;
    p[i].pid = 9;
    p[i].slots = 2;
    p[i].due_ns = i * kMs;  // recorded
    p[i].think_ns = 10 * kUs;
    g.add(p[i], 0, 0);
  }
  EXPECT_EQ(g.held(), 5u);
  uint8_t f = 0;
  // The first keeps its recorded time; the second follows it by its think time.
  const PlannedRequest a = g.pop(f), b = g.pop(f);
  EXPECT_EQ(a.due_ns, 0u);
  EXPECT_FALSE(a.after_parents);
  EXPECT_EQ(b.seq, 1u);
  EXPECT_EQ(b.due_ns, 10 * kUs);
  EXPECT_TRUE(b.after_parents);
  EXPECT_FALSE(g.ready());  // both slots busy
  // The second completes first: any completion of the thread frees a slot.
  g.on_done(1, 500 * kUs);
  ASSERT_TRUE(g.ready());
  const PlannedRequest c = g.pop(f);
  EXPECT_EQ(c.seq, 2u);
  EXPECT_EQ(c.due_ns, 510 * kUs);
  EXPECT_EQ(c.ready_ns, 500 * kUs);
  EXPECT_FALSE(g.ready());
  // Two completions free two slots: the next two go in order, the second
  // paced after the first by its think time.
  g.on_done(0, 600 * kUs);
  g.on_done(2, 700 * kUs);
  const PlannedRequest d = g.pop(f), e = g.pop(f);
  EXPECT_EQ(d.seq, 3u);
  EXPECT_EQ(d.due_ns, 610 * kUs);
  EXPECT_EQ(e.seq, 4u);
  EXPECT_EQ(e.due_ns, 710 * kUs);
  EXPECT_EQ(g.counters().slot, 4u);
  EXPECT_EQ(g.held(), 0u);
}

TEST(DependencyGate, IndependentRequestWaitsForItsThreadsEarlierOnes) {
  // A chain a <- b1 <- b2 <- b3, then c recorded 3 ms after b3, independent.
  DependencyGate g(false);
  std::vector<PlannedRequest> p(5);
  for (uint64_t i = 0; i < p.size(); ++i) {
    p[i].seq = i;
    p[i].pid = 3;
    p[i].due_ns = i * kMs;
    if (i >= 1 && i <= 3) {
      p[i].nparents = 1;
      p[i].parents[0] = i - 1;
      p[i].think_ns = 20 * kUs;
    }
  }
  p[4].due_ns = 6 * kMs;
  for (const auto& r : p) g.add(r, 0, 0);
  uint8_t f = 0;
  EXPECT_EQ(g.pop(f).seq, 0u);
  EXPECT_FALSE(g.ready());  // c waits until b3's due time is known
  for (uint64_t i = 0; i < 3; ++i) {
    g.on_done(i, (i + 1) * 100 * kUs);
    const PlannedRequest b = g.pop(f);
    EXPECT_EQ(b.seq, i + 1);
    EXPECT_EQ(b.due_ns, (i + 1) * 100 * kUs + 20 * kUs);
    if (i < 2) {
      EXPECT_FALSE(g.ready());
    }
  }
  const PlannedRequest c = g.pop(f);
  EXPECT_EQ(c.seq, 4u);
  EXPECT_EQ(c.due_ns, 320 * kUs + 3 * kMs);
  EXPECT_FALSE(c.after_parents);
  EXPECT_EQ(g.counters().paced, 1u);
}

TEST(DependencyGate, MostlyOpenThreadKeepsItsTimestamps) {
  // Independent requests every 2.5 ms, one of them chained to the previous
  // completion: the next independent one keeps its recorded time.
  DependencyGate g(false);
  std::vector<PlannedRequest> p(6);
  for (uint64_t i = 0; i < p.size(); ++i) {
    p[i].seq = i;
    p[i].pid = 5;
    p[i].due_ns = i * 2500 * kUs;
  }
  p[3].nparents = 1;
  p[3].parents[0] = 2;
  p[3].think_ns = 10 * kUs;
  uint8_t f = 0;
  for (uint64_t i = 0; i < 3; ++i) g.add(p[i], 0, 0);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(g.pop(f).due_ns, i * 2500 * kUs);
  g.on_done(2, 5100 * kUs);
  g.add(p[3], 0, 5100 * kUs);
  EXPECT_EQ(g.pop(f).due_ns, 5110 * kUs);
  g.add(p[4], 0, 5100 * kUs);
  g.add(p[5], 0, 5100 * kUs);
  EXPECT_EQ(g.pop(f).due_ns, 10000 * kUs);
  EXPECT_EQ(g.pop(f).due_ns, 12500 * kUs);
  EXPECT_EQ(g.counters().paced, 0u);
}

TEST(DependencyGate, ParentsBeforeTheWindowLeaveTheTimestamp) {
  DependencyGate g(true);
  PlannedRequest r;
  r.seq = 5;
  r.due_ns = 7 * kMs;
  r.nparents = 1;
  r.parents[0] = 2;  // never replayed (before --start)
  g.add(r, 0, 0);
  uint8_t f = 0;
  const PlannedRequest out = g.pop(f);
  EXPECT_EQ(out.due_ns, 7 * kMs);
  EXPECT_FALSE(out.after_parents);
  EXPECT_EQ(g.counters().parents_unknown, 1u);
}

}  // namespace
}  // namespace blkrr::replay
