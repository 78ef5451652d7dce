// replay --timing dependency on real devices (root, eBPF capture): a
// closed-loop job (threads of synchronous O_DIRECT reads and writes) recorded
// on one loop device is replayed on another whose latency differs by an
// order of magnitude (a loop over /dev/shm, and a loop with direct I/O over
// a file on the root disk). Every request must start only after its inferred
// parents completed in the replay, and the replay's span must follow the
// lab device: much longer than recorded on the slower one, much shorter on
// the faster one, where a timestamp replay keeps the recorded span.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "capture/capture.h"
#include "core/trace_format.h"
#include "replay/session.h"
#include "tests/integration/test_capture_skip.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"

namespace blkrr {
namespace {

using testing::IoChild;
using testing::LoopDevice;

constexpr uint64_t kBytes = 64ull << 20;
constexpr const char* kComm = "depjob";

struct Keep : replay::RecordSink {
  std::mutex mu;
  std::vector<replay::ReplayRecord> all;
  void on_records(std::span<const replay::ReplayRecord> r) override {
    std::lock_guard<std::mutex> g(mu);
    all.insert(all.end(), r.begin(), r.end());
  }
};

struct Recorded {
  std::string trace;
  uint64_t span_ns = 0;  // first issue to last completion
  size_t requests = 0;
  uint64_t mean_latency_ns = 0;
  std::map<uint32_t, uint64_t> latency_by_thread;  // summed recorded latencies
};

// Two threads of 60 synchronous requests each on `dev`, captured and
// written as a native trace (the job's requests only).
void record_job(const LoopDevice& dev, const std::string& trace, Recorded& out) {
  auto sel = resolve_device(dev.path());
  ASSERT_TRUE(sel) << sel.error().message;
  CaptureConfig cfg;
  cfg.devices.push_back(*sel);
  auto cap = Capture::start(cfg);
  ASSERT_TRUE(cap) << cap.error().message;
  auto kid = IoChild::spawn(kComm, dev.path(), testing::make_known_load(2, 60, 2048, 100000));
  ASSERT_TRUE(kid) << kid.error().message;
  kid->go();
  ASSERT_EQ(kid->wait(), 0);
  std::vector<Request> got;
  auto keep = [&](const Request& r) {
    if (r.comm_view() == kComm && r.completed()) got.push_back(r);
  };
  ASSERT_TRUE((*cap)->poll(100, keep));
  ASSERT_TRUE((*cap)->stop(keep));
  // A request the block layer issued from a kworker (a busy queue run again
  // later) carries the kworker's name: under load one or two of the 120.
  ASSERT_GE(got.size(), 110u);
  TraceHeader h;
  h.host = "itest";
  auto w = TraceWriter::create(trace, h);
  ASSERT_TRUE(w) << w.error().message;
  uint64_t first = ~0ull, last = 0, lat = 0;
  std::map<uint32_t, uint64_t> by_thread;
  for (const Request& r : got) {
    ASSERT_TRUE(w->append(r).ok());
    first = std::min(first, r.issue_ns);
    last = std::max(last, r.complete_ns);
    lat += r.latency_ns();
    by_thread[r.pid] += r.latency_ns();
  }
  ASSERT_TRUE(w->close({}).ok());
  out = {trace, last - first, got.size(), lat / got.size(), by_thread};
}

// NOLINTNEXTLINE(bugprone-exception-escape): a test value; a failed allocation ends the test
struct Replayed {
  uint64_t span_ns = 0;  // start instant to last completion
  uint64_t dependent = 0;
  // What the span should be if it follows the lab device: per thread, the
  // sum over its requests of their latency in this replay plus their think
  // time (the thread's first request from its due time); the longest thread.
  uint64_t predicted_ns = 0;
  uint64_t mean_latency_ns = 0;
  std::map<uint32_t, uint64_t> think_by_thread;  // summed think times of dependent requests
  nlohmann::json summary;
};

// The span predicted from the replay's own latencies and the think times.
void predict(const std::map<uint64_t, const replay::ReplayRecord*>& by_seq, Replayed& out) {
  std::map<uint32_t, uint64_t> end;  // per thread: when its chain ends
  uint64_t lat = 0;
  for (const auto& [seq, r] : by_seq) {
    if (r->req.nparents) out.think_by_thread[r->req.pid] += r->req.think_ns;
    uint64_t& t = end[r->req.pid];
    const uint64_t start = r->req.nparents ? t + r->req.think_ns : r->req.due_ns;
    t = std::max(t, start) + r->latency_ns();
    lat += r->latency_ns();
    out.predicted_ns = std::max(out.predicted_ns, t);
  }
  out.mean_latency_ns = by_seq.empty() ? 0 : lat / by_seq.size();
}

void replay_on(const LoopDevice& dev, const Recorded& rec, replay::TimingMode mode, Replayed& out) {
  replay::SessionOptions o;
  o.load = rec.trace;
  o.device = dev.path();
  o.schedule.mode = mode;
  // The job is closed loop, but on a loaded 2-core machine a thread can take
  // milliseconds to issue its next request after a completion: the default
  // 1 ms window would call those requests independent (docs/replay.md).
  o.schedule.deps.thread_window_ns = 50'000'000;
  Keep keep;
  replay::SessionHooks hooks;
  hooks.sinks.push_back(&keep);
  auto oc = replay::run_session(o, hooks, nullptr);
  ASSERT_TRUE(oc) << oc.error().message;
  ASSERT_EQ(oc->exit_status, 0);
  ASSERT_EQ(keep.all.size(), rec.requests);
  std::map<uint64_t, const replay::ReplayRecord*> by_seq;
  for (const auto& r : keep.all) {
    ASSERT_TRUE(r.submitted());
    by_seq[r.req.seq] = &r;
    out.span_ns = std::max(out.span_ns, r.complete_ns);
  }
  for (const auto& [seq, r] : by_seq) {
    if (r->req.nparents == 0 || mode != replay::TimingMode::kDependency) continue;
    ++out.dependent;
    for (uint8_t i = 0; i < r->req.nparents; ++i) {
      const auto p = by_seq.find(r->req.parents[i]);
      ASSERT_NE(p, by_seq.end()) << "request " << seq;
      EXPECT_GE(r->submit_ns, p->second->complete_ns)
          << "request " << seq << " started before its parent " << p->first << " completed";
    }
  }
  predict(by_seq, out);
  out.summary = oc->summary;
}

// The replay's span is the one its own latencies and the recorded think
// times give, not the recorded one. The rest is the replayer's lateness: a
// quarter on an idle machine, up to twice the prediction when the test
// shares two cores with a build (measured: 59 ms for 30 ms predicted).
void expect_follows_device(const Recorded& rec, const Replayed& dep) {
  std::cout << "recorded: span " << rec.span_ns / 1000 << " us, mean latency "
            << rec.mean_latency_ns / 1000 << " us; dependency replay: span " << dep.span_ns / 1000
            << " us, predicted " << dep.predicted_ns / 1000 << " us, mean latency "
            << dep.mean_latency_ns / 1000 << " us\n";
  EXPECT_GE(dep.span_ns, dep.predicted_ns * 9 / 10);
  EXPECT_LE(dep.span_ns, dep.predicted_ns * 5 / 2);
}

class DependencyReplay : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_UNLESS_CAPTURE();
    auto f = LoopDevice::create(kBytes);
    ASSERT_TRUE(f) << f.error().message;
    fast_.emplace(std::move(*f));
    auto s = LoopDevice::create_on_disk(kBytes, "/var/tmp");
    ASSERT_TRUE(s) << s.error().message;
    slow_.emplace(std::move(*s));
  }
  void TearDown() override { unlink(trace_.c_str()); }

