// blkrr record --ring, as root on loop devices: the window written twice on
// SIGUSR1, once by a request hung in the device (--trigger-latency) and once
// by a busy second (--trigger-util). A request is made slow in the device
// itself by a loop device over a file of a FUSE file system that delays
// (slow_fuse.c). Each window is compared with a plain recording of the same
// device taken at the same time: exactly its requests issued in the window.
#include <dirent.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/rotation.h"
#include "core/trace_format.h"
#include "tests/integration/test_capture_skip.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"

namespace blkrr::testing {
namespace {

constexpr const char* kReady = "Ctrl-C stops";
constexpr uint64_t kSlowFromMib = 48;  // of a 64 MiB device
constexpr uint64_t kSlowSector = kSlowFromMib << 11;

// Two recorders stamp the same request a microsecond apart (each program
// reads the clock): requests are compared by place and size.
using Key = std::tuple<uint64_t, uint32_t>;  // sector, bytes

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// A scratch directory; with a delaying FUSE file system mounted on dir/mnt
// and a loop device over its file when slow_ms is given.
struct Scratch {
  std::string dir, mnt, loop;
  pid_t fuse = -1;
  explicit Scratch(int slow_ms = -1) {
    char t[] = "/tmp/blkrr-flight-XXXXXX";
    dir = mkdtemp(t) ? t : "";
    if (slow_ms < 0) return;
    mnt = dir + "/mnt";
    mkdir(mnt.c_str(), 0700);
    fuse = fork();
    if (fuse == 0) {
      const std::string delay = std::to_string(slow_ms), from = std::to_string(kSlowFromMib);
      execl(SLOW_FUSE, "slow_fuse", mnt.c_str(), "64", from.c_str(), delay.c_str(), nullptr);
      _exit(127);
    }
    struct stat st;
    for (int i = 0; i < 100 && ::stat((mnt + "/disk").c_str(), &st) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    loop = run("losetup -f --show " + mnt + "/disk 2>&1");
    if (loop.rfind("/dev/loop", 0) != 0) loop.clear();
  }
  ~Scratch() {
    if (!loop.empty()) run("losetup -d " + loop);
    if (fuse > 0) {
      umount2(mnt.c_str(), MNT_DETACH);
      kill(fuse, SIGTERM);
      waitpid(fuse, nullptr, 0);
      rmdir(mnt.c_str());
    }
    for (const auto& f : list()) unlink((dir + "/" + f).c_str());
    rmdir(dir.c_str());
  }
  std::vector<std::string> list() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d))
        if (e->d_name[0] != '.' && std::string(e->d_name) != "mnt") out.push_back(e->d_name);
      closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  // The windows written so far (whole files only: they appear by rename).
  std::vector<std::string> dumps() const {
    std::vector<std::string> out;
    for (const auto& f : list())
      if (parse_piece_file_name("rec.ring", f)) out.push_back(dir + "/" + f);
    return out;
  }
  bool wait_dumps(size_t n, int timeout_ms) const {
    for (int i = 0; i < timeout_ms / 50 && dumps().size() < n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return dumps().size() >= n;
  }
};

struct Trace {
  TraceHeader header;
  std::vector<Request> reqs;
  Counters trailer;
};

Trace read_trace(const std::string& path) {
  Trace t;
  auto rd = TraceReader::open(path);
  EXPECT_TRUE(rd) << rd.error().message;
  if (!rd) return t;
  t.header = rd->header();
  Request r;
  for (;;) {
    auto n = rd->next(r);
    EXPECT_TRUE(n) << n.error().message;
    if (!n || !*n) break;
    t.reqs.push_back(r);
  }
  if (rd->trailer()) t.trailer = *rd->trailer();
  return t;
}

uint64_t setting(const Trace& t, const std::string& k) {
  auto it = t.header.settings.find(k);
  return it == t.header.settings.end() ? 0 : std::stoull(it->second);
}

// The window holds exactly the plain recording's requests issued in it (the
// loads leave no request within a millisecond of a window's edges).
std::multiset<Key> check_window(const Trace& dump, const Trace& full) {
  const uint64_t start = setting(dump, "dump.window_start_ns");
  const uint64_t end = setting(dump, "dump.window_end_ns");
  EXPECT_LT(start, end);
  std::multiset<Key> got, want;
  for (const auto& r : dump.reqs) {
    got.insert({r.sector, r.bytes});
    EXPECT_GE(r.issue_ns, start);
    EXPECT_LT(r.issue_ns, end);
  }
  for (const auto& r : full.reqs)
    if (r.issue_ns >= start && r.issue_ns < end) want.insert({r.sector, r.bytes});
  EXPECT_EQ(got, want);
  EXPECT_EQ(dump.trailer.at("records_written"), dump.reqs.size());
  std::printf("[measured] window %s: %zu requests over %.3f s\n",
              dump.header.settings.at("dump.trigger").c_str(), got.size(), (end - start) / 1e9);
  return got;
}

std::set<uint64_t> sectors(const Trace& t) {
  std::set<uint64_t> s;
  for (const auto& r : t.reqs) s.insert(r.sector);
  return s;
}

// One batch of distinct fast requests from first_sector on, `threads` at
// once, each doing per_thread one after the other; their sectors.
std::set<uint64_t> batch(const std::string& dev, uint64_t first_sector, int threads = 2,
                         int per_thread = 4) {
  return run_known_batch("blkrr-io-ring", dev, first_sector, threads, per_thread);
}

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// A plain recording of `devs` into dir/full.blkrr (the reference) and the
// flight recorder into dir/rec with `ring_args`, both started.
struct Recorders {
  std::optional<BlkrrProcess> full, ring;
  std::string dir, error;
  Recorders(const std::vector<std::string>& devs, const std::string& d,
            const std::vector<std::string>& ring_args)
      : dir(d) {
    std::vector<std::string> plain = {"record"};
    for (const auto& dev : devs) plain.insert(plain.end(), {"-d", dev});
    std::vector<std::string> flight = plain;
    plain.insert(plain.end(), {"-o", dir + "/full.blkrr"});
    flight.insert(flight.end(), {"-o", dir + "/rec"});
    flight.insert(flight.end(), ring_args.begin(), ring_args.end());
    auto f = BlkrrProcess::start(plain, kReady);
    if (!f) {
      error = f.error().message;
      return;
    }
    full.emplace(std::move(*f));
    auto r = BlkrrProcess::start(flight, kReady);
    if (!r) {
      error = r.error().message;
      return;
    }
    ring.emplace(std::move(*r));
  }
  // Stops both, the flight recorder first; the plain recording, read.
  Trace stop() {
    ring->signal(SIGINT);
    EXPECT_EQ(ring->wait(), 0) << ring->output();
    full->signal(SIGINT);
    EXPECT_EQ(full->wait(), 0) << full->output();
    return read_trace(dir + "/full.blkrr");
  }
};

// Every file of a directory, hidden ones (a window's temporary) too.
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string n = e->d_name; n != "." && n != "..") out.push_back(n);
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The slow request's issue in the plain recording (a microsecond from the
// ring's own stamp of it).
const Request* find_sector(const Trace& t, uint64_t sector) {
  for (const auto& r : t.reqs)
    if (r.sector == sector) return &r;
  return nullptr;
}

TEST(RecordFlight, TriggersInsideTheHoldoffAreCountedAndWriteNothing) {
  SKIP_UNLESS_CAPTURE();
  Scratch s(1500);
  ASSERT_FALSE(s.loop.empty()) << "no loop device over the FUSE file";
  Recorders rec({s.loop}, s.dir,
                {"--ring", "3s", "--trigger-latency", "1s", "--post", "500ms", "--holdoff", "3s"});
  ASSERT_TRUE(rec.ring) << rec.error;
  auto slow = [&](uint64_t sector) {
    auto c = IoChild::spawn("blkrr-io-slow", s.loop, {{{Op::kRead, sector, 4096}}});
    ASSERT_TRUE(c);
    c->go();
    ASSERT_EQ(c->wait(), 0);
  };
  // Each slow request fires once in flight (after 1 s) and once more by its
  // completion (1.5 s): the first fires a window, the completion of the same
  // request is held off; the second, issued 1.5 s after the first, fires
  // inside the 3-s holdoff twice (held off); the third, issued 4.5 s after
  // the first, writes the second window, its completion held off.
  slow(kSlowSector);        // 0 .. 1.5 s
  slow(kSlowSector + 800);  // 1.5 .. 3 s
  sleep_ms(1500);
  slow(kSlowSector + 1600);  // 4.5 .. 6 s
  ASSERT_TRUE(s.wait_dumps(2, 10000));
  sleep_ms(500);
  const Trace all = rec.stop();
  const auto dumps = s.dumps();
  ASSERT_EQ(dumps.size(), 2u) << rec.ring->output();
  const Trace d1 = read_trace(dumps[0]), d2 = read_trace(dumps[1]);
  const Request* r1 = find_sector(all, kSlowSector);
  const Request* r3 = find_sector(all, kSlowSector + 1600);
  ASSERT_TRUE(r1 && r3);
  EXPECT_NEAR(static_cast<double>(setting(d1, "dump.time_ns")), r1->issue_ns + 1e9, 1e6);
  EXPECT_NEAR(static_cast<double>(setting(d2, "dump.time_ns")), r3->issue_ns + 1e9, 1e6);
  check_window(d1, all);
  check_window(d2, all);
  EXPECT_EQ(d2.trailer.at("triggers_held_off"), 4u);
  EXPECT_NE(rec.ring->output().find(" 4 triggers held off"), std::string::npos)
      << rec.ring->output();
}

TEST(RecordFlight, ACompletedSlowRequestFiresTheLatencyTrigger) {
  SKIP_UNLESS_CAPTURE();
  // A request hung 4 s on one device stays the oldest in flight (its own
  // trigger fired): a request of 1.5 s on another device is seen only when
  // it completes.
  Scratch hang(4000), slow(1500);
  ASSERT_FALSE(hang.loop.empty() || slow.loop.empty()) << "no loop device over the FUSE file";
  Recorders rec(
      {hang.loop, slow.loop}, hang.dir,
      {"--ring", "3s", "--trigger-latency", "1s", "--post", "500ms", "--holdoff", "200ms"});
  ASSERT_TRUE(rec.ring) << rec.error;
  auto h = IoChild::spawn("blkrr-io-hang", hang.loop, {{{Op::kRead, kSlowSector, 4096}}});
  ASSERT_TRUE(h);
  h->go();
  sleep_ms(1500);
  auto c = IoChild::spawn("blkrr-io-slow", slow.loop, {{{Op::kRead, kSlowSector + 8, 4096}}});
  ASSERT_TRUE(c);
  c->go();
  ASSERT_EQ(c->wait(), 0);
  ASSERT_EQ(h->wait(), 0);
  ASSERT_TRUE(hang.wait_dumps(2, 10000));
  sleep_ms(500);
  const Trace all = rec.stop();
  const auto dumps = hang.dumps();
  ASSERT_EQ(dumps.size(), 2u) << rec.ring->output();
  const Trace d = read_trace(dumps[1]);
  const Request* r = find_sector(all, kSlowSector + 8);
  ASSERT_NE(r, nullptr);
  EXPECT_GE(r->latency_ns(), 1'400'000'000u);
  EXPECT_EQ(d.header.settings.at("dump.trigger"), "latency");
  const std::string by = d.header.settings.at("dump.fired_by");
  EXPECT_EQ(by.find("still in flight"), std::string::npos) << by;
  EXPECT_NE(by.find("read 4096 B at sector " + std::to_string(kSlowSector + 8)), std::string::npos)
      << by;
  EXPECT_NE(by.find("blkrr-io-slow"), std::string::npos) << by;
  EXPECT_NEAR(static_cast<double>(setting(d, "dump.time_ns")), r->issue_ns + 1e9, 1e6);
  check_window(d, all);
  EXPECT_TRUE(sectors(d).count(kSlowSector + 8));
  // The hung request's completion (its time 1.5 s before the second
  // trigger's) is held off.
  // Both windows wait for the hung request's completion (issued inside
  // them), so the second trailer counts it.
  EXPECT_EQ(d.trailer.at("triggers_held_off"), 1u);
  EXPECT_NE(rec.ring->output().find(" 1 triggers held off"), std::string::npos)
      << rec.ring->output();
}

TEST(RecordFlight, AFullDiskDuringAWindowLeavesItAbsentAndTheEarlierWholeAndEnds) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(256 << 20);
  ASSERT_TRUE(a) << a.error().message;
  Scratch s;
  const std::string small = s.dir + "/small";
  ASSERT_EQ(mkdir(small.c_str(), 0700), 0);
  ASSERT_EQ(mount("tmpfs", small.c_str(), "tmpfs", 0, "size=1m"), 0) << "cannot mount a tmpfs";
  struct Unmount {
    std::string d;
    ~Unmount() {
      umount2(d.c_str(), MNT_DETACH);
      rmdir(d.c_str());
    }
  } unmount{small};
  auto ring = BlkrrProcess::start(
      {"record", "-d", a->path(), "-o", small + "/rec", "--ring", "3s", "--min-free", "0"}, kReady);
  ASSERT_TRUE(ring) << ring.error().message;
  const auto first = batch(a->path(), 0);
  sleep_ms(300);
  ring->signal(SIGUSR1);
  auto whole = [&] {
    const auto f = files_in(small);
    return f.size() == 1 && f[0][0] != '.';
  };
  for (int i = 0; i < 200 && !whole(); ++i) sleep_ms(50);
  const auto before = files_in(small);
  ASSERT_TRUE(whole()) << before.size();
  // 32 KiB left: room for a window's header, not for its blocks.
  struct statvfs v;
  ASSERT_EQ(statvfs(small.c_str(), &v), 0);
  const uint64_t free_bytes = static_cast<uint64_t>(v.f_bavail) * v.f_frsize;
  ASSERT_GT(free_bytes, 32u << 10);
  {
    FILE* f = fopen((small + "/filler").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::vector<char> buf(free_bytes - (32 << 10), 'x');
    ASSERT_EQ(fwrite(buf.data(), 1, buf.size(), f), buf.size());
    fclose(f);
  }
  // 2 s of requests: hundreds of KiB of window (about 10 bytes a request).
  auto child = IoChild::spawn("blkrr-io-ring", a->path(),
                              make_known_load(4, 64, 100000, (256 << 11) - 200000), 2000);
  ASSERT_TRUE(child);
  child->go();
  ASSERT_EQ(child->wait(), 0);
  ring->signal(SIGUSR1);
  std::atomic<bool> ended{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 300 && !ended; ++i) sleep_ms(50);
    if (!ended) ring->signal(SIGKILL);  // not ended by itself: fails below
  });
  const int status = ring->wait();
  ended = true;
  watchdog.join();
  EXPECT_EQ(status, 1) << ring->output();
  EXPECT_NE(ring->output().find("No space left on device"), std::string::npos) << ring->output();
  EXPECT_NE(ring->output().find(" is not written: writing it: No space left on device; the 1 "
                                "windows written before are whole"),
            std::string::npos)
      << ring->output();
  // The failed window is absent (no temporary left), the first whole.
  EXPECT_EQ(files_in(small), (std::vector<std::string>{"filler", before[0]}));
  const Trace d1 = read_trace(small + "/" + before[0]);
  EXPECT_EQ(sectors(d1), first);
  EXPECT_EQ(d1.trailer.at("records_written"), first.size());
}

