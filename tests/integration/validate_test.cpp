// The live validator end to end, as root on loop devices over /dev/shm: the
// test drives O_DIRECT I/O itself as a replayer would (recording submit and
// completion times) and checks the report: complete, foreign I/O from dd with
// its comm, splits with a lowered max_sectors_kb, losses turning the verdict
// to "unknown". With a working `blkrr replay`, also `blkrr validate` offline.
#include <fcntl.h>
#include <linux/blkpg.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "tests/integration/test_capture_skip.h"
#include "capture/capture.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"
#include "validate/live_validator.h"
#include "validate/report_io.h"

namespace blkrr::testing {
namespace {

using validate::LiveOptions;
using validate::LiveValidator;
using validate::ReplayedRequest;
using validate::Verdict;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// A small replayer: synchronous O_DIRECT requests, each timed like the
// replay engine times them.
class MiniReplay {
 public:
  explicit MiniReplay(const std::string& dev) {
    fd_.fd = open(dev.c_str(), O_RDWR | O_DIRECT);
    buf_ = static_cast<char*>(aligned_alloc(4096, 1 << 20));
    std::memset(buf_, 0x5a, 1 << 20);
  }
  ~MiniReplay() { free(buf_); }
  bool ok() const { return fd_.fd >= 0; }
  bool io(uint64_t sector, uint32_t bytes, Op op) {
    ReplayedRequest r;
    r.id = reqs.size();
    r.sector = sector;
    r.sectors = bytes / 512;
    r.op = op;
    r.submit_ns = mono_ns();
    ssize_t n = op == Op::kWrite ? pwrite(fd_.fd, buf_, bytes, static_cast<off_t>(sector * 512))
                                 : pread(fd_.fd, buf_, bytes, static_cast<off_t>(sector * 512));
    r.complete_ns = mono_ns();
    r.status = n == static_cast<ssize_t>(bytes) ? validate::ReplayStatus::kDone
                                                : validate::ReplayStatus::kFailed;
    reqs.push_back(r);
    return n == static_cast<ssize_t>(bytes);
  }
  // `count` random 4..64 KiB requests, reads and writes, in the first `span` sectors.
  bool random(int count, uint64_t first, uint64_t span, uint32_t seed) {
    std::mt19937 rng(seed);
    for (int i = 0; i < count; i++) {
      uint32_t bytes = 4096u << (rng() % 5);
      uint64_t sector = first + (rng() % ((span - bytes / 512) / 8)) * 8;
      if (!io(sector, bytes, rng() % 3 ? Op::kRead : Op::kWrite)) return false;
    }
    return true;
  }
  std::vector<ReplayedRequest> reqs;

