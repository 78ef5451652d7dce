// The capture library in-process, as root on loop devices: in-kernel
// aggregation (what `blkrr top` reads) equals the totals of the event stream
// of the same run; the stale-entry sweeper on real BPF maps.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

#include "capture/bpf_types.h"
#include "capture/capture.h"
#include "capture/features.h"
#include "tests/integration/test_capture_fixture.h"
#include "core/disktime.h"

namespace blkrr::testing {
namespace {

class Capture : public CaptureOnLoop {};

TEST_F(Capture, InKernelAggregatesEqualTheEventStream) {
  ASSERT_NO_FATAL_FAILURE(start(256 << 20, [](CaptureConfig& c) {
    c.aggregate = true;
    c.emit_events = true;
  }));
  ASSERT_NO_FATAL_FAILURE(
      run({"blkrr-agg-x", "blkrr-agg-y"},
          {make_known_load(4, 20, 0, 200000), make_known_load(2, 30, 200000, 200000)}));
  std::vector<Request> events;
  auto fn = [&](const Request& r) { events.push_back(r); };
  for (int i = 0; i < 3; i++) ASSERT_TRUE(cap().poll(100, fn));
  auto aggs = cap().aggregates();
  auto busy = cap().device_busy();
  ASSERT_TRUE(aggs && busy);
  ASSERT_TRUE(cap().stop(fn));
  const Counters c = cap().counters();
  EXPECT_EQ(c.at("ringbuf_reserve_failed"), 0u);

  // Per {tgid, tid, comm, op}: requests, bytes, disk time, latency.
  using K = std::tuple<uint32_t, uint32_t, std::string, int, DevT>;
  std::map<K, AggValue> from_events, from_kernel;
  uint64_t dt_sum = 0;
  std::vector<Interval> iv;
  uint64_t n_x = 0, n_y = 0;  // every request, completion seen or not
  for (const auto& r : events) {
    if (r.comm_view() == "blkrr-agg-x") ++n_x;
    if (r.comm_view() == "blkrr-agg-y") ++n_y;
    if (!r.completed()) continue;  // never aggregated in the kernel either
    auto& v =
        from_events[{r.tgid, r.pid, std::string(r.comm_view()), static_cast<int>(r.op), r.part}];
    v.requests++;
    v.bytes += r.bytes;
    v.disk_time_ns += r.disk_time_ns;
    v.latency_ns += r.latency_ns();
    ++v.latency_hist[latency_slot(r.latency_ns())];
    dt_sum += r.disk_time_ns;
    iv.push_back({r.issue_ns, r.complete_ns});
  }
  for (const auto& e : *aggs) {
    std::string comm(e.key.comm.data(), strnlen(e.key.comm.data(), e.key.comm.size()));
    from_kernel[{e.key.pid, e.key.tid, comm, static_cast<int>(e.key.dir), e.key.dev}] = e.value;
    EXPECT_EQ(e.key.disk, dev().dev());
  }
  ASSERT_EQ(from_kernel.size(), from_events.size());
  for (const auto& [k, v] : from_events) {
    auto it = from_kernel.find(k);
    ASSERT_NE(it, from_kernel.end()) << std::get<2>(k);
    EXPECT_EQ(it->second.requests, v.requests);
    EXPECT_EQ(it->second.bytes, v.bytes);
    EXPECT_EQ(it->second.disk_time_ns, v.disk_time_ns);
    EXPECT_EQ(it->second.latency_ns, v.latency_ns);
    EXPECT_EQ(it->second.latency_hist, v.latency_hist) << "latency histogram of " << std::get<2>(k);
  }
  if (cap().features().at("attribution") == "block_rq_issue") {
    // Without block_io_start and block_rq_insert (BLKRR_DENY=all) a request
    // is charged to the task current at issue: a plug the other child (or a
    // kworker) flushes takes it (docs/kernels.md). Only the total is exact.
    EXPECT_EQ(events.size(), 140u);
  } else {
    EXPECT_EQ(n_x, 80u);
    EXPECT_EQ(n_y, 60u);
  }
  // The device total is the union of in-flight intervals.
  ASSERT_EQ(busy->size(), 1u);
  EXPECT_EQ((*busy)[0].disk, dev().dev());
  EXPECT_EQ((*busy)[0].busy_ns, dt_sum);
  const double uni = static_cast<double>(union_length(iv));
  if (iv.size() == events.size()) {  // no completion lost by the kernel
    EXPECT_NEAR(static_cast<double>(dt_sum), uni, 0.01 * uni);
  } else {
    EXPECT_GE(static_cast<double>(dt_sum), uni);
  }
}

// A partition selection is the disk plus a sector range, evaluated in the
// BPF program (kernels here read no partition tables, so the range is given
// directly): only requests starting inside it are emitted, while the disk
// time still covers every request of the disk.
TEST_F(Capture, SectorRangeSelectionEmitsOnlyRequestsInside) {
  ASSERT_NO_FATAL_FAILURE(start(128 << 20, [](CaptureConfig& c) {
    PartitionInfo part;
    part.dev = c.devices[0].disk;
    part.name = "range";
    part.start_sector = 100000;
    part.nr_sectors = 50000;
    c.devices[0].part = part;
  }));
  const auto inside = make_known_load(2, 10, 100000, 49000);
  ASSERT_NO_FATAL_FAILURE(
      run({"blkrr-range", "blkrr-outside", "blkrr-outside"},
          {inside, make_known_load(2, 10, 0, 99000), make_known_load(2, 10, 150000, 100000)}));
  std::vector<Request> got;
  auto fn = [&](const Request& r) { got.push_back(r); };
  ASSERT_TRUE(cap().poll(100, fn));
  auto busy = cap().device_busy();
  ASSERT_TRUE(cap().stop(fn));
  ASSERT_TRUE(busy);
  const Counters c = cap().counters();
  std::multiset<std::tuple<uint64_t, uint32_t>> want, have;
  for (const auto& t : inside)
    for (const auto& op : t) want.insert({op.sector, op.bytes});
  std::vector<Interval> iv;
  for (const auto& r : got) {
    EXPECT_EQ(r.comm_view(), "blkrr-range");
    have.insert({r.sector, r.bytes});
    if (r.completed()) iv.push_back({r.issue_ns, r.complete_ns});
  }
  EXPECT_EQ(have, want);
  ASSERT_EQ(busy->size(), 1u);
  // Every request of the disk was issued; each completed one was charged.
  EXPECT_EQ(c.at("issues"), 60u);
  EXPECT_EQ((*busy)[0].requests, c.at("completions"));
  EXPECT_EQ(c.at("completions") + c.at("completion_not_seen_reissued") +
                c.at("completion_not_seen_checked") + c.at("inflight_swept") +
                c.at("completion_not_seen_idle") + c.at("inflight_at_stop"),
            60u);
  EXPECT_GT((*busy)[0].busy_ns, union_length(iv));
}

void aggregate_only(CaptureConfig& c) {
  c.aggregate = true;
  c.emit_events = false;
}

TEST_F(Capture, AggregateOnlySendsNothingThroughTheRingBuffer) {
  ASSERT_NO_FATAL_FAILURE(start(64 << 20, aggregate_only));
  ASSERT_NO_FATAL_FAILURE(run("blkrr-agg-only", make_known_load(2, 10, 0, 100000)));
  int delivered = 0;
  auto n = cap().poll(50, [&](const Request&) { delivered++; });
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 0);
  auto aggs = cap().aggregates();
  ASSERT_TRUE(aggs);
  uint64_t reqs = 0;
  for (const auto& e : *aggs) reqs += e.value.requests;
  EXPECT_EQ(reqs, 20u);
  EXPECT_EQ(drain().size(), 0u);
  EXPECT_EQ(delivered, 0);
  EXPECT_EQ(cap().counters().at("events"), 0u);
  // A poll after the stop is a bug of the caller.
  auto late = cap().poll(0, [](const Request&) {});
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().kind, ErrorKind::kInternal);
}