TEST(RecordFlight, SignalWritesTheLastWindowTwiceWithoutStopping) {
  SKIP_UNLESS_CAPTURE();
  auto a = LoopDevice::create(64 << 20);
  ASSERT_TRUE(a) << a.error().message;
  Scratch s;
  Recorders rec({a->path()}, s.dir, {"--ring", "2s"});
  ASSERT_TRUE(rec.ring) << rec.error;
  const auto first = batch(a->path(), 0);
  sleep_ms(2600);  // older than the window at the first signal
  const auto second = batch(a->path(), 40000);
  sleep_ms(300);
  rec.ring->signal(SIGUSR1);
  ASSERT_TRUE(s.wait_dumps(1, 10000));
  sleep_ms(2300);
  const auto third = batch(a->path(), 80000);
  sleep_ms(300);
  rec.ring->signal(SIGUSR1);
  ASSERT_TRUE(s.wait_dumps(2, 10000));
  const Trace all = rec.stop();
  const auto dumps = s.dumps();
  ASSERT_EQ(dumps.size(), 2u);
  const Trace d1 = read_trace(dumps[0]), d2 = read_trace(dumps[1]);
  check_window(d1, all);
  check_window(d2, all);
  EXPECT_EQ(sectors(d1), second);  // not the first batch: older than 2 s
  EXPECT_EQ(sectors(d2), third);
  EXPECT_EQ(d1.header.settings.at("dump.trigger"), "signal");
  EXPECT_EQ(setting(d1, "dump.window_end_ns") - setting(d1, "dump.window_start_ns"),
            2'000'000'000u);
  EXPECT_TRUE(d1.header.recording_id.empty());
  (void)first;
}

TEST(RecordFlight, AHungRequestFiresTheLatencyTriggerWithTheWindowAroundIt) {
  SKIP_UNLESS_CAPTURE();
  Scratch s(3000);
  ASSERT_FALSE(s.loop.empty()) << "no loop device over the FUSE file";
  Recorders rec({s.loop}, s.dir,
                {"--ring", "3s", "--trigger-latency", "1s", "--post", "1s", "--holdoff", "1m"});
  ASSERT_TRUE(rec.ring) << rec.error;
  const auto before = batch(s.loop, 0);
  sleep_ms(500);
  auto slow = IoChild::spawn("blkrr-io-slow", s.loop, {{{Op::kRead, kSlowSector, 4096}}});
  ASSERT_TRUE(slow);
  slow->go();
  sleep_ms(300);
  // While it hangs, all issued at once (within --post), completed after it.
  const auto after = batch(s.loop, 40000, 8, 1);
  ASSERT_EQ(slow->wait(), 0);
  ASSERT_TRUE(s.wait_dumps(1, 15000));
  sleep_ms(1500);
  const Trace all = rec.stop();
  ASSERT_EQ(s.dumps().size(), 1u) << "the completion of the same request is held off";
  const Trace d = read_trace(s.dumps()[0]);
  check_window(d, all);
  const Request* hung = nullptr;
  for (const auto& r : all.reqs)
    if (r.sector == kSlowSector) hung = &r;
  ASSERT_NE(hung, nullptr);
  EXPECT_GE(hung->latency_ns(), 2'900'000'000u);
  EXPECT_EQ(d.header.settings.at("dump.trigger"), "latency");
  EXPECT_NE(d.header.settings.at("dump.fired_by").find("still in flight"), std::string::npos)
      << d.header.settings.at("dump.fired_by");
  // Fired when it had been in flight for 1 s: the window is 3 s before, 1 s after.
  // (hung is the plain recording's stamp of it: a microsecond apart.)
  const double issue = static_cast<double>(hung->issue_ns);
  EXPECT_NEAR(static_cast<double>(setting(d, "dump.time_ns")), issue + 1e9, 1e6);
  EXPECT_EQ(setting(d, "dump.window_start_ns"), setting(d, "dump.time_ns") - 3'000'000'000u);
  EXPECT_EQ(setting(d, "dump.window_end_ns"), setting(d, "dump.time_ns") + 1'000'000'000u);
  auto got = sectors(d);
  EXPECT_TRUE(got.count(kSlowSector));
  for (uint64_t x : before) EXPECT_TRUE(got.count(x)) << x;
  for (uint64_t x : after) EXPECT_TRUE(got.count(x)) << x;
}

TEST(RecordFlight, ABusySecondFiresTheUtilTrigger) {
  SKIP_UNLESS_CAPTURE();
  Scratch s(50);
  ASSERT_FALSE(s.loop.empty()) << "no loop device over the FUSE file";
  Recorders rec({s.loop}, s.dir,
                {"--ring", "2s", "--trigger-util", "60", "--post", "500ms", "--holdoff", "1m"});
  ASSERT_TRUE(rec.ring) << rec.error;
  batch(s.loop, 0);  // fast: far below 60 % of a second
  sleep_ms(1500);
  std::vector<IoOp> slow;  // 40 reads of 50 ms one after the other: 2 s busy
  for (uint64_t i = 0; i < 40; ++i) slow.push_back({Op::kRead, kSlowSector + i * 8, 4096});
  auto child = IoChild::spawn("blkrr-io-busy", s.loop, {slow});
  ASSERT_TRUE(child);
  child->go();
  ASSERT_EQ(child->wait(), 0);
  ASSERT_TRUE(s.wait_dumps(1, 10000));
  const Trace all = rec.stop();
  ASSERT_EQ(s.dumps().size(), 1u);
  const Trace d = read_trace(s.dumps()[0]);
  check_window(d, all);
  EXPECT_EQ(d.header.settings.at("dump.trigger"), "util");
  const std::string by = d.header.settings.at("dump.fired_by");
  EXPECT_EQ(by.rfind(dev_to_string(d.reqs.empty() ? 0 : d.reqs[0].dev) + " busy ", 0), 0u) << by;
  // The second that fired is the last full second before the trigger: at
  // least 60 % of it was spent in the slow reads of the full recording.
  const uint64_t to = setting(d, "dump.time_ns"), from = to - 1'000'000'000u;
  uint64_t busy = 0;
  for (const auto& r : all.reqs)
    if (r.sector >= kSlowSector && r.complete_ns > from && r.issue_ns < to)
      busy += std::min(r.complete_ns, to) - std::max(r.issue_ns, from);
  EXPECT_GE(busy, 600'000'000u);
  EXPECT_EQ(setting(d, "dump.window_end_ns"), to + 500'000'000u);
}

}  // namespace
}  // namespace blkrr::testing
