#include "live/procinfo.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace blkrr::live {
namespace {

namespace fs = std::filesystem;

class FakeProc : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("blkrr_procinfo_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  fs::path root_;
};

TEST_F(FakeProc, ReadsUidAndPpid) {
  write("42/status",
        "Name:\tfio\nUmask:\t0022\nState:\tR\nPPid:\t7\nUid:\t1000\t1000\t1000\t1000\n");
  auto r = read_proc_info(42, root_);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->uid, 1000u);
  EXPECT_EQ(r->ppid, 7u);
}

TEST_F(FakeProc, MissingOrMalformedIsAnError) {
  EXPECT_EQ(read_proc_info(43, root_).error().kind, ErrorKind::kNotFound);
  write("44/status", "Name:\tx\nPPid:\tseven\nUid:\t0\n");
  auto r = read_proc_info(44, root_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r.error().message.find("44/status"), std::string::npos);
  write("45/status", "Name:\tx\n");
  EXPECT_EQ(read_proc_info(45, root_).error().kind, ErrorKind::kBadInput);
}

// A process seen once keeps its values after it exits; one that exited
// before it was seen stays unknown.
TEST_F(FakeProc, CacheKeepsExitedProcesses) {
  write("50/status", "PPid:\t1\nUid:\t0\t0\t0\t0\n");
  ProcCache cache(root_, 2);
  cache.touch(50);
  fs::remove_all(root_ / "50");
  auto got = cache.get(50);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->ppid, 1u);
  EXPECT_FALSE(cache.get(51).has_value());
  for (int i = 0; i < 4; ++i) cache.next_generation();
  EXPECT_EQ(cache.size(), 0u);
}

TEST_F(FakeProc, LoadAverage) {
  write("loadavg", "0.52 1.25 2.00 3/456 7890\n");
  auto r = read_loadavg(root_);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ((*r)[0], 0.52);
  EXPECT_DOUBLE_EQ((*r)[1], 1.25);
  EXPECT_DOUBLE_EQ((*r)[2], 2.0);
  write("loadavg", "0.52\n");
  EXPECT_EQ(read_loadavg(root_).error().kind, ErrorKind::kBadInput);
  write("loadavg", "0.52 x 2.00\n");
  EXPECT_EQ(read_loadavg(root_).error().kind, ErrorKind::kBadInput);
}

TEST(Diskstats, ParsesFieldsOfModernKernels) {
  auto r = parse_diskstats(
      "   7       0 loop0 100 1 800 50 20 2 160 30 3 2028 90 0 0 0 0 0 0\n"
      "   8       2 sda2 1 0 8 0 0 0 0 0 0 4 0\n");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->size(), 2u);
  const auto& d = (*r)[0];
  EXPECT_EQ(d.dev, make_dev(7, 0));
  EXPECT_EQ(d.name, "loop0");
  EXPECT_EQ(d.reads, 100u);
  EXPECT_EQ(d.read_sectors, 800u);
  EXPECT_EQ(d.read_ms, 50u);
  EXPECT_EQ(d.writes, 20u);
  EXPECT_EQ(d.write_sectors, 160u);
  EXPECT_EQ(d.write_ms, 30u);
  EXPECT_EQ(d.in_flight, 3u);
  EXPECT_EQ(d.io_ticks_ms, 2028u);
  EXPECT_EQ(d.time_in_queue_ms, 90u);
  EXPECT_EQ((*r)[1].dev, make_dev(8, 2));
  EXPECT_EQ((*r)[1].io_ticks_ms, 4u);
}

TEST(Diskstats, MalformedLineNamesItsNumber) {
  auto r = parse_diskstats("7 0 loop0 1 2 3 4 5 6 7 8 9 10 11\n7 1 loop1 1 2 x\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r.error().message.find("diskstats:2"), std::string::npos) << r.error().message;
  r = parse_diskstats("7 0 loop0 1 2 3 4 5 6 7 8 9 10 z\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(r.error().message.find("diskstats:1"), std::string::npos) << r.error().message;
}

TEST_F(FakeProc, CgroupNamesByInode) {
  fs::create_directories(root_ / "system.slice" / "x.service");
  struct stat st {};
  ASSERT_EQ(::stat((root_ / "system.slice" / "x.service").c_str(), &st), 0);
  CgroupNamer namer(root_);
  EXPECT_EQ(namer.name(st.st_ino), "/system.slice/x.service");
  EXPECT_EQ(namer.name(1), "1");  // unknown id: shown as a number
}

}  // namespace
}  // namespace blkrr::live
