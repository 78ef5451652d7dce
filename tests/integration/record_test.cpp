// blkrr record end to end, as root on loop devices over /dev/shm: exact
// requests and attribution, device filter, pid filter with disk time over all
// requests, and a recorder killed with SIGKILL.
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <map>
#include <optional>
#include <thread>
#include <tuple>

#include "tests/integration/test_capture_skip.h"
#include "capture/capture.h"
#include "core/disktime.h"
#include "core/trace_format.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"

namespace blkrr::testing {
namespace {

constexpr const char* kChildComm = "blkrr-io-child";
constexpr const char* kReady = "Ctrl-C stops";

struct Trace {
  TraceHeader header;
  std::vector<Request> reqs;
  std::optional<Counters> trailer;
  std::string warning;
};

Result<Trace> read_trace(const std::string& path) {
  auto rd = TraceReader::open(path);
  if (!rd) return rd.error();
  Trace t;
  t.header = rd->header();
  Request r;
  while (true) {
    auto n = rd->next(r);
    if (!n) return n.error();
    if (!*n) break;
    t.reqs.push_back(r);
  }
  t.trailer = rd->trailer();
  t.warning = rd->warning();
  return t;
}

using Key = std::tuple<uint64_t, uint32_t, int>;  // sector, bytes, op
std::multiset<Key> expected_keys(const std::vector<std::vector<IoOp>>& load) {
  std::multiset<Key> s;
  for (const auto& t : load)
    for (const auto& op : t) s.insert({op.sector, op.bytes, static_cast<int>(op.op)});
  return s;
}
Key key_of(const Request& r) {
  return {r.sector, r.bytes, static_cast<int>(r.op)};
}

uint64_t counter(const Counters& c, const std::string& name) {
  auto it = c.find(name);
  return it == c.end() ? 0 : it->second;
}

uint64_t busy_union(const std::vector<Request>& reqs, DevT dev) {
  std::vector<Interval> iv;
  for (const auto& r : reqs)
    if (r.dev == dev && r.completed()) iv.push_back({r.issue_ns, r.complete_ns});
  return union_length(iv);
}

std::string tmp_trace(const std::string& tag) {
  return "/tmp/blkrr-record-test-" + tag + "-" + std::to_string(getpid()) + ".blkrr";
}

uint64_t lost_completions(const Trace& t) {
  uint64_t n = 0;
  for (const auto& r : t.reqs) n += r.completed() ? 0 : 1;
  return n;
}

// Records not-seen completions must be counted, never silent. The re-use
// and checker counters count every request of the disk, also those a task
// filter leaves out of the trace: with a filter they bound the flagged ones.
void expect_not_seen_counted(const Trace& t, bool task_filter = false) {
  uint64_t flagged = 0;
  for (const auto& r : t.reqs) flagged += r.completed() ? 0 : 1;
  ASSERT_TRUE(t.trailer.has_value());
  const Counters& c = *t.trailer;
  const uint64_t counted =
      counter(c, "completion_not_seen_reissued") + counter(c, "completion_not_seen_checked") +
      counter(c, "completion_not_seen_idle_emitted") + counter(c, "completion_not_seen_swept") +
      counter(c, "completion_not_seen_at_stop");
  if (task_filter) {
    EXPECT_LE(flagged, counted);
  } else {
    EXPECT_EQ(flagged, counted);
  }
}

TEST(Record, ExactRequestsAttributedToTheChildAndOtherDeviceFilteredOut) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(256 << 20);
  ASSERT_TRUE(a) << a.error().message;
  auto b = LoopDevice::create(64 << 20);
  ASSERT_TRUE(b) << b.error().message;
  const auto load = make_known_load(4, 16, 2048, 400000);
  const auto other = make_known_load(2, 8, 0, 100000);
  const std::string out = tmp_trace("exact");

