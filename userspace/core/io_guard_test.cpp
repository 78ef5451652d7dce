#include "core/io_guard.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>
#include <fstream>
#include <sstream>
#include <string>

#include "core/request.h"

namespace blkrr {
namespace {

// The folders the tests made, removed when the test program ends.
struct TempDirs {
  std::vector<std::string> dirs;
  ~TempDirs() {
    std::error_code ec;
    for (const auto& d : dirs) std::filesystem::remove_all(d, ec);
  }
};

std::string temp_dir() {
  static TempDirs made;
  char t[] = "/tmp/blkrr-ioguard-XXXXXX";
  std::string d = ::mkdtemp(t);
  made.dirs.push_back(d);
  return d;
}

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int count_entries(const std::string& dir) {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return ec ? -1 : n;
}

TEST(IoGuard, AtomicFileAppearsOnlyOnCommit) {
  std::string d = temp_dir(), p = d + "/out.txt";
  {
    auto f = AtomicFile::create(p);
    ASSERT_TRUE(f) << f.error().message;
    ASSERT_EQ(::write(f->fd(), "abc", 3), 3);
    EXPECT_NE(::access(p.c_str(), F_OK), 0);  // not yet under its name
    ASSERT_TRUE(f->commit());
  }
  EXPECT_EQ(slurp(p), "abc");
  EXPECT_EQ(count_entries(d), 1);
}

TEST(IoGuard, AtomicFileInAMissingDirectoryIsNotFound) {
  std::string d = temp_dir();
  auto f = AtomicFile::create(d + "/missing/out.txt");
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(f.error().sys_errno, ENOENT);
}

TEST(IoGuard, AtomicFileWithoutCommitLeavesNothingAndKeepsTheOldFile) {
  std::string d = temp_dir(), p = d + "/out.txt";
  ASSERT_TRUE(write_file_atomic(p, "old"));
  {
    auto f = AtomicFile::create(p);
    ASSERT_TRUE(f);
    ASSERT_EQ(::write(f->fd(), "partial", 7), 7);
  }  // failure path: never committed
  EXPECT_EQ(slurp(p), "old");
  EXPECT_EQ(count_entries(d), 1);
}

TEST(IoGuard, AtomicFileWritesDevNullInPlace) {
  auto f = AtomicFile::create("/dev/null");
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_TRUE(f->commit());
  struct stat st;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(IoGuard, CheckOutputsRefusesAnInputAlsoThroughLinks) {
  std::string d = temp_dir(), in = d + "/in.load";
  ASSERT_TRUE(write_file_atomic(in, "x"));
  ASSERT_EQ(::symlink(in.c_str(), (d + "/sym").c_str()), 0);
  ASSERT_EQ(::link(in.c_str(), (d + "/hard").c_str()), 0);
  for (const char* name : {"/in.load", "/sym", "/hard"}) {
    auto st = check_outputs({{d + name, "-o"}}, {in}, Existing::kReplace);
    ASSERT_FALSE(st) << name;
    EXPECT_NE(st.error().message.find("is the input " + in), std::string::npos)
        << st.error().message;
    EXPECT_EQ(st.error().kind, ErrorKind::kUsage);
  }
  EXPECT_TRUE(check_outputs({{d + "/new", "-o"}, {"-", "--json"}}, {in}, Existing::kReplace));
}

// `convert cap -o cap.blktrace.1` overwrote the second CPU's file of the
// capture it was reading: a name that is no file stands for its NAME.blktrace.N.
TEST(IoGuard, CheckOutputsKnowsBlktraceBaseNames) {
  std::string d = temp_dir();
  ASSERT_TRUE(write_file_atomic(d + "/cap.blktrace.0", "x"));
  ASSERT_TRUE(write_file_atomic(d + "/cap.blktrace.3", "x"));  // CPUs 1 and 2 idle
  auto st = check_outputs({{d + "/cap.blktrace.3", "-o"}}, {d + "/cap"}, Existing::kReplace);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("is the input " + d + "/cap.blktrace.3"), std::string::npos)
      << st.error().message;
  EXPECT_TRUE(check_outputs({{d + "/cap.load", "-o"}}, {d + "/cap"}, Existing::kReplace));
  EXPECT_TRUE(check_outputs({{d + "/cap.blktrace.0", "-o"}}, {d + "/other"}, Existing::kReplace));
}

// `convert - -o X < X`: standard input is compared by the file it comes from.
TEST(IoGuard, CheckOutputsKnowsTheFileOnStandardInput) {
  std::string d = temp_dir(), in = d + "/in.load";
  ASSERT_TRUE(write_file_atomic(in, "x"));
  int saved = ::dup(STDIN_FILENO), fd = ::open(in.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::dup2(fd, STDIN_FILENO), STDIN_FILENO);
  auto st = check_outputs({{in, "-o"}}, {"-"}, Existing::kReplace);
  auto other = check_outputs({{d + "/out.load", "-o"}}, {"-"}, Existing::kReplace);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  ::close(fd);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("is the input - (standard input)"), std::string::npos)
      << st.error().message;
  EXPECT_TRUE(other);
}

// A block device as an output was written in place: the disk's data lost.
TEST(IoGuard, BlockDevicesAreNeverOutputs) {
  if (geteuid() != 0) GTEST_SKIP() << "making a device node needs root";
  std::string d = temp_dir(), dev = d + "/bdev";
  // A loop minor nobody attaches: nothing can be written to it anyway.
  if (::mknod(dev.c_str(), S_IFBLK | 0600, makedev(7, 1048000)) != 0)
    GTEST_SKIP() << "cannot make a device node here: " << std::strerror(errno);
  auto st = check_outputs({{dev, "-o"}}, {}, Existing::kReplace);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "-o " + dev + " is a block device; name a file");
  EXPECT_EQ(st.error().kind, ErrorKind::kUsage);
  auto f = AtomicFile::create(dev);
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message.find("is a block device"), std::string::npos);
}

