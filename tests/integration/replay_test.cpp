// blkrr replay on real loop devices (root only): every request of a window of
// linux-mysql.load.gz issued exactly once with the right sector, length and
// direction (checked against the result file, the kernel's blk tracer and the
// device's sector counters); verify mode catching a sector overwritten behind
// blkrr's back; refusal of a device holding ext4.
#include <fcntl.h>
#include <signal.h>
#include <linux/blkpg.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>
#include <tuple>

#include "converters/load_format.h"
#include "core/trace_format.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"

namespace blkrr {
namespace {

using testing::BlkrrProcess;
using testing::LoopDevice;

constexpr const char* kTracing = "/sys/kernel/tracing";

#define REQUIRE_ROOT() \
  if (geteuid() != 0) GTEST_SKIP() << "needs root (loop devices, tracefs)"

using Key = std::tuple<uint64_t, uint32_t, char>;  // sector, length, R/W

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  return static_cast<bool>(f.flush());
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The kernel's blk tracer on one device: Q events (one per request as
// submitted, before merges).
class BlkTracer {
 public:
  bool start(const std::string& dev_name) {
    struct stat st {};
    if (stat((std::string(kTracing) + "/trace").c_str(), &st) != 0) {
      if (std::system("mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null") != 0) return false;
    }
    enable_ = "/sys/block/" + dev_name + "/trace/enable";
    return write_file(std::string(kTracing) + "/tracing_on", "0") &&
           write_file(std::string(kTracing) + "/current_tracer", "blk") &&
           write_file(std::string(kTracing) + "/buffer_size_kb", "65536") &&
           write_file(std::string(kTracing) + "/trace", "") && write_file(enable_, "1") &&
           write_file(std::string(kTracing) + "/tracing_on", "1");
  }
  std::multiset<Key> stop_and_read_queued() {
    write_file(std::string(kTracing) + "/tracing_on", "0");
    std::multiset<Key> out;
    std::ifstream f(std::string(kTracing) + "/trace");
    std::string line;
    // "... 7,2    Q  WS 18117 + 64 [blkrr]": only what blkrr (or its
    // io_uring workers) queued. Buffered read-ahead ("RA") is libblkid's
    // safety probe before the replay, counted apart.
    static const std::regex re(
        R"(\s\d+,\d+\s+Q\s+([A-Z]+)\s+(\d+) \+ (\d+) \[(blkrr|iou-wrk-\d+)\])");
    std::smatch m;
    while (std::getline(f, line)) {
      if (!std::regex_search(line, m, re)) continue;
      const std::string rwbs = m[1];
      char op = rwbs.find('W') != std::string::npos   ? 'W'
                : rwbs.find('R') != std::string::npos ? 'R'
                                                      : '?';
      if (op == '?') continue;
      if (rwbs.find('A') != std::string::npos) {
        probe_sectors += std::stoull(m[3]);
        continue;
      }
      out.emplace(std::stoull(m[2]), static_cast<uint32_t>(std::stoul(m[3])), op);
    }
    write_file(enable_, "0");
    write_file(std::string(kTracing) + "/current_tracer", "nop");
    return out;
  }

  uint64_t probe_sectors = 0;  // read by the safety probe