  auto rec = BlkrrProcess::start({"record", "-d", a->path(), "-o", out}, kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  auto child = IoChild::spawn(kChildComm, a->path(), load);
  ASSERT_TRUE(child);
  auto noise = IoChild::spawn("blkrr-io-other", b->path(), other);
  ASSERT_TRUE(noise);
  const pid_t cpid = child->pid();
  child->go();
  noise->go();
  ASSERT_EQ(child->wait(), 0);
  ASSERT_EQ(noise->wait(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();

  auto t = read_trace(out);
  ASSERT_TRUE(t) << t.error().message;
  unlink(out.c_str());
  EXPECT_TRUE(t->warning.empty()) << t->warning;
  ASSERT_TRUE(t->trailer.has_value());
  EXPECT_EQ(counter(*t->trailer, "ringbuf_reserve_failed"), 0u);
  expect_not_seen_counted(*t);

  std::multiset<Key> got;
  for (const auto& r : t->reqs) {
    EXPECT_EQ(r.dev, a->dev()) << "request of another device recorded";
    EXPECT_EQ(r.part, a->dev());
    EXPECT_EQ(r.tgid, static_cast<uint32_t>(cpid));
    EXPECT_EQ(r.comm_view(), kChildComm);
    if (r.completed()) {
      EXPECT_LE(r.issue_ns, r.complete_ns);
    }
    got.insert(key_of(r));
  }
  EXPECT_EQ(got, expected_keys(load));
  EXPECT_EQ(t->reqs.size(), 64u);

  // Disk time, computed by record in user space from the records' own
  // timestamps (no task filter: the kernel keeps no device state): the sum of
  // the charges is exactly the union of the records' in-flight intervals, and
  // so is the device total in the trailer. Records whose completion was lost
  // carry 0 and are not in the union.
  EXPECT_EQ(counter(*t->trailer, "disk_time_in_user_space"), 1u);
  uint64_t sum = 0;
  for (const auto& r : t->reqs) {
    sum += r.disk_time_ns;
    if (!r.completed()) {
      EXPECT_EQ(r.disk_time_ns, 0u);
    }
  }
  const uint64_t uni = busy_union(t->reqs, a->dev());
  ASSERT_GT(uni, 0u);
  EXPECT_EQ(sum, uni);
  EXPECT_EQ(counter(*t->trailer, "device_busy_ns." + dev_to_string(a->dev())), uni);
  // The header describes the device.
  ASSERT_EQ(t->header.devices.size(), 1u);
  EXPECT_EQ(t->header.devices[0].dev, a->dev());
  EXPECT_EQ(t->header.devices[0].size_bytes, 256u << 20);
  EXPECT_GT(t->header.mono_anchor_ns, 0u);
  EXPECT_GT(t->header.real_anchor_ns, t->header.mono_anchor_ns);
}

// The kernel sometimes does not run the completion program of a request
// (injected here: every 5th completion). The trace still holds every
// request, those without completion flagged and counted; the ones left at the
// end on the idle disk are known to be lost, not in flight.
TEST(Record, SkippedCompletionsKeepEveryRequestFlaggedAndCounted) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(64 << 20);
  ASSERT_TRUE(a) << a.error().message;
  const auto load = make_known_load(4, 16, 2048, 100000);
  const std::string out = tmp_trace("skip");
  std::optional<BlkrrProcess> rec;
  {
    ScopedEnv fault("BLKRR_FAULT_SKIP_COMPLETION", "5");
    auto r = BlkrrProcess::start({"record", "-d", a->path(), "-o", out}, kReady);
    ASSERT_TRUE(r) << r.error().message;
    rec.emplace(std::move(*r));
  }
  auto child = IoChild::spawn(kChildComm, a->path(), load);
  ASSERT_TRUE(child);
  const auto cpid = static_cast<uint32_t>(child->pid());
  child->go();
  ASSERT_EQ(child->wait(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  EXPECT_NE(rec->output().find("fault_skipped_completions="), std::string::npos) << rec->output();

  auto t = read_trace(out);
  ASSERT_TRUE(t) << t.error().message;
  unlink(out.c_str());
  ASSERT_TRUE(t->trailer.has_value());
  const Counters& c = *t->trailer;
  std::multiset<Key> got;
  for (const auto& r : t->reqs)
    if (r.tgid == cpid) got.insert(key_of(r));
  EXPECT_EQ(got, expected_keys(load)) << "every request is in the trace";
  expect_not_seen_counted(*t);
  const uint64_t injected = counter(c, "fault_skipped_completions");
  EXPECT_GE(injected, 12u);  // 64 completions: the 5th, 10th... 60th
  // Every skipped completion leaves a flagged record (a real skip by the
  // kernel adds one).
  EXPECT_GE(lost_completions(*t), injected);
  EXPECT_LE(lost_completions(*t), injected + 2);
  for (const auto& r : t->reqs)
    if (!r.completed()) {
      EXPECT_TRUE(r.rec_flags & kRecCompletionNotSeen);
    }
  // The disk was idle at stop: the leftovers are lost completions.
  EXPECT_EQ(counter(c, "completion_not_seen_at_stop_disk_idle"),
            counter(c, "completion_not_seen_at_stop"));
}

// -d loopNp2: the whole disk with p2's sector range; records carry the disk
// and the partition; p1's I/O stays out; the disk time is the disk's.
TEST(Record, PartitionIsRecordedAsWholeDiskAndSectorRange) {
  SKIP_UNLESS_CAPTURE();
  // p1: sectors 2048..+100000, p2: 104448..+200000
  auto a = LoopDevice::create_partitioned(256 << 20, {{2048, 100000}, {104448, 200000}});
  ASSERT_TRUE(a) << a.error().message;
  const std::string p1 = a->path() + "p1", p2 = a->path() + "p2";
  for (int i = 0; i < 100 && access(p2.c_str(), F_OK) != 0; i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (access(p2.c_str(), F_OK) != 0)
    GTEST_SKIP() << "partition " << p2 << " did not appear: this kernel reads no MBR "
                 << "partition tables (CONFIG_MSDOS_PARTITION off)";
  const auto load2 = make_known_load(2, 12, 0, 190000);  // sectors relative to p2
  const auto load1 = make_known_load(2, 12, 0, 90000);
  const std::string out = tmp_trace("part");
  auto rec = BlkrrProcess::start({"record", "-d", a->name() + "p2", "-o", out}, kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  auto c2 = IoChild::spawn(kChildComm, p2, load2);
  auto c1 = IoChild::spawn("blkrr-io-other", p1, load1);
  ASSERT_TRUE(c1 && c2);
  c1->go();
  c2->go();
  ASSERT_EQ(c2->wait(), 0);
  ASSERT_EQ(c1->wait(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  auto t = read_trace(out);
  unlink(out.c_str());
  ASSERT_TRUE(t) << t.error().message;
  std::multiset<Key> want;
  for (const auto& th : load2)
    for (const auto& op : th) want.insert({op.sector + 104448, op.bytes, static_cast<int>(op.op)});
  std::multiset<Key> got;
  DevT p2dev = 0;
  for (const auto& r : t->reqs) {
    EXPECT_EQ(r.dev, a->dev());
    EXPECT_NE(r.part, a->dev());
    if (!p2dev) p2dev = r.part;
    EXPECT_EQ(r.part, p2dev);
    EXPECT_EQ(r.comm_view(), kChildComm);
    got.insert(key_of(r));
  }
  EXPECT_EQ(got, want);
  struct stat st {};
  ASSERT_EQ(stat(p2.c_str(), &st), 0);
  EXPECT_EQ(p2dev, make_dev(major(st.st_rdev), minor(st.st_rdev)));
  // The kernel's device total covers p1's requests too: more than p2's union.
  const uint64_t busy = counter(*t->trailer, "device_busy_ns." + dev_to_string(a->dev()));
  EXPECT_GT(busy, busy_union(t->reqs, a->dev()));
}

TEST(Record, PidFilterKeepsDiskTimeComputedOverAllRequests) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(256 << 20);
  ASSERT_TRUE(a) << a.error().message;
  // 960 requests each: the two recorders' programs stamp each event one after
  // the other, and a preemption between them (tens of µs on a loaded machine)
  // must stay well under 1 % of the busy time compared.
  const auto load_x = make_known_load(4, 240, 0, 200000);
  const auto load_y = make_known_load(4, 240, 200000, 200000);
  auto x = IoChild::spawn(kChildComm, a->path(), load_x);
  ASSERT_TRUE(x);
  auto y = IoChild::spawn("blkrr-io-other", a->path(), load_y);
  ASSERT_TRUE(y);
  const std::string out_x = tmp_trace("pid"), out_all = tmp_trace("all");
  auto rx = BlkrrProcess::start(
      {"record", "-d", a->path(), "-p", std::to_string(x->pid()), "-o", out_x}, kReady);
  ASSERT_TRUE(rx) << rx.error().message;
  auto rall = BlkrrProcess::start({"record", "-d", a->name(), "-o", out_all}, kReady);
  ASSERT_TRUE(rall) << rall.error().message;
  const pid_t xpid = x->pid(), ypid = y->pid();
  x->go();
  y->go();
  ASSERT_EQ(x->wait(), 0);
  ASSERT_EQ(y->wait(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  rx->signal(SIGTERM);
  rall->signal(SIGINT);
  ASSERT_EQ(rx->wait(), 0) << rx->output();
  ASSERT_EQ(rall->wait(), 0) << rall->output();
  auto tx = read_trace(out_x);
  auto tall = read_trace(out_all);
  unlink(out_x.c_str());
  unlink(out_all.c_str());
  ASSERT_TRUE(tx) << tx.error().message;
  ASSERT_TRUE(tall) << tall.error().message;
  expect_not_seen_counted(*tx, /*task_filter=*/true);
  expect_not_seen_counted(*tall);

  // The filtered trace holds exactly X's requests.
  std::multiset<Key> got_x;
  for (const auto& r : tx->reqs) {
    EXPECT_EQ(r.tgid, static_cast<uint32_t>(xpid));
    got_x.insert(key_of(r));
  }
  EXPECT_EQ(got_x, expected_keys(load_x));
  uint64_t n_y = 0;
  for (const auto& r : tall->reqs) n_y += r.tgid == static_cast<uint32_t>(ypid);
  EXPECT_EQ(n_y, 960u);

  // The device's busy time in the filtered recording is that of all requests.
  // Exact comparisons need both captures to have seen every event: a program
  // the kernel skipped (recursion miss, e.g. an issue nested in an interrupt
  // on a CPU already running it) leaves one capture without a request that
  // is invisible in the filtered trace's records.
  const auto skipped = [](const Trace& t) {
    return lost_completions(t) + counter(*t.trailer, "prog_recursion_misses") +
           counter(*t.trailer, "completion_without_issue");
  };
  if (skipped(*tx) != 0 || skipped(*tall) != 0) {
    std::printf("[note] skipped events (filtered %llu, full %llu): no exact comparison\n",
                static_cast<unsigned long long>(skipped(*tx)),
                static_cast<unsigned long long>(skipped(*tall)));
    return;
  }
  const uint64_t uni_all = busy_union(tall->reqs, a->dev());
  const uint64_t busy_x = counter(*tx->trailer, "device_busy_ns." + dev_to_string(a->dev()));
  {
    EXPECT_NEAR(static_cast<double>(busy_x), static_cast<double>(uni_all),
                0.01 * static_cast<double>(uni_all));
  }
  // X's charges in the filtered trace equal X's charges in the full one,
  // within 5 %: the filtered recorder charges in the kernel, the full one
  // (no filter) in user space from its own records' timestamps, and the two
  // captures stamp each event a few microseconds apart, which on this loop
  // device (requests of tens of microseconds, 8 threads) moves part of an
  // interval between X and Y. Measured: 2.2 % and 2.8 % apart in two runs;
  // the totals above agree within 1 %.
  uint64_t dt_x_filtered = 0, dt_x_full = 0;
  std::vector<Interval> x_iv;
  for (const auto& r : tx->reqs) dt_x_filtered += r.disk_time_ns;
  for (const auto& r : tall->reqs)
    if (r.tgid == static_cast<uint32_t>(xpid)) {
      dt_x_full += r.disk_time_ns;
      if (r.completed()) x_iv.push_back({r.issue_ns, r.complete_ns});
    }
  EXPECT_NEAR(static_cast<double>(dt_x_filtered), static_cast<double>(dt_x_full),
              0.05 * static_cast<double>(dt_x_full));
  // A computation over X's requests only would give exactly X's busy union;
  // whenever Y's requests moved X's full-trace charges away from that union,
  // the filtered recording must have moved with them.
  const double ux = static_cast<double>(union_length(x_iv));
  if (std::abs(static_cast<double>(dt_x_full) - ux) > 0.05 * ux) {
    EXPECT_GT(std::abs(static_cast<double>(dt_x_filtered) - ux), 0.03 * ux);
  }
}

TEST(Record, SigkillLeavesAReadableTrace) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(128 << 20);
  ASSERT_TRUE(a) << a.error().message;
  const auto load = make_known_load(2, 16, 0, 200000);
  const std::string out = tmp_trace("kill");
  auto rec = BlkrrProcess::start({"record", "-d", a->path(), "-o", out}, kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  auto child = IoChild::spawn(kChildComm, a->path(), load, /*repeat_for_ms=*/3000);
  ASSERT_TRUE(child);
  child->go();
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  rec->signal(SIGKILL);
  EXPECT_EQ(rec->wait(), 128 + SIGKILL);
  ASSERT_EQ(child->wait(), 0);
  auto t = read_trace(out);
  unlink(out.c_str());
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_FALSE(t->trailer.has_value());
  // At least one block was flushed (every second) before the kill.
  ASSERT_GT(t->reqs.size(), 0u);
  for (const auto& r : t->reqs) {
    EXPECT_EQ(r.dev, a->dev());
    EXPECT_EQ(r.comm_view(), kChildComm);
  }
}

// A small tmpfs to fill up.
struct TinyFs {
  std::string dir;
  bool mounted = false;
  explicit TinyFs(const std::string& size) {
    char tmpl[] = "/tmp/blkrr-full-XXXXXX";
    if (!mkdtemp(tmpl)) return;
    dir = tmpl;
    mounted = mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
  }
  ~TinyFs() {
    if (mounted) umount2(dir.c_str(), MNT_DETACH);
    if (!dir.empty()) rmdir(dir.c_str());
  }
};

TEST(Record, DiskFullKeepsWhatWasFlushed) {
  SKIP_UNLESS_CAPTURE();
  TinyFs fs("96k");
  ASSERT_TRUE(fs.mounted) << "cannot mount a tmpfs on " << fs.dir;
  auto a = LoopDevice::create(128 << 20);
  ASSERT_TRUE(a) << a.error().message;
  const std::string out = fs.dir + "/full.blkrr";
  auto rec = BlkrrProcess::start({"record", "-d", a->path(), "-o", out, "-D", "20"}, kReady);
  ASSERT_TRUE(rec) << rec.error().message;
  // ~15 bytes/request uncompressed-ish random load: 96 KiB fill up quickly.
  auto child = IoChild::spawn(kChildComm, a->path(), make_known_load(4, 64, 0, 250000),
                              /*repeat_for_ms=*/6000);
  ASSERT_TRUE(child);
  child->go();
  const int st = rec->wait();
  child->wait();
  EXPECT_EQ(st, 1) << rec->output();
  EXPECT_NE(rec->output().find("No space left on device"), std::string::npos) << rec->output();
  EXPECT_NE(rec->output().find("keeps what was flushed"), std::string::npos) << rec->output();
  auto t = read_trace(out);
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_GT(t->reqs.size(), 0u);
  for (const auto& r : t->reqs) EXPECT_EQ(r.dev, a->dev());
  unlink(out.c_str());
}

TEST(Record, ClearErrors) {
  SKIP_UNLESS_CAPTURE();
  // Not root: a clear message before anything is loaded.
  if (access("/usr/bin/setpriv", X_OK) == 0) {
    std::string cmd = std::string("/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ") +
                      "--inh-caps=-all " + BLKRR_BINARY + " record -D 1 -o /tmp/never.blkrr 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[512];
    while (fgets(buf, sizeof(buf), p)) out += buf;
    int st = pclose(p);
    EXPECT_NE(st, 0);
    EXPECT_NE(out.find("needs root"), std::string::npos) << out;
    EXPECT_NE(access("/tmp/never.blkrr", F_OK), 0);
  }

  auto unknown = BlkrrProcess::start({"record", "-d", "nosuchdisk0", "-D", "1"}, "blkrr record:");
  ASSERT_TRUE(unknown) << unknown.error().message;
  EXPECT_NE(unknown->wait(), 0);
  EXPECT_NE(unknown->output().find("nosuchdisk0"), std::string::npos) << unknown->output();

  auto a = LoopDevice::create(16 << 20);
  ASSERT_TRUE(a);
  auto unwritable = BlkrrProcess::start(
      {"record", "-d", a->path(), "-D", "1", "-o", "/proc/blkrr-cannot-write/x.blkrr"},
      "blkrr record:");
  ASSERT_TRUE(unwritable) << unwritable.error().message;
  EXPECT_NE(unwritable->wait(), 0);
  EXPECT_NE(unwritable->output().find("/proc/blkrr-cannot-write does not exist"), std::string::npos)
      << unwritable->output();
}

}  // namespace
}  // namespace blkrr::testing
