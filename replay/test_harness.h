// The replay loop on a fake clock and engine, set up as the session does:
// run a vector of requests through a Planner (optionally a ReadAhead) and a
// Replayer and keep every record.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "replay/read_ahead.h"
#include "replay/replayer.h"
#include "replay/test_doubles.h"

namespace blkrr::replay::testing {

struct Collect : RecordSink {
  std::vector<ReplayRecord> all;
  void on_records(std::span<const ReplayRecord> r) override {
    all.insert(all.end(), r.begin(), r.end());
  }
};

struct Harness {
  static constexpr uint64_t kMs = 1'000'000;
  FakeClock clock;
  FakeEngine engine{clock};
  Collect sink;
  ReplayConfig cfg;
  ScheduleOptions sched;
  MapOptions map{MapMode::kWrap, AlignMode::kRound, 1u << 20, 512, 0};
  ReplayResult res;
  bool read_ahead = false;  // plan through a ReadAhead (tiny batches) as the session does
  DependencyGraphReader* graph = nullptr;  // --dependencies FILE: the stored graph

  Harness() {
    cfg.lead_ns = kMs;
    cfg.run_id = 0xabcdef;
  }

  void run(std::vector<Request> reqs, const std::atomic<bool>* stop = nullptr) {
    VectorSource src(std::move(reqs));
    Schedule s(sched);
    auto dm = DeviceMap::create(map);
    ASSERT_TRUE(dm.ok());
    auto pool = BufferPool::create(cfg.vmode != VerifyMode::kNone, 64 * 1024);
    ASSERT_TRUE(pool.ok());
    Planner planner(src, s, *dm);
    if (graph) planner.use_graph(*graph);
    std::optional<ReadAhead> ahead;
    if (read_ahead) ahead.emplace(planner, ReadAheadOptions{2, 2, true});
    PlannedSource& from =
        ahead ? static_cast<PlannedSource&>(*ahead) : static_cast<PlannedSource&>(planner);
    RecordBus bus(false);
    bus.add_sink(&sink);
    Replayer rp(cfg, clock, engine, *pool, from, bus);
    auto r = rp.run(stop);
    ASSERT_TRUE(r.ok()) << r.error().message;
    bus.finish();
    res = *r;
  }
  // Submit time after the start instant of the load request `seq`.
  const ReplayRecord& rec(uint64_t seq) const {
    for (const auto& r : sink.all)
      if (r.req.seq == seq) return r;
    ADD_FAILURE() << "no record for seq " << seq;
    return sink.all.front();
  }
  std::vector<uint64_t> submitted_sectors() const {
    std::vector<uint64_t> v;
    for (const auto& s : engine.log) v.push_back(s.op.offset / 512);
    return v;
  }
};

}  // namespace blkrr::replay::testing