 private:
  Fd fd_;
  char* buf_ = nullptr;
};

void settle_udev() {
  if (access("/usr/bin/udevadm", X_OK) == 0 || access("/bin/udevadm", X_OK) == 0)
    (void)std::system("udevadm settle -t 5 >/dev/null 2>&1");
}

Result<LoopDevice> make_loop() {
  auto lo = LoopDevice::create(256ull << 20);
  if (lo) settle_udev();
  return lo;
}

TEST(LiveValidate, DirectIoIsComplete) {
  SKIP_UNLESS_CAPTURE();
  auto lo = make_loop();
  ASSERT_TRUE(lo) << lo.error().message;
  auto v = LiveValidator::start(lo->path());
  ASSERT_TRUE(v) << v.error().message;
  MiniReplay rp(lo->path());
  ASSERT_TRUE(rp.ok());
  ASSERT_TRUE(rp.random(3000, 0, 400000, 1));
  auto rep = (*v)->finish(rp.reqs);
  ASSERT_TRUE(rep) << rep.error().message;
  std::fprintf(stderr, "%s", validate::format_text(*rep).c_str());
  EXPECT_EQ(rep->verdict, Verdict::kComplete) << rep->verdict_reason;
  EXPECT_EQ(rep->submitted, 3000u);
  EXPECT_EQ(rep->covered, 3000u);
  EXPECT_DOUBLE_EQ(rep->completeness_pct(), 100.0);
  EXPECT_EQ(rep->missing_count, 0u);
  EXPECT_EQ(rep->altered_count, 0u);
  EXPECT_EQ(rep->foreign_count, 0u);
  EXPECT_EQ(rep->observed, 3000u);
  EXPECT_EQ(rep->merged_block, 0u);  // synchronous requests never merge
  EXPECT_EQ(rep->block_latency_us.count + rep->latency_unknown, 3000u);
  EXPECT_GT(rep->overhead_us.p50, 0.0);
}

// The kernel sometimes does not run the completion program (injected: every
// 4th completion). The issue proves the request reached the device: it is
// covered, only its block latency is unknown, and the verdict stays complete.
TEST(LiveValidate, SkippedCompletionsStayCoveredWithUnknownLatency) {
  SKIP_UNLESS_CAPTURE();
  auto lo = make_loop();
  ASSERT_TRUE(lo) << lo.error().message;
  setenv("BLKRR_FAULT_SKIP_COMPLETION", "4", 1);
  auto v = LiveValidator::start(lo->path());
  unsetenv("BLKRR_FAULT_SKIP_COMPLETION");
  ASSERT_TRUE(v) << v.error().message;
  MiniReplay rp(lo->path());
  ASSERT_TRUE(rp.ok());
  ASSERT_TRUE(rp.random(1000, 0, 400000, 7));
  auto rep = (*v)->finish(rp.reqs);
  ASSERT_TRUE(rep) << rep.error().message;
  std::fprintf(stderr, "%s", validate::format_text(*rep).c_str());
  EXPECT_EQ(rep->verdict, Verdict::kComplete) << rep->verdict_reason;
  EXPECT_EQ(rep->covered, 1000u);
  EXPECT_EQ(rep->missing_count, 0u);
  // 1000 completions: 250 skipped on purpose, a real skip adds one.
  EXPECT_GE(rep->losses.completion_not_seen, 250u);
  EXPECT_LE(rep->losses.completion_not_seen, 252u);
  EXPECT_EQ(rep->losses.completion_not_seen_served, rep->losses.completion_not_seen);
  EXPECT_EQ(rep->latency_unknown, rep->losses.completion_not_seen);
  EXPECT_EQ(rep->block_latency_us.count + rep->latency_unknown, 1000u);
}

// dd reads 256 x 4 KiB O_DIRECT from its own region while the replay runs.
TEST(LiveValidate, ForeignIoIsReportedWithItsComm) {
  SKIP_UNLESS_CAPTURE();
  auto lo = make_loop();
  ASSERT_TRUE(lo) << lo.error().message;
  auto v = LiveValidator::start(lo->path());
  ASSERT_TRUE(v) << v.error().message;
  MiniReplay rp(lo->path());
  ASSERT_TRUE(rp.ok());
  std::string dev = lo->path();
  pid_t dd = fork();
  ASSERT_GE(dd, 0);
  if (dd == 0) {
    execlp("dd", "dd", ("if=" + dev).c_str(), "of=/dev/null", "bs=4k", "count=256", "skip=60000",
           "iflag=direct", "status=none", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_TRUE(rp.random(2000, 0, 400000, 2));  // sectors below 400000; dd reads at 480000+
  int st = 0;
  ASSERT_EQ(waitpid(dd, &st, 0), dd);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "dd failed";
  auto rep = (*v)->finish(rp.reqs);
  ASSERT_TRUE(rep) << rep.error().message;
  std::fprintf(stderr, "%s", validate::format_text(*rep).c_str());
  EXPECT_EQ(rep->verdict, Verdict::kComplete) << rep->verdict_reason;
  EXPECT_EQ(rep->covered, 2000u);
  EXPECT_EQ(rep->foreign_count, 256u);
  ASSERT_EQ(rep->foreign_by_process.size(), 1u);
  EXPECT_EQ(rep->foreign_by_process[0].comm, "dd");
  EXPECT_EQ(rep->foreign_by_process[0].pid, static_cast<uint32_t>(dd));
  EXPECT_EQ(rep->foreign_by_process[0].requests, 256u);
  EXPECT_EQ(rep->foreign_by_process[0].bytes, 256u * 4096u);
  auto j = validate::to_json(*rep);
  EXPECT_EQ(j["foreign_by_process"][0]["comm"], "dd");
}

class SysfsValue {
 public:
  SysfsValue(std::string path, const std::string& value) : path_(std::move(path)) {
    std::ifstream in(path_);
    std::getline(in, old_);
    std::ofstream out(path_);
    out << value;
    out.close();
    ok_ = static_cast<bool>(out);
  }
  ~SysfsValue() {
    std::ofstream out(path_);
    out << old_;
  }
  bool ok() const { return ok_; }

 private:
  std::string path_, old_;
  bool ok_ = false;
};

TEST(LiveValidate, SplitsAreCountedAndCompletenessStays100) {
  SKIP_UNLESS_CAPTURE();
  auto lo = make_loop();
  ASSERT_TRUE(lo) << lo.error().message;
  SysfsValue msk("/sys/block/" + lo->name() + "/queue/max_sectors_kb", "16");
  ASSERT_TRUE(msk.ok()) << "cannot lower max_sectors_kb of " << lo->name();
  auto v = LiveValidator::start(lo->path());
  ASSERT_TRUE(v) << v.error().message;
  MiniReplay rp(lo->path());
  ASSERT_TRUE(rp.ok());
  // 100 requests of 256 KiB (16 pieces of 16 KiB each) and 100 of 8 KiB.
  for (int i = 0; i < 100; i++) {
    ASSERT_TRUE(rp.io(static_cast<uint64_t>(i) * 1024, 256 << 10, i % 2 ? Op::kWrite : Op::kRead));
    ASSERT_TRUE(rp.io(200000 + static_cast<uint64_t>(i) * 64, 8 << 10, Op::kRead));
  }
  auto rep = (*v)->finish(rp.reqs);
  ASSERT_TRUE(rep) << rep.error().message;
  std::fprintf(stderr, "%s", validate::format_text(*rep).c_str());
  EXPECT_EQ(rep->verdict, Verdict::kComplete) << rep->verdict_reason;
  EXPECT_DOUBLE_EQ(rep->completeness_pct(), 100.0);
  EXPECT_EQ(rep->covered, 200u);
  EXPECT_EQ(rep->split_requests, 100u);
  EXPECT_EQ(rep->split_pieces, 1600u);
  EXPECT_EQ(rep->observed, 1700u);
  EXPECT_EQ(rep->foreign_count, 0u);
  EXPECT_EQ(rep->altered_count, 0u);
}

// A 1 MiB ring buffer and a consumer that sleeps 6 s: the kernel cannot
// queue most records, and the verdict must say so.
TEST(LiveValidate, LossesMakeTheVerdictUnknown) {
  SKIP_UNLESS_CAPTURE();
  auto lo = make_loop();
  ASSERT_TRUE(lo) << lo.error().message;
  LiveOptions o;
  o.ringbuf_mb = 1;
  o.consumer_pause_ms = 6000;
  auto v = LiveValidator::start(lo->path(), o);
  ASSERT_TRUE(v) << v.error().message;
  MiniReplay rp(lo->path());
  ASSERT_TRUE(rp.ok());
  uint64_t t0 = mono_ns();
  for (int i = 0; i < 30000 && mono_ns() - t0 < 5'500'000'000ull; i++)
    ASSERT_TRUE(rp.io(static_cast<uint64_t>(i % 50000) * 8, 4096, Op::kRead));
  auto rep = (*v)->finish(rp.reqs);
  ASSERT_TRUE(rep) << rep.error().message;
  std::fprintf(stderr, "%s", validate::format_text(*rep).c_str());
  ASSERT_GT(rp.reqs.size(), 12000u) << "too few requests to overflow a 1 MiB ring buffer";
  EXPECT_GT(rep->losses.ringbuf_full, 0u);
  EXPECT_EQ(rep->verdict, Verdict::kUnknown);
  EXPECT_LT(rep->covered, rep->submitted);  // and the missing ones are not called a failure
  auto j = validate::to_json(*rep);
  EXPECT_EQ(j["verdict"], "unknown");
  EXPECT_EQ(j["losses"]["hides_requests"], true);
}

// A scratch loop device with one partition at sector 2048, added with BLKPG
// (partition scanning is not used here); removed again by the destructor.
class PartitionedLoop {
 public:
  static constexpr uint32_t kStart = 2048, kSectors = 65536;
  PartitionedLoop() {
    auto lo = LoopDevice::create(64ull << 20);
    if (!lo) return;
    lo_.emplace(std::move(*lo));
    settle_udev();
    fd_ = open(lo_->path().c_str(), O_RDWR | O_CLOEXEC);
    if (fd_ < 0) return;
    blkpg(BLKPG_DEL_PARTITION, 0, 0);  // left over by a previous user
    if (!blkpg(BLKPG_ADD_PARTITION, kStart, kSectors)) return;
    for (int i = 0; i < 50 && access(part().c_str(), F_OK) != 0; i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ok_ = access(part().c_str(), F_OK) == 0;
  }
  ~PartitionedLoop() {
    if (fd_ < 0) return;
    blkpg(BLKPG_DEL_PARTITION, 0, 0);
    close(fd_);
  }
  bool ok() const { return ok_; }
  std::string disk() const { return lo_->path(); }
  std::string part() const { return lo_->path() + "p1"; }

 private:
  bool blkpg(int op, long long start, long long sectors) {
    blkpg_partition p{};
    p.pno = 1;
    p.start = start * 512;
    p.length = sectors * 512;
    blkpg_ioctl_arg arg{};
    arg.op = op;
    arg.datalen = sizeof p;
    arg.data = &p;
    return ioctl(fd_, BLKPG, &arg) == 0;
  }
  std::optional<LoopDevice> lo_;
  int fd_ = -1;
  bool ok_ = false;
};

// The replay runs on a partition: its sectors are relative to the partition,
// the capture sees whole-disk sectors and only the partition's range.
TEST(LiveValidate, PartitionOffsetIsApplied) {
  SKIP_UNLESS_CAPTURE();
  PartitionedLoop lo;
  ASSERT_TRUE(lo.ok()) << "cannot set up a partitioned loop device";
  auto v = LiveValidator::start(lo.part());
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_EQ((*v)->partition_offset(), PartitionedLoop::kStart);
  MiniReplay rp(lo.part());
  ASSERT_TRUE(rp.ok());
  ASSERT_TRUE(rp.random(500, 0, PartitionedLoop::kSectors, 3));
  // I/O of the whole disk before the partition is not part of the selection.
  {
    Fd fd;
    fd.fd = open(lo.disk().c_str(), O_RDONLY | O_DIRECT);
    ASSERT_GE(fd.fd, 0);
    void* b = aligned_alloc(4096, 4096);
    for (int i = 0; i < 10; i++) ASSERT_EQ(pread(fd.fd, b, 4096, i * 4096), 4096);
    free(b);
  }
  auto rep = (*v)->finish(rp.reqs);
  ASSERT_TRUE(rep) << rep.error().message;
  std::fprintf(stderr, "%s", validate::format_text(*rep).c_str());
  EXPECT_EQ(rep->verdict, Verdict::kComplete) << rep->verdict_reason;
  EXPECT_EQ(rep->covered, 500u);
  EXPECT_EQ(rep->observed, 500u);
  EXPECT_EQ(rep->foreign_count, 0u);
}

// `blkrr record` traces the device while `blkrr replay --timing fullspeed`
// replays a window of a shared load; `blkrr validate` compares the two files.
TEST(OfflineValidate, RecordedReplayIsComplete) {
  SKIP_UNLESS_CAPTURE();
  auto lo = make_loop();
  ASSERT_TRUE(lo) << lo.error().message;
  std::string dir = "/dev/shm/blkrr-validate-it-" + std::to_string(getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  std::string trace = dir + "/run.blkrr", result = dir + "/run.replay.gz", json = dir + "/v.json";
  auto rec = BlkrrProcess::start({"record", "-d", lo->path(), "-o", trace}, "Ctrl-C stops");
  ASSERT_TRUE(rec) << rec.error().message;
  auto rp = BlkrrProcess::start(
      {"replay", std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz", lo->path(), "--timing",
       "fullspeed", "--duration", "60", "--force", "-o", result},
      "");
  ASSERT_TRUE(rp) << rp.error().message;
  int rc = rp->wait();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  rec->signal(SIGINT);
  ASSERT_EQ(rec->wait(), 0) << rec->output();
  if (rc != 0) {
    (void)std::system(("rm -rf " + dir).c_str());
    GTEST_SKIP() << "blkrr replay does not work in this build: " << rp->output();
  }
  auto v = BlkrrProcess::start(
      {"validate", result, trace, "--json-file", json, "--fail-incomplete"}, "");
  ASSERT_TRUE(v) << v.error().message;
  int vrc = v->wait();
  std::fprintf(stderr, "%s", v->output().c_str());
  std::ifstream in(json);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  (void)std::system(("rm -rf " + dir).c_str());
  ASSERT_FALSE(j.is_discarded()) << "no JSON report";
  EXPECT_EQ(vrc, 0) << v->output();
  EXPECT_EQ(j["verdict"], "complete");
  EXPECT_GT(j["requests"]["submitted"].get<uint64_t>(), 500u);
  EXPECT_EQ(j["requests"]["covered"], j["requests"]["submitted"]);
  EXPECT_EQ(j["requests"]["missing"], 0);
  // The only other process touching the device is blkrr itself (the safety
  // probe of the replay, before its first request).
  for (const auto& p : j["foreign_by_process"]) EXPECT_EQ(p["comm"], "blkrr");
}

}  // namespace
}  // namespace blkrr::testing