TEST_F(Capture, QueueTimeFromBlockRqInsertWithAScheduler) {
  bool scheduler_set = false;
  ASSERT_NO_FATAL_FAILURE(start(64 << 20, [&](CaptureConfig& c) {
    c.queue_time = true;
    FILE* f = fopen(("/sys/block/" + c.devices[0].disk_name + "/queue/scheduler").c_str(), "w");
    if (f == nullptr) return;
    fputs("mq-deadline", f);
    scheduler_set = fclose(f) == 0;
  }));
  ASSERT_TRUE(scheduler_set) << "mq-deadline not available";
  if (!cap().has_queue_time()) GTEST_SKIP() << "kernel without block_rq_insert/block_io_start";
  ASSERT_NO_FATAL_FAILURE(run("blkrr-queue", make_known_load(4, 10, 0, 100000)));
  size_t n = 0, with_insert = 0;
  auto fn = [&](const Request& r) {
    if (r.comm_view() != "blkrr-queue") return;
    n++;
    RequestExtra e = cap().current_extra();
    if (e.insert_ns == kNoTime) return;
    with_insert++;
    EXPECT_LE(e.insert_ns, r.issue_ns);
    EXPECT_LT(r.issue_ns - e.insert_ns, 1'000'000'000ull);
  };
  ASSERT_TRUE(cap().poll(100, fn));
  ASSERT_TRUE(cap().stop(fn));
  EXPECT_EQ(n, 40u);
  // Every request went through the scheduler's insert.
  EXPECT_EQ(with_insert, 40u);
}

// A child named `comm` that reads 4 KiB blocks as uid `uid` (one thread, so
// its pid is its tid): `first` reads after the first byte on its gate, then
// it reports on `done`, then `second` reads after the next byte, and exits.
class PhasedReader {
 public:
  PhasedReader(const std::string& comm, const std::string& dev, uid_t uid, int first, int second) {
    int g[2], d[2];
    if (pipe(g) != 0 || pipe(d) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(g[1]);
      close(d[0]);
      prctl(PR_SET_NAME, comm.c_str());
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      int fd = open(dev.c_str(), O_RDONLY | O_DIRECT);
      void* buf = nullptr;
      if (fd < 0 || posix_memalign(&buf, 4096, 4096) != 0) _exit(2);
      if (setresuid(uid, uid, uid) != 0) _exit(3);
      char c;
      int n = 0;
      for (int phase = 0; phase < 2; phase++) {
        if (read(g[0], &c, 1) != 1) _exit(4);
        for (int i = 0; i < (phase ? second : first); i++, n++)
          if (pread(fd, buf, 4096, off_t{n} * 64 * 512) != 4096) _exit(5);
        if (write(d[1], "d", 1) != 1) _exit(6);
      }
      _exit(0);
    }
    close(g[0]);
    close(d[1]);
    gate_ = g[1];
    done_ = d[0];
  }
  ~PhasedReader() {
    if (gate_ >= 0) close(gate_);
    if (done_ >= 0) close(done_);
    if (pid_ > 0) wait();
  }
  pid_t pid() const { return pid_; }
  // Runs the next phase and returns once its reads completed.
  bool phase() {
    char c = 'g';
    return write(gate_, &c, 1) == 1 && read(done_, &c, 1) == 1;
  }
  int wait() {
    int st = 0;
    waitpid(pid_, &st, 0);
    pid_ = -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  }

 private:
  pid_t pid_ = -1;
  int gate_ = -1, done_ = -1;
};

std::vector<AggEntry> entries_of(const std::vector<AggEntry>& all, const std::string& comm) {
  std::vector<AggEntry> out;
  for (const auto& e : all)
    if (std::string(e.key.comm.data(), strnlen(e.key.comm.data(), e.key.comm.size())) == comm)
      out.push_back(e);
  return out;
}

// take_aggregates removes what it returns; new I/O of the same key starts
// again from zero; uid and parent come from the kernel, also for a process
// that exited before the map was read.
TEST_F(Capture, TakeAggregatesRemovesEntriesAndKeepsUidAndParent) {
  ASSERT_NO_FATAL_FAILURE(start(64 << 20, aggregate_only));
  constexpr uid_t kUid = 54321;
  PhasedReader child("blkrr-take", dev().path(), kUid, 10, 5);
  ASSERT_GT(child.pid(), 0);
  ASSERT_TRUE(child.phase());

  auto all = cap().aggregates();
  ASSERT_TRUE(all);
  auto mine = entries_of(*all, "blkrr-take");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].key.pid, static_cast<uint32_t>(child.pid()));
  EXPECT_EQ(mine[0].key.tid, static_cast<uint32_t>(child.pid()));
  EXPECT_EQ(mine[0].key.dir, Op::kRead);
  EXPECT_EQ(mine[0].value.requests, 10u);
  EXPECT_EQ(mine[0].value.bytes, 10u * 4096);
  EXPECT_EQ(mine[0].uid, kUid);
  EXPECT_EQ(mine[0].ppid, static_cast<uint32_t>(getpid()));

  auto taken = cap().take_aggregates({mine[0].key});
  ASSERT_TRUE(taken) << taken.error().message;
  ASSERT_EQ(taken->size(), 1u);
  EXPECT_EQ((*taken)[0].value.requests, 10u);
  EXPECT_EQ((*taken)[0].value.disk_time_ns, mine[0].value.disk_time_ns);
  EXPECT_EQ((*taken)[0].uid, kUid);
  all = cap().aggregates();
  ASSERT_TRUE(all);
  EXPECT_TRUE(entries_of(*all, "blkrr-take").empty());
  // Taking a key that is gone returns nothing and is no error.
  auto again = cap().take_aggregates({mine[0].key});
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->empty());

  // Same process, same key: a new entry from zero. The child exits before
  // the map is read: its uid and parent are still right.
  ASSERT_TRUE(child.phase());
  EXPECT_EQ(child.wait(), 0);
  all = cap().aggregates();
  ASSERT_TRUE(all);
  auto after = entries_of(*all, "blkrr-take");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].value.requests, 5u);
  EXPECT_EQ(after[0].value.bytes, 5u * 4096);
  EXPECT_EQ(after[0].uid, kUid);
  EXPECT_EQ(after[0].ppid, static_cast<uint32_t>(getpid()));
  ASSERT_TRUE(cap().stop([](const Request&) {}));
  EXPECT_EQ(cap().counters().at("agg_map_full"), 0u);
}

