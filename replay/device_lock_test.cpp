// One replay per device: the lock, the holder file and the message that names
// the holder (on a regular file: BSD locks work the same on any inode).
#include "replay/device_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace blkrr::replay {
namespace {

namespace fs = std::filesystem;

class DeviceLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/blkrr-devlock-XXXXXX";
    ASSERT_NE(::mkdtemp(t), nullptr);
    dir_ = t;
    ::setenv("BLKRR_RUN_DIR", (dir_ + "/run").c_str(), 1);
    std::ofstream(dev()) << "device";
  }
  void TearDown() override {
    ::unsetenv("BLKRR_RUN_DIR");
    fs::remove_all(dir_);
  }
  std::string dev() const { return dir_ + "/dev.img"; }
  std::string holder_file() const {
    struct stat st {};
    ::stat(dev().c_str(), &st);
    return dir_ + "/run/replay-file-" + std::to_string(st.st_dev) + "-" +
           std::to_string(st.st_ino) + ".lock";
  }
  std::string dir_;
};

TEST_F(DeviceLockTest, ASecondReplayIsRefusedWithTheHolderNamed) {
  std::vector<std::string> warnings;
  auto first = DeviceLock::take(dev(), false, warnings);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_TRUE(first->held());
  EXPECT_EQ(first->holder_file(), holder_file());
  std::ifstream in(holder_file());
  std::string key, pid;
  in >> key >> pid;
  EXPECT_EQ(key, "pid");
  EXPECT_EQ(pid, std::to_string(::getpid()));

  auto second = DeviceLock::take(dev(), false, warnings);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, ErrorKind::kUsage);
  const std::string& m = second.error().message;
  EXPECT_NE(m.find("refusing to replay: " + dev() + " is held by blkrr replay pid " +
                   std::to_string(::getpid()) + " since "),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(" UTC (" + holder_file() + ")"), std::string::npos) << m;
  EXPECT_NE(m.find("pass --force"), std::string::npos) << m;
  EXPECT_TRUE(warnings.empty());

  auto forced = DeviceLock::take(dev(), true, warnings);
  ASSERT_TRUE(forced) << forced.error().message;
  EXPECT_FALSE(forced->held());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(
      warnings[0].rfind("overridden by --force: " + dev() + " is held by blkrr replay pid ", 0), 0u)
      << warnings[0];
  // The forced replay leaves the holder's file alone.
  *forced = DeviceLock();
  EXPECT_TRUE(fs::exists(holder_file()));
}

TEST_F(DeviceLockTest, TheLockAndItsFileEndWithTheReplay) {
  std::vector<std::string> warnings;
  {
    auto first = DeviceLock::take(dev(), false, warnings);
    ASSERT_TRUE(first);
    EXPECT_TRUE(fs::exists(holder_file()));
  }
  EXPECT_FALSE(fs::exists(holder_file()));
  auto again = DeviceLock::take(dev(), false, warnings);
  EXPECT_TRUE(again && again->held());
}

// A holder file left by a replay killed with SIGKILL names nobody: the lock
// went with the process, and the next replay takes it and the file.
TEST_F(DeviceLockTest, AStaleHolderFileDoesNotBlock) {
  fs::create_directories(dir_ + "/run");
  std::ofstream(holder_file()) << "pid 999999\nstart_unix 1\n";
  std::vector<std::string> warnings;
  auto l = DeviceLock::take(dev(), false, warnings);
  ASSERT_TRUE(l) << l.error().message;
  std::ifstream in(holder_file());
  std::string key, pid;
  in >> key >> pid;
  EXPECT_EQ(pid, std::to_string(::getpid()));
}

// Another program's BSD lock: named by its pid from /proc/locks.
TEST_F(DeviceLockTest, AForeignLockIsNamedByItsPid) {
  int fd = ::open(dev().c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  EXPECT_EQ(lock_holder(dev()).rfind("pid " + std::to_string(::getpid()) + " (", 0), 0u)
      << lock_holder(dev());
  ::close(fd);
  EXPECT_EQ(lock_holder(dev()), "another process");
}

}  // namespace
}  // namespace blkrr::replay
