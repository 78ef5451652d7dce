// The replay loop on a fake clock and a fake engine: exact submit times,
// exact orders, exact counts.
#include "replay/replayer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>

#include "replay/test_doubles.h"
#include "replay/test_harness.h"

namespace blkrr::replay {
namespace {

using testing::FakeClock;
using testing::FakeEngine;
using testing::Harness;
using testing::make_req;
using testing::VectorSource;

constexpr uint64_t kMs = 1'000'000;

TEST(Replayer, TimestampScheduleIsExactAndNeverAccumulates) {
  Harness h;
  h.engine.latency = [](const IoOp&) { return 30 * kMs; };  // much longer than the gaps
  h.run({make_req(0, Op::kRead, 0, 8), make_req(1 * kMs, Op::kRead, 8, 8),
         make_req(5 * kMs, Op::kWrite, 16, 8), make_req(5 * kMs, Op::kRead, 24, 8)});
  ASSERT_EQ(h.sink.all.size(), 4u);
  EXPECT_EQ(h.rec(0).submit_ns, 0u);
  EXPECT_EQ(h.rec(1).submit_ns, 1 * kMs);
  EXPECT_EQ(h.rec(2).submit_ns, 5 * kMs);
  EXPECT_EQ(h.rec(3).submit_ns, 5 * kMs);
  for (const auto& r : h.sink.all) {
    EXPECT_EQ(r.delay_ns(), 0);
    EXPECT_EQ(r.latency_ns(), 30 * kMs);
  }
  EXPECT_EQ(h.res.completed, 4u);
  EXPECT_EQ(h.res.max_in_flight, 4u);
  EXPECT_EQ(h.res.reads_done, 3u);
  EXPECT_EQ(h.res.writes_done, 1u);
  EXPECT_EQ(h.engine.log[2].op.kind, IoKind::kWrite);
  EXPECT_EQ(h.engine.log[2].op.bytes, 4096u);
}

TEST(Replayer, ReadAheadKeepsTheExactSchedule) {
  for (bool ahead : {false, true}) {
    Harness h;
    h.read_ahead = ahead;
    h.engine.latency = [](const IoOp&) { return 30 * kMs; };
    std::vector<Request> reqs;
    for (uint64_t i = 0; i < 25; ++i) reqs.push_back(make_req(i * kMs / 2, Op::kRead, i * 8, 8));
    h.run(reqs);
    ASSERT_EQ(h.sink.all.size(), 25u) << "read_ahead=" << ahead;
    for (uint64_t i = 0; i < 25; ++i) EXPECT_EQ(h.rec(i).submit_ns, i * kMs / 2);
    EXPECT_EQ(h.submitted_sectors().size(), 25u);
  }
}

TEST(Replayer, LateStartIsMeasuredNotPropagated) {
  Harness h;
  // Queue depth 1 and 3 ms latency: the second request (due at 1 ms) starts at
  // 3 ms (delay 2 ms); the third (due at 10 ms) is on time again.
  h.cfg.queue_depth = 1;
  h.engine.latency = [](const IoOp&) { return 3 * kMs; };
  h.run({make_req(0, Op::kRead, 0, 8), make_req(1 * kMs, Op::kRead, 8, 8),
         make_req(10 * kMs, Op::kRead, 16, 8)});
  EXPECT_EQ(h.rec(1).delay_ns(), static_cast<int64_t>(2 * kMs));
  EXPECT_EQ(h.rec(2).delay_ns(), 0);
  EXPECT_EQ(h.res.max_in_flight, 1u);
}

TEST(Replayer, Speedup) {
  Harness h;
  h.sched.speedup = 4.0;
  h.run({make_req(0, Op::kRead, 0, 8), make_req(8 * kMs, Op::kRead, 8, 8)});
  EXPECT_EQ(h.rec(1).submit_ns, 2 * kMs);
  EXPECT_EQ(h.rec(1).req.due_ns, 2 * kMs);
  EXPECT_EQ(h.rec(1).req.load_ns, 8 * kMs);
}

TEST(Replayer, WindowSelectsAndRebasesRequests) {
  Harness h;
  h.sched.window_start_ns = 2 * kMs;
  h.sched.window_duration_ns = 3 * kMs;
  h.run({make_req(0, Op::kRead, 0, 8), make_req(1 * kMs, Op::kRead, 8, 8),
         make_req(2 * kMs, Op::kRead, 16, 8), make_req(4 * kMs, Op::kRead, 24, 8),
         make_req(5 * kMs, Op::kRead, 32, 8), make_req(6 * kMs, Op::kRead, 40, 8)});
  ASSERT_EQ(h.sink.all.size(), 2u);
  EXPECT_EQ(h.submitted_sectors(), (std::vector<uint64_t>{16, 24}));
  EXPECT_EQ(h.rec(2).submit_ns, 0u);
  EXPECT_EQ(h.rec(3).submit_ns, 2 * kMs);
}

TEST(Replayer, StartAtBeginsAtTheAgreedInstant) {
  Harness h;
  const uint64_t at = h.clock.now_ns() + 750 * kMs;
  h.cfg.start_instant_ns = at;
  h.run({make_req(0, Op::kRead, 0, 8), make_req(1 * kMs, Op::kRead, 8, 8)});
  EXPECT_EQ(h.res.start_instant_ns, at);
  EXPECT_EQ(h.engine.log[0].at_ns, at);
  EXPECT_EQ(h.engine.log[1].at_ns, at + kMs);
}

TEST(Replayer, FullspeedRespectsQueueDepthAndOrder) {
  Harness h;
  h.sched.mode = TimingMode::kFullspeed;
  h.cfg.queue_depth = 3;
  std::vector<Request> reqs;
  reqs.reserve(20);
  for (int i = 0; i < 20; ++i) reqs.push_back(make_req(i * 100 * kMs, Op::kRead, i * 8, 8));
  h.run(reqs);
  EXPECT_EQ(h.res.completed, 20u);
  EXPECT_EQ(h.res.max_in_flight, 3u);
  for (uint32_t n : h.engine.in_flight_at_submit) EXPECT_LE(n, 3u);
  std::vector<uint64_t> want;
  want.reserve(20);
  for (int i = 0; i < 20; ++i) want.push_back(i * 8);
  EXPECT_EQ(h.submitted_sectors(), want);
  // 20 requests of 100 us at depth 3 take 7 rounds, not 2 s of load time.
  EXPECT_EQ(h.res.last_complete_ns, 700'000u);
}

TEST(Replayer, OrderGlobalWaitsForEveryEarlierRequest) {
  Harness h;
  h.cfg.order = OrderMode::kGlobal;
  h.engine.latency = [](const IoOp&) { return 4 * kMs; };
  h.run({make_req(0, Op::kRead, 0, 8, 1), make_req(1 * kMs, Op::kRead, 100, 8, 2),
         make_req(2 * kMs, Op::kRead, 200, 8, 3), make_req(20 * kMs, Op::kRead, 300, 8, 4)});
  EXPECT_EQ(h.rec(1).submit_ns, 4 * kMs);
  EXPECT_EQ(h.rec(2).submit_ns, 8 * kMs);
  EXPECT_EQ(h.rec(3).submit_ns, 20 * kMs);
  EXPECT_EQ(h.res.waited, 2u);
  EXPECT_EQ(h.res.max_in_flight, 1u);
}

TEST(Replayer, OrderPerProcessWaitsForTheSameProcessOnly) {
  Harness h;
  h.cfg.order = OrderMode::kPerProcess;
  h.engine.latency = [](const IoOp&) { return 4 * kMs; };
  h.run({make_req(0, Op::kRead, 0, 8, 10), make_req(1 * kMs, Op::kRead, 100, 8, 10),
         make_req(1 * kMs, Op::kRead, 200, 8, 20), make_req(2 * kMs, Op::kRead, 300, 8, 10)});
  EXPECT_EQ(h.rec(1).submit_ns, 4 * kMs);  // after pid 10's first
  EXPECT_EQ(h.rec(2).submit_ns, 1 * kMs);  // pid 20 is not held up
  EXPECT_EQ(h.rec(3).submit_ns, 8 * kMs);  // after pid 10's second
  EXPECT_EQ(h.res.waited, 2u);
  EXPECT_EQ(h.submitted_sectors(), (std::vector<uint64_t>{0, 200, 100, 300}));
}

TEST(Replayer, OrderNoneIsOpenLoop) {
  Harness h;
  h.engine.latency = [](const IoOp&) { return 50 * kMs; };
  h.run({make_req(0, Op::kRead, 0, 8, 10), make_req(1 * kMs, Op::kRead, 100, 8, 10)});
  EXPECT_EQ(h.rec(1).submit_ns, 1 * kMs);
  EXPECT_EQ(h.res.waited, 0u);
}

// Three requests: a write at 0 (5 ms), an overlapping write at 1 ms, and an
// unrelated read at 2 ms.
std::vector<Request> overlap_load() {
  return {make_req(0, Op::kWrite, 100, 8), make_req(1 * kMs, Op::kWrite, 104, 8),
          make_req(2 * kMs, Op::kRead, 5000, 8)};
}

TEST(Replayer, CmodeConflictsCountsButSubmits) {
  Harness h;
  h.cfg.cmode = ConflictMode::kConflicts;
  h.engine.latency = [](const IoOp&) { return 5 * kMs; };
  h.run(overlap_load());
  EXPECT_EQ(h.res.conflicts, 1u);
  EXPECT_EQ(h.rec(1).submit_ns, 1 * kMs);
  EXPECT_EQ(h.res.completed, 3u);
  EXPECT_TRUE(h.rec(1).flags & kReplayConflict);
}

TEST(Replayer, CmodeDropDropsTheLaterRequest) {
  Harness h;
  h.cfg.cmode = ConflictMode::kDrop;
  h.engine.latency = [](const IoOp&) { return 5 * kMs; };
  h.run(overlap_load());
  EXPECT_EQ(h.res.dropped, 1u);
  EXPECT_EQ(h.res.completed, 2u);
  EXPECT_EQ(h.submitted_sectors(), (std::vector<uint64_t>{100, 5000}));
  EXPECT_TRUE(h.rec(1).flags & kReplayDropped);
  EXPECT_FALSE(h.rec(1).submitted());
}

TEST(Replayer, CmodePartialPushesBackOnlyTheConflict) {
  Harness h;
  h.cfg.cmode = ConflictMode::kPartial;
  h.engine.latency = [](const IoOp&) { return 5 * kMs; };
  h.run(overlap_load());
  EXPECT_EQ(h.res.pushed_back, 1u);
  EXPECT_EQ(h.rec(1).submit_ns, 5 * kMs);  // when the first write completed
  EXPECT_EQ(h.rec(2).submit_ns, 2 * kMs);  // the unrelated read is on time
  EXPECT_TRUE(h.rec(1).flags & kReplayPushedBack);
}

TEST(Replayer, CmodePartialKeepsLaterOverlapsBehindThePushedBack) {
  Harness h;
  h.engine.latency = [](const IoOp&) { return 5 * kMs; };
  // A third write overlapping the pushed-back second one (not the first)
  // must not overtake it.
  h.run({make_req(0, Op::kWrite, 100, 8), make_req(1 * kMs, Op::kWrite, 104, 8),
         make_req(2 * kMs, Op::kWrite, 110, 8)});
  EXPECT_EQ(h.submitted_sectors(), (std::vector<uint64_t>{100, 104, 110}));
  EXPECT_EQ(h.rec(1).submit_ns, 5 * kMs);
  EXPECT_EQ(h.rec(2).submit_ns, 10 * kMs);
  EXPECT_EQ(h.res.pushed_back, 2u);
}

// A hot sector written over and over at full speed: the writes wait in a
// chain and go one at a time, in order, each when the one before completes,
// whatever the queue depth; requests elsewhere are not held by the chain.
TEST(Replayer, CmodePartialReleasesAChainOfWritesInOrder) {
  for (uint32_t qd : {1u, 2u, 64u}) {
    Harness h;
    h.cfg.queue_depth = qd;
    h.sched.mode = TimingMode::kFullspeed;
    h.engine.latency = [](const IoOp& op) { return op.offset == 800 * 512 ? 5 * kMs : kMs; };
    std::vector<Request> reqs;
    reqs.reserve(50);
    for (int i = 0; i < 40; ++i) reqs.push_back(make_req(i, Op::kWrite, 800, 8));
    for (int i = 0; i < 10; ++i) reqs.push_back(make_req(40 + i, Op::kRead, 4000 + 8 * i, 8));
    h.run(reqs);
    EXPECT_EQ(h.res.pushed_back, qd == 1 ? 0u : 39u) << "qd " << qd;  // qd 1: no overlap in flight
    for (uint64_t k = 1; k < 40; ++k)
      EXPECT_EQ(h.rec(k).submit_ns, h.rec(k - 1).complete_ns) << "qd " << qd << " write " << k;
    if (qd == 64) {
      for (uint64_t k = 40; k < 50; ++k) EXPECT_LT(h.rec(k).submit_ns, kMs) << "read " << k;
    }
    EXPECT_EQ(h.sink.all.size(), 50u);
  }
}

TEST(Replayer, CmodeOrderingHoldsEverythingUntilAllEarlierComplete) {
  Harness h;
  h.cfg.cmode = ConflictMode::kOrdering;
  h.engine.latency = [](const IoOp&) { return 5 * kMs; };
  h.run(overlap_load());
  EXPECT_EQ(h.rec(1).submit_ns, 5 * kMs);
  EXPECT_EQ(h.rec(2).submit_ns, 5 * kMs);  // held behind the conflict
  EXPECT_EQ(h.res.waited, 1u);
  EXPECT_EQ(h.res.conflicts, 1u);
}

TEST(Replayer, StrongLevelsDecideWhatConflicts) {
  auto load = [] {
    return std::vector<Request>{
        make_req(0, Op::kRead, 100, 8), make_req(1 * kMs, Op::kWrite, 100, 8),
        make_req(2 * kMs, Op::kRead, 200, 8), make_req(3 * kMs, Op::kRead, 200, 8)};
  };
  for (int strong : {0, 1, 2}) {
    Harness h;
    h.cfg.cmode = ConflictMode::kConflicts;
    h.cfg.strong = strong;
    h.engine.latency = [](const IoOp&) { return 10 * kMs; };
    h.run(load());
    const uint64_t want = strong == 0 ? 0 : strong == 1 ? 1 : 2;
    EXPECT_EQ(h.res.conflicts, want) << "strong " << strong;
  }
}

TEST(Replayer, VerifyFindsASectorOverwrittenBehindItsBack) {
  Harness h;
  h.cfg.vmode = VerifyMode::kVerify;
  h.engine.latency = [](const IoOp&) { return 1 * kMs; };
  // write 8 sectors at 0 ms, read them back at 10 ms; between the two, someone
  // else writes sector 3.
  h.engine.latency = [&h](const IoOp& op) {
    if (op.kind == IoKind::kRead) h.engine.disk[3].assign(512, 0x5a);
    return 1 * kMs;
  };
  h.run({make_req(0, Op::kWrite, 0, 8), make_req(10 * kMs, Op::kRead, 0, 8)});
  ASSERT_EQ(h.res.verify_errors, 1u);
  const VerifyError& e = h.res.verify_error_list[0];
  EXPECT_EQ(e.sector, 3u);
  EXPECT_EQ(e.read_seq, 1u);
  EXPECT_EQ(e.expected.seq, 0u);
  EXPECT_EQ(e.expected.offset, 3u);
  EXPECT_FALSE(e.found.has_value());
  EXPECT_EQ(h.res.sectors_verified, 8u);
}

TEST(Replayer, VerifyCleanRunHasNoErrors) {
  Harness h;
  h.cfg.vmode = VerifyMode::kVerify;
  h.engine.latency = [](const IoOp&) { return 4 * kMs; };
  h.run({make_req(0, Op::kWrite, 0, 8), make_req(1 * kMs, Op::kWrite, 4, 8),
         make_req(10 * kMs, Op::kRead, 0, 16)});
  EXPECT_EQ(h.res.verify_errors, 0u);
  EXPECT_EQ(h.res.pushed_back, 1u);
  EXPECT_EQ(h.res.sectors_verified, 12u);
}

TEST(Replayer, FinalVerifyRereadsEveryWrittenSector) {
  Harness h;
  h.cfg.vmode = VerifyMode::kFinalVerify;
  h.run({make_req(0, Op::kWrite, 0, 8), make_req(1 * kMs, Op::kWrite, 1000, 16)});
  EXPECT_EQ(h.res.verify_reads, 2u);
  EXPECT_EQ(h.res.sectors_verified, 24u);
  EXPECT_EQ(h.res.verify_errors, 0u);
  // the reads are after the load
  ASSERT_EQ(h.engine.log.size(), 4u);
  EXPECT_EQ(h.engine.log[2].op.kind, IoKind::kRead);
  EXPECT_EQ(h.engine.log[2].op.offset, 0u);
  EXPECT_EQ(h.engine.log[3].op.offset, 1000u * 512);
}

TEST(Replayer, ParanoiaRereadsEachWriteAtOnce) {
  Harness h;
  h.cfg.vmode = VerifyMode::kParanoia;
  h.engine.latency = [](const IoOp&) { return 1 * kMs; };
  h.run({make_req(0, Op::kWrite, 0, 8), make_req(10 * kMs, Op::kWrite, 64, 8)});
  ASSERT_EQ(h.engine.log.size(), 4u);
  EXPECT_EQ(h.engine.log[1].op.kind, IoKind::kRead);
  EXPECT_EQ(h.engine.log[1].at_ns, h.engine.log[0].at_ns + kMs);
  EXPECT_EQ(h.res.verify_reads, 2u);
  EXPECT_EQ(h.res.sectors_verified, 16u);
  EXPECT_EQ(h.res.completed, 2u);  // paranoia reads are not load requests
}

TEST(Replayer, WrapAndAlignmentApplyBeforeSubmission) {
  Harness h;
  h.map.device_sectors = 1000;
  h.map.logical_block = 4096;
  h.run({make_req(0, Op::kRead, 2504, 8), make_req(1 * kMs, Op::kRead, 13, 3)});
  EXPECT_EQ(h.submitted_sectors(), (std::vector<uint64_t>{504, 8}));
  EXPECT_EQ(h.rec(0).req.orig_sector, 2504u);
  EXPECT_EQ(h.engine.log[1].op.bytes, 4096u);
}

TEST(Replayer, StopFinishesInFlightAndRecordsTheRest) {
  Harness h;
  std::atomic<bool> stop{false};
  h.engine.latency = [&stop](const IoOp&) {
    stop = true;  // Ctrl-C right after the first submission
    return 2 * kMs;
  };
  h.run({make_req(0, Op::kRead, 0, 8), make_req(1 * kMs, Op::kRead, 8, 8),
         make_req(2 * kMs, Op::kRead, 16, 8)},
        &stop);
  EXPECT_TRUE(h.res.interrupted);
  EXPECT_EQ(h.res.completed, 1u);
  EXPECT_EQ(h.res.not_started, 1u);  // the head that was read; the rest never left the load
  EXPECT_EQ(h.engine.log.size(), 1u);
}

TEST(Planner, NativeTracesAreSortedAndRebased) {
  VectorSource src({make_req(5'000 * kMs + 3 * kMs, Op::kRead, 30, 8),
                    make_req(5'000 * kMs + 1 * kMs, Op::kRead, 10, 8),
                    make_req(5'000 * kMs + 2 * kMs, Op::kWrite, 20, 8)},
                   /*absolute_time=*/true);
  src.set_sorted(false);
  Schedule s({});
  auto dm = DeviceMap::create({MapMode::kWrap, AlignMode::kRound, 1u << 20, 512, 0});
  Planner p(src, s, *dm);
  PlannedRequest r;
  std::vector<std::pair<uint64_t, uint64_t>> got;
  while (*p.next(r)) got.emplace_back(r.load_ns, r.sector);
  EXPECT_EQ(got, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 10}, {kMs, 20}, {2 * kMs, 30}}));
  EXPECT_EQ(p.counters().planned_writes, 1u);
}

TEST(Planner, UnsupportedOpsAreCountedAndSkipped) {
  VectorSource src({make_req(0, Op::kDiscard, 0, 8), make_req(1, Op::kFlush, 0, 0),
                    make_req(2, Op::kRead, 8, 8)});
  Schedule s({});
  auto dm = DeviceMap::create({MapMode::kWrap, AlignMode::kRound, 1u << 20, 512, 0});
  Planner p(src, s, *dm);
  PlannedRequest r;
  int n = 0;
  while (*p.next(r)) ++n;
  EXPECT_EQ(n, 2);
  EXPECT_EQ(p.counters().unsupported_ops, 1u);
  EXPECT_EQ(p.counters().planned_flushes, 1u);
}

}  // namespace
}  // namespace blkrr::replay

namespace blkrr::replay {
namespace {

// Timer wake-ups 150 µs late with a 100 µs spin margin: the first request is
// 50 µs late; the replayer learns the lateness and spins longer, so the rest
// start exactly on time. Without adaptation every one is 50 µs late.
TEST(Replayer, AdaptiveSpinLearnsLateWakeUps) {
  for (bool adaptive : {true, false}) {
    Harness h;
    h.cfg.spin_ns = 100'000;
    h.cfg.adaptive_spin = adaptive;
    h.engine.wake_late_ns = 150'000;
    h.engine.latency = [](const IoOp&) { return kMs; };
    h.run({make_req(0, Op::kRead, 0, 8), make_req(10 * kMs, Op::kRead, 8, 8),
           make_req(20 * kMs, Op::kRead, 16, 8), make_req(30 * kMs, Op::kRead, 24, 8)});
    ASSERT_EQ(h.sink.all.size(), 4u);
    // Adaptive: the lateness is learned during the start lead, so even the
    // first request is on time; fixed: every sleep ends 50 us late.
    for (uint64_t i = 0; i < 4; ++i)
      EXPECT_EQ(h.rec(i).submit_ns, i * 10 * kMs + (adaptive ? 0 : 50'000)) << i;
    EXPECT_EQ(h.res.wake_late_max_ns, 150'000u);
    EXPECT_EQ(h.res.spin_max_ns, adaptive ? 235'000u : 100'000u);
  }
}

}  // namespace
}  // namespace blkrr::replay
