#include "core/input_stream.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace blkrr {
namespace {

namespace fs = std::filesystem;

class InputStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char t[] = "/tmp/blkrr-input-XXXXXX";
    dir_ = ::mkdtemp(t);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A FIFO that a thread fills with `data` (then closes).
  std::string fifo(const std::string& name, std::string data) {
    std::string p = dir_ + "/" + name;
    EXPECT_EQ(::mkfifo(p.c_str(), 0600), 0);
    writer_ = std::thread([p, d = std::move(data)] {
      int fd = ::open(p.c_str(), O_WRONLY);
      for (size_t off = 0; fd >= 0 && off < d.size();) {
        ssize_t n = ::write(fd, d.data() + off, d.size() - off);
        if (n <= 0) break;  // the reader went away
        off += static_cast<size_t>(n);
      }
      if (fd >= 0) ::close(fd);
    });
    return p;
  }
  static std::string read_all(InputFile& f) {
    std::string out, buf(1 << 16, '\0');
    for (;;) {
      auto n = f.read(buf.data(), buf.size());
      EXPECT_TRUE(n.ok()) << n.error().message;
      if (!n || *n == 0) return out;
      out.append(buf.data(), *n);
    }
  }
  static std::string pattern(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
    return s;
  }
  std::string dir_;
  std::thread writer_;
};

TEST_F(InputStreamTest, RegularFilesHaveASizeAndReadAgain) {
  std::string p = dir_ + "/f";
  std::ofstream(p) << "hello\n";
  auto a = InputFile::open(p);
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->size(), std::optional<uint64_t>(6));
  EXPECT_EQ(read_all(*a), "hello\n");
  EXPECT_FALSE(input_is_stream(p));
  EXPECT_EQ(*peek_input(p, 3), "hel");
  auto b = InputFile::open(p);
  EXPECT_EQ(read_all(*b), "hello\n");
}

TEST_F(InputStreamTest, DirectoriesBlockDevicesAndMissingFilesAreRefused) {
  auto d = InputFile::open(dir_);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(d.error().message.find("is a directory"), std::string::npos);
  auto m = InputFile::open(dir_ + "/missing");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(m.error().sys_errno, ENOENT);
  EXPECT_EQ(input_name("-"), "standard input");
}

// Detection peeks, then the one reader gets every byte from the start, far
// past the kept prefix; nothing is written anywhere.
TEST_F(InputStreamTest, AStreamPeekedThenReadWholeInOrder) {
  const std::string data = pattern(kInputPeekLimit * 3 + 12345);
  std::string p = fifo("big", data);
  EXPECT_TRUE(input_is_stream(p));
  auto head = peek_input(p, 8);
  ASSERT_TRUE(head.ok()) << head.error().message;
  EXPECT_EQ(*head, data.substr(0, 8));
  EXPECT_EQ(*peek_input(p, 100), data.substr(0, 100));  // again: the same bytes
  auto f = InputFile::open(p);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_FALSE(f->size().has_value());
  std::string got = read_all(*f);
  writer_.join();
  ASSERT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
  // A second pass cannot be had: it is refused, naming the input.
  auto again = InputFile::open(p);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kUnsupported);
  EXPECT_NE(again.error().message.find(p + " is a pipe or a device and can be read only once"),
            std::string::npos)
      << again.error().message;
}

// Readers that stay within the prefix (detection, a header) can each start
// again from the first byte.
TEST_F(InputStreamTest, ShortStreamsCanBeReadSeveralTimes) {
  std::string p = fifo("small", "line one\nline two\n");
  auto a = InputFile::open(p);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(read_all(*a), "line one\nline two\n");
  auto b = InputFile::open(p);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(read_all(*b), "line one\nline two\n");
  writer_.join();
}

// An endless device is read as it comes: a reader takes what it needs and
// nothing is copied first (the old behaviour filled $TMPDIR).
TEST_F(InputStreamTest, AnEndlessDeviceIsStreamedNotCopied) {
  setenv("TMPDIR", dir_.c_str(), 1);
  auto f = InputFile::open("/dev/zero");
  ASSERT_TRUE(f.ok()) << f.error().message;
  std::string buf(1 << 20, 'x');
  uint64_t total = 0;
  for (int i = 0; i < 64; ++i) {
    auto n = f->read(buf.data(), buf.size());
    ASSERT_TRUE(n.ok());
    total += *n;
  }
  EXPECT_GE(total, uint64_t{64} << 20);
  EXPECT_EQ(buf.find_first_not_of('\0'), std::string::npos);
  EXPECT_TRUE(fs::is_empty(dir_));
  unsetenv("TMPDIR");
}

TEST_F(InputStreamTest, StdioStreamsReadPipesAndTellTheirPosition) {
  const std::string data = pattern(kInputPeekLimit + 1000);
  std::string p = fifo("stdio", data);
  auto f = open_input_stdio(p);
  ASSERT_TRUE(f.ok()) << f.error().message;
  std::string got(data.size(), '\0');
  ASSERT_EQ(std::fread(got.data(), 1, 10, f->get()), 10u);
  EXPECT_EQ(std::ftell(f->get()), 10);
  ASSERT_EQ(std::fread(got.data() + 10, 1, data.size() - 10, f->get()), data.size() - 10);
  EXPECT_EQ(std::fgetc(f->get()), EOF);
  writer_.join();
  EXPECT_TRUE(got == data);
}

}  // namespace
}  // namespace blkrr