 private:
  std::string enable_;
};

// /sys/block/NAME/stat: sectors read (field 3) and written (field 7).
std::pair<uint64_t, uint64_t> sectors_done(const std::string& name) {
  std::istringstream s(read_file("/sys/block/" + name + "/stat"));
  uint64_t v[8] = {};
  for (auto& x : v) s >> x;
  return {v[2], v[6]};
}

// A fresh scratch device holds zeroes; make the kernel forget partitions a
// previous user of the same loop number may have left behind, so that the
// safety check sees the device as it is.
Result<LoopDevice> scratch_device(uint64_t bytes) {
  auto d = LoopDevice::create(bytes);
  if (!d) return d;
  int fd = ::open(d->path().c_str(), O_RDONLY);
  if (fd >= 0) {
    for (int pno = 1; pno <= 16; ++pno) {
      blkpg_partition part{};
      part.pno = pno;
      blkpg_ioctl_arg arg{};
      arg.op = BLKPG_DEL_PARTITION;
      arg.datalen = sizeof part;
      arg.data = &part;
      ioctl(fd, BLKPG, &arg);
    }
    close(fd);
  }
  return d;
}

int run(const std::vector<std::string>& args, std::string* output) {
  auto p = BlkrrProcess::start(args, "", 120000);
  if (!p) {
    if (output) *output = p.error().message;
    return -1;
  }
  int rc = p->wait();
  if (output) *output = p->output();
  return rc;
}

TEST(ReplayIntegration, WindowOfMysqlLoadIssuesEveryRequestOnce) {
  REQUIRE_ROOT();
  const std::string load = std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz";
  auto dev = scratch_device(256ull << 20);
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  const uint64_t dev_sectors = dev->size_bytes() / 512;
  const uint64_t start_s = 5, dur_s = 8;

  // What the load asks for in the window, mapped the way blkrr documents it
  // (wrap modulo the device size; a request crossing the end moves back).
  std::multiset<Key> want;
  uint64_t want_read = 0, want_written = 0;
  auto rd = LoadReader::open(load);
  ASSERT_TRUE(rd.ok());
  LoadRecord rec;
  while (*rd->next(rec)) {
    if (rec.start_ns < static_cast<int64_t>(start_s * 1'000'000'000) ||
        rec.start_ns >= static_cast<int64_t>((start_s + dur_s) * 1'000'000'000))
      continue;
    uint64_t s = rec.sector;
    if (s + rec.sectors > dev_sectors) {
      s %= dev_sectors;
      if (s + rec.sectors > dev_sectors) s = dev_sectors - rec.sectors;
    }
    want.emplace(s, rec.sectors, rec.op == Op::kWrite ? 'W' : 'R');
    (rec.op == Op::kWrite ? want_written : want_read) += rec.sectors;
  }
  ASSERT_GT(want.size(), 100u);

  BlkTracer tracer;
  const bool traced = tracer.start(dev->name());
  auto before = sectors_done(dev->name());
  const std::string out = "/dev/shm/blkrr-itest-window.replay.gz";
  std::string log;
  int rc = run({"replay", load, dev->path(), "--start", std::to_string(start_s), "--duration",
                std::to_string(dur_s), "--cmode", "conflicts", "-o", out, "--quiet", "--overwrite"},
               &log);
  auto after = sectors_done(dev->name());
  std::multiset<Key> queued;
  if (traced) queued = tracer.stop_and_read_queued();
  ASSERT_EQ(rc, 0) << log;

  // 1. the result file: every request once, exact sector/length/direction
  std::multiset<Key> got;
  auto res = LoadReader::open(out);
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->kind(), LoadKind::kReplay);
  while (*res->next(rec)) got.emplace(rec.sector, rec.sectors, rec.op == Op::kWrite ? 'W' : 'R');
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want);
  // 2. the block layer's own sector counters: the load's writes exactly; its
  // reads plus what libblkid's safety probe read
  EXPECT_EQ(after.second - before.second, want_written);
  if (!traced) {
    EXPECT_GE(after.first - before.first, want_read);
    GTEST_SKIP() << "tracefs blk tracer unavailable; result file and counters checked";
  }
  EXPECT_EQ(after.first - before.first, want_read + tracer.probe_sectors);
  // 3. the kernel's blk tracer: one Q event per request
  EXPECT_EQ(queued.size(), want.size());
  EXPECT_TRUE(queued == want);
  unlink(out.c_str());
}

// A write of 8 sectors at 1000 at t=0 and a read of them at t=1.5 s.
std::string write_then_read_load() {
  std::string p = "/dev/shm/blkrr-itest-verify.load";
  write_file(p,
             "start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n"
             "   0.000000000 ;  1000 ;  8 ; W ; 0.0 ; 0.0\n"
             "   1.500000000 ;  1000 ;  8 ; R ; 0.0 ; 0.0\n");
  return p;
}

TEST(ReplayIntegration, VerifyFindsASectorOverwrittenBehindItsBack) {
  REQUIRE_ROOT();
  auto dev = scratch_device(64ull << 20);
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  const std::string load = write_then_read_load();
  const std::string out = "/dev/shm/blkrr-itest-verify.replay.gz";

  // Clean run first: no errors.
  std::string log;
  ASSERT_EQ(run({"replay", load, dev->path(), "--vmode", "verify", "--quiet"}, &log), 0) << log;

  auto p = BlkrrProcess::start(
      {"replay", load, dev->path(), "--vmode", "verify", "--overwrite", "-o", out}, "", 10000);
  ASSERT_TRUE(p.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  {
    int fd = ::open(dev->path().c_str(), O_WRONLY | O_DIRECT);
    ASSERT_GE(fd, 0);
    void* buf = nullptr;
    ASSERT_EQ(posix_memalign(&buf, 4096, 512), 0);
    std::memset(buf, 0x5a, 512);
    ASSERT_EQ(pwrite(fd, buf, 512, 1003 * 512), 512);
    free(buf);
    close(fd);
  }
  EXPECT_EQ(p->wait(), 1) << p->output();
  EXPECT_NE(p->output().find("VERIFY ERROR sector=1003 pass=read read_seq=1"), std::string::npos)
      << p->output();
  EXPECT_EQ(p->output().find("VERIFY ERROR sector=1002"), std::string::npos);
  auto res = LoadReader::open(out);
  ASSERT_TRUE(res.ok());
  LoadRecord rec;
  while (*res->next(rec)) {
  }
  int lines = 0;
  for (const auto& l : res->info_lines())
    if (l.rfind("VERIFY ERROR sector=1003", 0) == 0) ++lines;
  EXPECT_EQ(lines, 1);
  unlink(out.c_str());
  unlink(load.c_str());
}

TEST(ReplayIntegration, CtrlCStopsCleanlyAndWritesResults) {
  REQUIRE_ROOT();
  auto dev = scratch_device(256ull << 20);
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  const std::string load = std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz";
  const std::string out = "/dev/shm/blkrr-itest-int.replay.gz";
  const std::string json = "/dev/shm/blkrr-itest-int.json";
  auto p = BlkrrProcess::start(
      {"replay", load, dev->path(), "--overwrite", "-o", out, "--json-file", json}, "", 10000);
  ASSERT_TRUE(p.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  p->signal(SIGINT);
  EXPECT_EQ(p->wait(), 130) << p->output();
  auto res = LoadReader::open(out);
  ASSERT_TRUE(res.ok()) << res.error().message;
  LoadRecord rec;
  uint64_t n = 0;
  while (*res->next(rec)) ++n;
  EXPECT_GT(n, 0u);
  bool tail = false;
  for (const auto& l : res->info_lines())
    if (l == "# interrupted: results cover what completed") tail = true;
  EXPECT_TRUE(tail);
  const std::string j = read_file(json);
  EXPECT_NE(j.find("\"interrupted\": true"), std::string::npos);
  EXPECT_NE(j.find("\"completed\": " + std::to_string(n) + ","), std::string::npos) << j;
  // The reader thread had parsed ahead of the replay: what it read but the
  // replay never reached is not counted as planned.
  const auto s = nlohmann::json::parse(j);
  const auto& q = s["requests"];
  EXPECT_EQ(q["planned"].get<uint64_t>(), q["completed"].get<uint64_t>() +
                                              q["dropped"].get<uint64_t>() +
                                              q["not_started"].get<uint64_t>())
      << j;
  unlink(out.c_str());
  unlink(json.c_str());
}

// A native trace with two processes issuing five reads each at the same
// instant: with --order per-process each read of a process starts only after
// the previous one of the same process completed, and neither process waits
// for the other.
TEST(ReplayIntegration, PerProcessOrderFromANativeTrace) {
  REQUIRE_ROOT();
  auto dev = scratch_device(64ull << 20);
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  const std::string trace = "/dev/shm/blkrr-itest-pp.blkrr";
  const std::string out = "/dev/shm/blkrr-itest-pp.replay.gz";
  {
    TraceHeader h;
    h.host = "itest";
    auto w = TraceWriter::create(trace, h);
    ASSERT_TRUE(w.ok()) << w.error().message;
    for (int i = 0; i < 5; ++i)
      for (uint32_t pid : {100u, 200u}) {
        Request r;
        r.issue_ns = 5'000'000'000ull;  // absolute clock reading; all at once
        r.complete_ns = r.issue_ns + 1000;
        r.sector = (pid == 100 ? 10'000u : 20'000u) + static_cast<uint64_t>(i) * 64;
        r.bytes = 4096;
        r.op = Op::kRead;
        r.pid = r.tgid = pid;
        ASSERT_TRUE(w->append(r).ok());
      }
    ASSERT_TRUE(w->close({}).ok());
  }
  std::string log;
  ASSERT_EQ(run({"replay", trace, dev->path(), "--order", "per-process", "-o", out, "--quiet",
                 "--overwrite"},
                &log),
            0)
      << log;
  struct Times {
    int64_t submit, complete;
  };
  std::map<uint64_t, Times> by_sector;
  auto res = LoadReader::open(out);
  ASSERT_TRUE(res.ok()) << res.error().message;
  LoadRecord rec;
  while (*res->next(rec))
    by_sector[rec.sector] = {rec.start_ns + rec.delay_ns,
                             rec.start_ns + rec.delay_ns + rec.duration_ns};
  ASSERT_EQ(by_sector.size(), 10u);
  for (uint64_t base : {10'000u, 20'000u}) {
    for (int i = 1; i < 5; ++i) {
      const Times& prev = by_sector.at(base + static_cast<uint64_t>(i - 1) * 64);
      const Times& cur = by_sector.at(base + static_cast<uint64_t>(i) * 64);
      EXPECT_GE(cur.submit, prev.complete) << "process at " << base << ", read " << i;
    }
  }
  // The processes run side by side (unlike --order global): the second
  // process's first read started before the first process's first read completed.
  EXPECT_LT(by_sector.at(20'000).submit, by_sector.at(10'000).complete);
  EXPECT_LT(by_sector.at(10'000).submit, by_sector.at(20'000).complete);
  unlink(trace.c_str());
  unlink(out.c_str());
}

TEST(ReplayIntegration, RefusesADeviceHoldingExt4) {
  REQUIRE_ROOT();
  auto dev = scratch_device(64ull << 20);
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  ASSERT_EQ(std::system(("mkfs.ext4 -q -F " + dev->path() + " >/dev/null 2>&1").c_str()), 0);
  const std::string load = write_then_read_load();
  std::string log;
  EXPECT_EQ(run({"replay", load, dev->path(), "--quiet"}, &log), 2);
  EXPECT_NE(log.find("refusing to replay: libblkid finds a filesystem ext4 on " + dev->path()),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("--force"), std::string::npos);
  // The filesystem is untouched: libblkid still finds it.
  std::string type;
  FILE* f = popen(("blkid -o value -s TYPE " + dev->path()).c_str(), "r");
  char buf[64] = {};
  if (f && fgets(buf, sizeof buf, f)) type = buf;
  if (f) pclose(f);
  EXPECT_EQ(type, "ext4\n");
  unlink(load.c_str());
}

TEST(ReplayIntegration, RefusesRegularFilesWithoutAllowFile) {
  REQUIRE_ROOT();
  const std::string load = write_then_read_load();
  const std::string img = "/dev/shm/blkrr-itest-file.img";
  write_file(img, std::string(1 << 20, '\0'));
  std::string log;
  EXPECT_EQ(run({"replay", load, img, "--quiet"}, &log), 2);
  EXPECT_NE(log.find("it is a regular file, not a block device (pass --allow-file"),
            std::string::npos)
      << log;
  // tmpfs has no O_DIRECT: with --allow-file it works buffered (marked FAKE).
  EXPECT_EQ(run({"replay", load, img, "--allow-file", "--no-direct"}, &log), 0) << log;
  EXPECT_NE(log.find("FAKE RESULTS"), std::string::npos);
  unlink(img.c_str());
  unlink(load.c_str());
}

}  // namespace
}  // namespace blkrr