// Lean capture (replay validator): the exact requests, attributed to the
// child, without device state (disk time 0) or cgroup id.
TEST_F(Capture, LeanCaptureRecordsTheRequestsWithoutDeviceState) {
  ASSERT_NO_FATAL_FAILURE(start(64 << 20, [](CaptureConfig& c) { c.lean = true; }));
  const auto load = make_known_load(3, 20, 0, 100000);
  auto x = IoChild::spawn("blkrr-lean", dev().path(), load);
  ASSERT_TRUE(x);
  const auto child_pid = static_cast<uint32_t>(x->pid());
  x->go();
  ASSERT_EQ(x->wait(), 0);
  auto busy = cap().device_busy();
  const std::vector<Request> got = drain();
  ASSERT_TRUE(busy);
  EXPECT_TRUE(busy->empty());
  std::multiset<std::tuple<uint64_t, uint32_t, int>> want, have;
  for (const auto& t : load)
    for (const auto& op : t) want.insert({op.sector, op.bytes, static_cast<int>(op.op)});
  // Without block_io_start and block_rq_insert (BLKRR_DENY=all) a request is
  // charged to the task current at issue: kblockd's worker when it flushes a
  // plug (docs/kernels.md). Every request is still recorded exactly.
  const bool at_issue = cap().features().at("attribution") == "block_rq_issue";
  for (const auto& r : got) {
    have.insert({r.sector, r.bytes, static_cast<int>(r.op)});
    if (!at_issue || !r.comm_view().starts_with("kworker/")) {
      EXPECT_EQ(r.comm_view(), "blkrr-lean");
      EXPECT_EQ(r.tgid, child_pid);
    }
    EXPECT_EQ(r.dev, dev().dev());
    EXPECT_EQ(r.disk_time_ns, 0u);
    EXPECT_EQ(r.cgroup_id, 0u);
    EXPECT_EQ(r.error, 0);
    if (r.completed()) {
      EXPECT_LE(r.issue_ns, r.complete_ns);
    }
  }
  EXPECT_EQ(have, want);
  EXPECT_EQ(cap().counters().at("ringbuf_reserve_failed"), 0u);
}

