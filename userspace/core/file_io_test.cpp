#include "core/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace blkrr {
namespace {

TEST(FileIo, WholeWritesAndReadsAtOffsets) {
  auto fd = open_scratch_file("a test");
  ASSERT_TRUE(fd) << fd.error().message;
  std::vector<char> data(1 << 20);
  for (size_t i = 0; i < data.size(); i++) data[i] = static_cast<char>(i * 7);
  ASSERT_TRUE(pwrite_all(fd->get(), data.data(), data.size(), 4096, "scratch"));
  std::vector<char> back(data.size());
  ASSERT_TRUE(pread_all(fd->get(), back.data(), back.size(), 4096, "scratch"));
  EXPECT_EQ(back, data);
}

TEST(FileIo, ReadingPastTheEndIsAnIoErrorWithThePosition) {
  auto fd = open_scratch_file("a test");
  ASSERT_TRUE(fd);
  ASSERT_TRUE(pwrite_all(fd->get(), "abcd", 4, 0, "scratch"));
  char buf[8];
  auto s = pread_all(fd->get(), buf, 8, 0, "scratch");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, ErrorKind::kIo);
  EXPECT_NE(s.error().message.find("4 bytes early"), std::string::npos) << s.error().message;
  // pwrite/pread leave the file position at 0: read_all gets the 4 bytes there are.
  auto n = read_all(fd->get(), buf, 8, "scratch");
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 4u);
  EXPECT_EQ(std::string(buf, 4), "abcd");
}

TEST(FileIo, FailuresKeepTheirErrno) {
  char buf[4] = {};
  auto w = write_all(-1, buf, 4, "nothing");
  ASSERT_FALSE(w);
  EXPECT_EQ(w.error().sys_errno, EBADF);
  EXPECT_NE(w.error().message.find("writing nothing"), std::string::npos);
  auto r = read_file("/nonexistent/blkrr-file");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().sys_errno, ENOENT);
  EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
}

TEST(FileIo, ReadFileIsBounded) {
  auto whole = read_file("/proc/self/status");
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_NE(whole->find("Pid:"), std::string::npos);
  auto cut = read_file("/proc/self/status", 16);
  ASSERT_FALSE(cut);
  EXPECT_EQ(cut.error().kind, ErrorKind::kBadInput);
}

TEST(FileIo, ScratchFilesLeaveNothingBehindAndAreCloseOnExec) {
  char tmpl[] = "/tmp/blkrr-scratch-test.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  setenv("TMPDIR", tmpl, 1);
  {
    auto fd = open_scratch_file("a test");
    ASSERT_TRUE(fd) << fd.error().message;
    EXPECT_TRUE(::fcntl(fd->get(), F_GETFD) & FD_CLOEXEC);
  }
  unsetenv("TMPDIR");
  EXPECT_EQ(::rmdir(tmpl), 0) << "the scratch folder is not empty";
  setenv("TMPDIR", "/nonexistent/blkrr", 1);
  auto none = open_scratch_file("the report's request store");
  unsetenv("TMPDIR");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("the report's request store in /nonexistent/blkrr"),
            std::string::npos)
      << none.error().message;
  EXPECT_NE(none.error().message.find("TMPDIR"), std::string::npos);
}

}  // namespace
}  // namespace blkrr