TEST(IoGuard, CheckOutputsWantsAnExistingWritableDirectoryAndDistinctNames) {
  std::string d = temp_dir();
  auto st = check_outputs({{d + "/missing/x.json", "--json"}}, {}, Existing::kReplace);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("--json " + d + "/missing/x.json: the directory " + d +
                                    "/missing does not exist"),
            std::string::npos)
      << st.error().message;
  st = check_outputs({{d + "/a", "-o"}, {d + "/a", "--json"}}, {}, Existing::kReplace);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("also the output of -o"), std::string::npos);
}

// `record -o existing.blkrr` replaced the file without a word: every command
// refuses an existing regular file unless --overwrite (Existing::kReplace).
TEST(IoGuard, AnExistingOutputIsReplacedOnlyWhenAsked) {
  std::string d = temp_dir(), f = d + "/old.blkrr";
  ASSERT_TRUE(write_file_atomic(f, "old"));
  auto st = check_outputs({{f, "-o"}}, {}, Existing::kRefuse);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "-o " + f +
                                    " exists; blkrr replaces no file unless asked: give "
                                    "--overwrite to replace it, or another name");
  EXPECT_EQ(st.error().kind, ErrorKind::kUsage);
  EXPECT_TRUE(check_outputs({{f, "-o"}}, {}, Existing::kReplace));
  EXPECT_TRUE(check_outputs({{d + "/new.blkrr", "-o"}}, {}, Existing::kRefuse));
  // Not files: written as always.
  EXPECT_TRUE(check_outputs({{"/dev/null", "-o"}, {"-", "--json-file"}}, {}, Existing::kRefuse));
  EXPECT_EQ(slurp(f), "old");
}

TEST(IoGuard, ADirectoryOfOutputsIsRefusedWhenItHoldsOne) {
  std::string d = temp_dir();
  EXPECT_TRUE(refuse_existing_in(d, {"index.html", "report.json"}, "-o", Existing::kRefuse));
  ASSERT_TRUE(write_file_atomic(d + "/report.json", "{}"));
  auto st = refuse_existing_in(d, {"index.html", "report.json"}, "-o", Existing::kRefuse);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            "-o " + d +
                " holds report.json of an earlier run; blkrr replaces no file unless asked: give "
                "--overwrite to replace them, or another directory");
  EXPECT_TRUE(refuse_existing_in(d, {"index.html", "report.json"}, "-o", Existing::kReplace));
}

TEST(IoGuard, JsonNestingDepth) {
  EXPECT_EQ(json_nesting_depth(R"({"a":[1,{"b":"[[[["}]})"), 3u);
  EXPECT_EQ(json_nesting_depth(R"("\"[[")"), 0u);
  EXPECT_EQ(json_nesting_depth(std::string(100000, '[')), 100000u);
}

TEST(RequestRange, Limits) {
  Request r;
  r.bytes = 4096;
  r.issue_ns = 5;
  EXPECT_EQ(request_range_error(r), nullptr);
  r.bytes = 0;
  EXPECT_STREQ(request_range_error(r), "size 0");
  r.op = Op::kFlush;
  EXPECT_EQ(request_range_error(r), nullptr);
  r.op = Op::kWrite;
  r.bytes = 0xffffffffu;
  EXPECT_STREQ(request_range_error(r), "size larger than 4 GiB - 512");
  r.bytes = 512;
  r.sector = (1ull << 54) - 1;  // last sector below 2^63 bytes
  EXPECT_EQ(request_range_error(r), nullptr);
  r.sector = 1ull << 54;
  EXPECT_STREQ(request_range_error(r), "sector + length beyond 2^63 bytes");
  r.sector = ~0ull;
  EXPECT_STREQ(request_range_error(r), "sector + length beyond 2^63 bytes");
  r.sector = 0;
  r.complete_ns = 4;
  EXPECT_STREQ(request_range_error(r), "completion before issue");
  r.complete_ns = 5 + kMaxLatencyNs + 1;
  EXPECT_STREQ(request_range_error(r), "latency longer than a day");
}

}  // namespace
}  // namespace blkrr
