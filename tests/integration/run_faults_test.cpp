// Faults of the run on real loop devices (root only): a second replay onto a
// device another replay holds is refused with the holder named (and runs with
// --force); a device another program opened exclusively is refused; `record`
// interrupted by SIGINT, SIGTERM or SIGHUP ends its trace cleanly (trailer
// written) and leaves nothing else in its folder.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/trace_format.h"
#include "replay/device_lock.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_processes.h"

namespace blkrr {
namespace {

namespace fs = std::filesystem;
using testing::BlkrrProcess;
using testing::LoopDevice;

#define REQUIRE_ROOT() \
  if (geteuid() != 0) GTEST_SKIP() << "needs root (loop devices, BPF)"

const std::string kLoad = std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz";

int run(const std::vector<std::string>& args, std::string* output) {
  auto p = BlkrrProcess::start(args, "", 120000);
  if (!p) {
    *output = p.error().message;
    return -1;
  }
  int rc = p->wait();
  *output = p->output();
  return rc;
}

bool wait_for_file(const std::string& path, int ms) {
  for (int i = 0; i < ms / 20; ++i) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fs::exists(path);
}

std::string holder_file(const LoopDevice& dev) {
  struct stat st {};
  ::stat(dev.path().c_str(), &st);
  return replay::lock_dir() + "/replay-" + std::to_string(major(st.st_rdev)) + ":" +
         std::to_string(minor(st.st_rdev)) + ".lock";
}

// The load at its recorded pace runs for minutes: long enough to hold the
// device while the test tries a second replay.
Result<BlkrrProcess> first_replay(const LoopDevice& dev) {
  return BlkrrProcess::start({"replay", kLoad, dev.path(), "-q"}, "", 10000);
}

TEST(RunFaults, ASecondReplayOnOneDeviceIsRefusedWithTheHolderNamed) {
  REQUIRE_ROOT();
  auto dev = LoopDevice::create(256ull << 20);
  ASSERT_TRUE(dev) << dev.error().message;
  auto first = first_replay(*dev);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_TRUE(wait_for_file(holder_file(*dev), 10000)) << first->output();

  std::string log;
  EXPECT_EQ(run({"replay", kLoad, dev->path(), "-D", "1", "-q"}, &log), 2) << log;
  EXPECT_NE(log.find("refusing to replay: " + dev->path() + " is held by blkrr replay pid " +
                     std::to_string(first->pid()) + " since "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("(" + holder_file(*dev) + ")"), std::string::npos) << log;
  EXPECT_NE(log.find("pass --force"), std::string::npos) << log;

  // The first holds the device exclusively too (mkfs or a mount would fail).
  int fd = ::open(dev->path().c_str(), O_RDONLY | O_EXCL);
  EXPECT_LT(fd, 0);
  EXPECT_EQ(errno, EBUSY);
  if (fd >= 0) ::close(fd);

  // --force: it runs, and says what it overrode.
  EXPECT_EQ(run({"replay", kLoad, dev->path(), "-D", "1", "--force"}, &log), 0) << log;
  EXPECT_NE(log.find("WARN: overridden by --force: " + dev->path() +
                     " is held by blkrr replay pid " + std::to_string(first->pid())),
            std::string::npos)
      << log;
  // ... and leaves the holder's file alone.
  EXPECT_TRUE(fs::exists(holder_file(*dev)));

  first->signal(SIGINT);
  EXPECT_EQ(first->wait(), 130) << first->output();
  EXPECT_FALSE(fs::exists(holder_file(*dev)));
  // Free again: a replay runs.
  EXPECT_EQ(run({"replay", kLoad, dev->path(), "-D", "1", "-q"}, &log), 0) << log;
}

TEST(RunFaults, ADeviceAnotherProgramOpenedExclusivelyIsRefused) {
  REQUIRE_ROOT();
  auto dev = LoopDevice::create(64ull << 20);
  ASSERT_TRUE(dev) << dev.error().message;
  int fd = ::open(dev->path().c_str(), O_RDONLY | O_EXCL);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  std::string log;
  EXPECT_EQ(run({"replay", kLoad, dev->path(), "-D", "1", "-q"}, &log), 2) << log;
  EXPECT_NE(log.find("refusing to replay: " + dev->path() +
                     " is in use: another program opened it exclusively (EBUSY"),
            std::string::npos)
      << log;
  EXPECT_EQ(run({"replay", kLoad, dev->path(), "-D", "1", "-q", "--force"}, &log), 0) << log;
  ::close(fd);
}

// record ends cleanly on each stop signal: the trace has its trailer, and
// nothing else is left beside it.
TEST(RunFaults, RecordInterruptedByEachSignalEndsItsTraceCleanly) {
  REQUIRE_ROOT();
  auto dev = LoopDevice::create(256ull << 20);
  ASSERT_TRUE(dev) << dev.error().message;
  char tmpl[] = "/dev/shm/blkrr-runfaults-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(strsignal(sig));
    const std::string out = dir + "/rec.blkrr";
    auto rec = BlkrrProcess::start({"record", "-d", dev->name(), "-o", out}, "recording", 60000);
    ASSERT_TRUE(rec) << rec.error().message;
    // I/O on the device while it records: a replay at full speed for a second.
    std::string log;
    EXPECT_EQ(run({"replay", kLoad, dev->path(), "-D", "30", "--timing", "fullspeed", "-q"}, &log),
              0)
        << log;
    rec->signal(sig);
    EXPECT_EQ(rec->wait(), 0) << rec->output();
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
    EXPECT_EQ(names, std::vector<std::string>{"rec.blkrr"});
    auto rd = TraceReader::open(out);
    ASSERT_TRUE(rd) << rd.error().message;
    Request r;
    uint64_t n = 0;
    while (true) {
      auto more = rd->next(r);
      ASSERT_TRUE(more) << more.error().message;
      if (!*more) break;
      ++n;
    }
    EXPECT_GT(n, 0u);
    EXPECT_TRUE(rd->trailer().has_value()) << rd->warning();
    fs::remove(out);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace blkrr