  std::optional<LoopDevice> fast_, slow_;
  std::string trace_ = "/dev/shm/blkrr-itest-dep-" + std::to_string(getpid()) + ".blkrr";
};

TEST_F(DependencyReplay, RecordedFastReplayedSlowFollowsTheDevice) {
  Recorded rec;
  ASSERT_NO_FATAL_FAILURE(record_job(*fast_, trace_, rec));
  Replayed dep;
  ASSERT_NO_FATAL_FAILURE(replay_on(*slow_, rec, replay::TimingMode::kDependency, dep));
  // Each thread's requests after the first depend on its previous one.
  EXPECT_GE(dep.dependent, rec.requests - 4);
  const auto& inferred = dep.summary["dependency"]["inferred"];
  EXPECT_EQ(inferred["thread"].get<uint64_t>() + inferred["sibling"].get<uint64_t>() +
                inferred["cross"].get<uint64_t>(),
            dep.dependent);
  EXPECT_EQ(dep.summary["dependency"]["dependent_replayed"].get<uint64_t>(), dep.dependent);
  expect_follows_device(rec, dep);
  // On an idle machine the disk-backed device is ~30x slower than the one
  // over /dev/shm; under load both slow down, so only a clear difference in
  // measured latency is asserted on. The recorded gaps beyond the threads'
  // work (the recording host's wake-ups) are not replayed: the span is
  // compared with the chain of recorded latencies and replayed think times.
  uint64_t rec_work = 0;
  for (const auto& [tid, lat] : rec.latency_by_thread)
    rec_work = std::max(rec_work, lat + dep.think_by_thread[tid]);
  if (dep.mean_latency_ns > 3 * rec.mean_latency_ns) {
    EXPECT_GT(dep.span_ns, 2 * rec_work)
        << "recorded " << rec.span_ns << " ns (latencies and think times " << rec_work
        << " ns), replayed " << dep.span_ns << " ns";
  }
}

TEST_F(DependencyReplay, RecordedSlowReplayedFastFollowsTheDevice) {
  Recorded rec;
  ASSERT_NO_FATAL_FAILURE(record_job(*slow_, trace_, rec));
  Replayed dep, ts;
  ASSERT_NO_FATAL_FAILURE(replay_on(*fast_, rec, replay::TimingMode::kDependency, dep));
  ASSERT_NO_FATAL_FAILURE(replay_on(*fast_, rec, replay::TimingMode::kTimestamp, ts));
  EXPECT_GE(dep.dependent, rec.requests - 4);
  expect_follows_device(rec, dep);
  // The timestamp replay keeps the recorded span whatever the device.
  EXPECT_GT(ts.span_ns, rec.span_ns * 9 / 10)
      << "recorded " << rec.span_ns << " ns, timestamp replay " << ts.span_ns << " ns";
  // How much faster depends on the share of think time in the span, which
  // grows with the machine's load: faster by a tenth at least.
  if (3 * dep.mean_latency_ns < rec.mean_latency_ns) {
    EXPECT_LT(dep.span_ns, ts.span_ns * 9 / 10)
        << "dependency " << dep.span_ns << " ns, timestamp " << ts.span_ns << " ns";
  }
}

}  // namespace
}  // namespace blkrr