// Requests whose completion program the kernel did not run (injected: every
// completion) and whose request is never reused. However this kernel lets
// the capture find them (the checker where map iterators load, else
// block_io_done, else the sysfs idle check; BLKRR_DENY picks the path in
// the test variants), the device is idle again within a few hundred
// milliseconds, long before the 5 s sweeper or the end of the capture.
TEST_F(Capture, LostCompletionsFreeTheDeviceWithinMilliseconds) {
  ASSERT_NO_FATAL_FAILURE(
      start(64 << 20, [](CaptureConfig& c) { c.fault_skip_completion_every = 1; }));
  const std::string path = cap().features().at("lost_completions");
  // 5 threads, 1 request each
  ASSERT_NO_FATAL_FAILURE(run("blkrr-check", make_known_load(5, 1, 0, 100000)));
  std::vector<Request> got;
  auto fn = [&](const Request& r) { got.push_back(r); };
  const uint64_t t0 = mono_ns();
  uint64_t pending = 1;
  while ((got.size() < 5 || pending) && mono_ns() - t0 < 3'000'000'000ull) {
    ASSERT_TRUE(cap().poll(20, fn));
    auto busy = cap().device_busy();
    ASSERT_TRUE(busy);
    ASSERT_EQ(busy->size(), 1u);
    pending = (*busy)[0].pending;
  }
  const double found_ms = (mono_ns() - t0) / 1e6;
  const Counters c = cap().counters();
  std::printf(
      "[measured] lost completions (%s): %zu requests, device idle %.0f ms after the I/O "
      "ended (checker %llu, io_done %llu, idle check %llu, re-use %llu)\n",
      path.c_str(), got.size(), found_ms, (unsigned long long)c.at("completion_not_seen_checked"),
      (unsigned long long)c.at("completion_from_io_done"),
      (unsigned long long)c.at("completion_not_seen_idle"),
      (unsigned long long)c.at("completion_not_seen_reissued"));
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(pending, 0u) << "the device is idle again";
  EXPECT_LT(found_ms, 1000.0) << "the 5 s sweeper must not be what frees the device";
  EXPECT_EQ(c.at("fault_skipped_completions"), 5u);
  EXPECT_EQ(c.at("inflight_swept"), 0u);
  EXPECT_EQ(c.at("completion_from_io_done"), 0u) << "the whole completion was lost";
  for (const auto& r : got) {
    EXPECT_EQ(r.comm_view(), "blkrr-check");
    EXPECT_FALSE(r.completed());
    EXPECT_TRUE(r.rec_flags & kRecCompletionNotSeen);
  }
  // The last request's rq is never reused: only the check can find it.
  const char* found =
      path == "checker (map iterator)" ? "completion_not_seen_checked" : "completion_not_seen_idle";
  EXPECT_GE(c.at(found), 1u);
  EXPECT_EQ(c.at(found) + c.at("completion_not_seen_reissued"), 5u);
  ASSERT_TRUE(cap().stop(fn));
  EXPECT_EQ(got.size(), 5u) << "nothing left in flight at stop";
}

