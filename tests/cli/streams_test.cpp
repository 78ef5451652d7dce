// Inputs that are not regular files: an endless device fails within its first
// bytes in every reader and command, and a pipe is streamed, never copied to
// a temporary file first ($TMPDIR stays empty).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli/test_cli_run.h"

namespace fs = std::filesystem;

namespace blkrr {
namespace {

using testing::run_command;
using testing::slurp;

class Streams : public testing::ScratchDirTest {
 protected:
  Streams() : ScratchDirTest("streams") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    fs::create_directories(path("tmp"));
  }
  // `blkrr ARGS` with $TMPDIR in the scratch directory, at most 60 s.
  testing::CliRun run(const std::string& args, const std::string& stdin_from = "") {
    std::string cmd = "TMPDIR='" + path("tmp") + "' timeout 60 '" BLKRR_BINARY "' " + args;
    if (!stdin_from.empty()) cmd = stdin_from + " | " + cmd;
    return run_command(cmd + " 2>&1");
  }
  bool tmp_is_empty() const { return fs::is_empty(path("tmp")); }
  static std::string load() { return std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz"; }
};

TEST_F(Streams, DevZeroFailsFastInEveryReaderAndCommand) {
  const std::vector<std::string> cmds = {
      "convert /dev/zero -o " + path("a.csv"),
      "convert /dev/zero --from native -o " + path("a.csv"),
      "convert /dev/zero --from load -o " + path("a.csv"),
      "convert /dev/zero --from blktrace -o " + path("a.csv"),
      "convert /dev/zero --from blkparse -o " + path("a.csv"),
      "convert /dev/zero --from fio -o " + path("a.csv"),
      "convert /dev/zero --from msr -o " + path("a.csv"),
      "dump /dev/zero",
      "report /dev/zero -o " + path("rep"),
      "replay /dev/zero /dev/null --fake-io",
      "validate /dev/zero /dev/zero",
  };
  for (const auto& c : cmds) {
    auto r = run(c);
    EXPECT_NE(r.status, 0) << c << ": " << r.out;
    EXPECT_NE(r.status, 124) << c << ": still reading after 60 s";
    EXPECT_LT(r.out.size(), 4000u) << c << ": " << r.out;
    EXPECT_TRUE(tmp_is_empty()) << c;
  }
  EXPECT_FALSE(fs::exists(path("a.csv")));
}

// A load larger than the kept prefix (4.5 MB), plain and gzipped, through a
// pipe: the same output as from the file, nothing in $TMPDIR.
TEST_F(Streams, APipedLoadConvertsLikeTheFile) {
  auto f = run("convert " + load() + " -q -o " + path("file.load"));
  ASSERT_EQ(f.status, 0) << f.out;
  auto p = run("convert - -q -o " + path("plain.load"), "zcat '" + load() + "'");
  ASSERT_EQ(p.status, 0) << p.out;
  auto g = run("convert - -q --from load -o " + path("gz.load"), "cat '" + load() + "'");
  ASSERT_EQ(g.status, 0) << g.out;
  const std::string want = slurp(path("file.load"));
  ASSERT_GT(want.size(), 4'000'000u);
  // A load keeps its own notice: the outputs are the same to the byte.
  EXPECT_TRUE(slurp(path("plain.load")) == want);
  EXPECT_TRUE(slurp(path("gz.load")) == want);
  EXPECT_TRUE(tmp_is_empty());
}

TEST_F(Streams, APipedNativeTraceDumpsLikeTheFile) {
  ASSERT_EQ(run("convert " + load() + " -q -o " + path("t.blkrr")).status, 0);
  auto f = run("dump " + path("t.blkrr"));
  auto p = run("dump -", "cat '" + path("t.blkrr") + "'");
  ASSERT_EQ(f.status, 0) << f.out;
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_TRUE(p.out == f.out);
  EXPECT_TRUE(tmp_is_empty());
}

// A command that reads its input twice says so instead of guessing.
TEST_F(Streams, ASecondPassOverAPipeIsRefusedWithAReason) {
  auto r = run("convert - -q --from load --repeat 2 -o " + path("r.load"), "zcat '" + load() + "'");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("can be read only once"), std::string::npos) << r.out;
  EXPECT_TRUE(tmp_is_empty());
}

}  // namespace
}  // namespace blkrr