// Where the checker cannot run, block_io_done is a second completion
// source: a request whose block_rq_complete the kernel skipped (injected:
// block_rq_complete alone, every request) still completes, with its end
// time and disk time, and the device is idle at once.
TEST_F(Capture, IoDoneCompletesRequestsWhoseCompletionTracepointWasSkipped) {
  ASSERT_NO_FATAL_FAILURE(start(64 << 20, [](CaptureConfig& c) {
    c.fault_skip_completion_every = 1;
    c.fault_whole = false;
    c.io_done_fallback = true;
  }));
  if (cap().features().at("lost_completions") != "block_io_done + sysfs idle check")
    GTEST_SKIP() << "this capture does not load block_io_done ("
                 << cap().features().at("lost_completions")
                 << "); the BLKRR_DENY=iter variant runs it where the kernel has it";
  ASSERT_NO_FATAL_FAILURE(run("blkrr-iodone", make_known_load(4, 5, 0, 100000)));
  std::vector<Request> got;
  auto fn = [&](const Request& r) { got.push_back(r); };
  const uint64_t t0 = mono_ns();
  while (got.size() < 20 && mono_ns() - t0 < 2'000'000'000ull) ASSERT_TRUE(cap().poll(20, fn));
  auto busy = cap().device_busy();
  ASSERT_TRUE(busy);
  const Counters c = cap().counters();
  ASSERT_EQ(got.size(), 20u);
  EXPECT_EQ(c.at("fault_skipped_completions"), 20u);
  EXPECT_EQ(c.at("completion_from_io_done"), 20u);
  EXPECT_EQ(c.at("completions"), 20u);
  for (const auto& r : got) {
    EXPECT_TRUE(r.completed());
    EXPECT_FALSE(r.rec_flags & kRecCompletionNotSeen);
    EXPECT_LT(r.issue_ns, r.complete_ns);
    EXPECT_GT(r.disk_time_ns, 0u);
  }
  ASSERT_EQ(busy->size(), 1u);
  EXPECT_EQ((*busy)[0].pending, 0u);
  EXPECT_EQ((*busy)[0].requests, 20u);
  ASSERT_TRUE(cap().stop(fn));
}

// A load that fails with the optional programs is retried once without
// them: provoked by pretending (BLKRR_ASSUME=iter) that a kernel which
// denies map iterators has them, so that the checker is planned and refused.
TEST_F(Capture, FailedLoadIsRetriedWithoutTheOptionalPrograms) {
  auto real = capture::features();
  ASSERT_TRUE(real) << real.error().message;
  if (real->kernel.map_iter.ok)
    GTEST_SKIP() << "this kernel loads map iterators: nothing to provoke the retry with";
  if (real->denies("iter"))
    GTEST_SKIP() << "BLKRR_DENY=iter: the checker is not planned, so nothing fails to load";
  setenv("BLKRR_ASSUME", "iter", 1);
  start(64 << 20);
  unsetenv("BLKRR_ASSUME");
  if (HasFatalFailure()) return;
  EXPECT_EQ(cap().counters().at("load_retried_without_optional"), 1u);
  auto f = cap().features();
  EXPECT_EQ(f.at("optional_programs"), "off after a failed load");
  EXPECT_EQ(f.at("attribution"), "block_rq_issue");
  EXPECT_EQ(f.at("lost_completions"), "sysfs idle check");
  // And it records: 8 requests of a child, exactly.
  ASSERT_NO_FATAL_FAILURE(run("blkrr-retry", make_known_load(2, 4, 0, 100000)));
  size_t n = 0;
  for (const auto& r : drain()) n += r.comm_view() == "blkrr-retry";
  EXPECT_EQ(n, 8u);
}

}  // namespace
}  // namespace blkrr::testing
