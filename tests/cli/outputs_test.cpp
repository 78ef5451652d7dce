// The output rules of every command as a user meets them (docs/cli.md,
// "Outputs"): an existing file is replaced only with --overwrite (never with
// replay's --force), an unknown extension is named, errors point the right
// way (a load given to dump, a report directory's missing parents).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "tests/cli/test_cli_run.h"

namespace blkrr {
namespace {

using testing::blkrr_run;

class Outputs : public testing::ScratchDirTest {
 protected:
  Outputs() : ScratchDirTest("outputs") {}
  std::string load() const { return std::string(BLKRR_TEST_DATA) + "/windows-mssql.load.gz"; }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
  }
  std::string read(const std::string& name) {
    std::ifstream f(path(name));
    return std::string(std::istreambuf_iterator<char>(f), {});
  }
};

// Each command that writes a file, given one that exists: exit 2, the file
// untouched, and the one message; with --overwrite it is replaced.
TEST_F(Outputs, EveryCommandRefusesAnExistingFileUnlessOverwrite) {
  write("old", "keep me\n");
  const std::string old = path("old");
  const std::vector<std::vector<std::string>> cmds = {
      {"convert", "-q", load(), "-o", old},
      {"convert", "-q", std::string(BLKRR_TEST_DATA) + "/blkparse/fio-randrw.blkparse.txt.gz",
       "--dependencies", old},
      {"replay", "-q", load(), path("target.img"), "--allow-file", "--dry-run", "-o", old},
      {"replay", "-q", load(), path("target.img"), "--allow-file", "--dry-run", "--json-file", old},
      {"validate", "-q", load(), load(), "--json-file", old},
  };
  write("target.img", "");
  for (auto cmd : cmds) {
    auto r = blkrr_run(cmd);
    EXPECT_EQ(r.status, 2) << cmd[0] << ": " << r.out;
    EXPECT_NE(r.out.find(old + " exists; blkrr replaces no file unless asked: give --overwrite"),
              std::string::npos)
        << cmd[0] << ": " << r.out;
    EXPECT_EQ(read("old"), "keep me\n") << cmd[0];
  }
  // replay's --force (the device safety override) is not --overwrite.
  auto f = blkrr_run({"replay", "-q", load(), path("target.img"), "--allow-file", "--dry-run",
                      "--force", "-o", old});
  EXPECT_EQ(f.status, 2) << f.out;
  EXPECT_EQ(read("old"), "keep me\n");
  auto c = blkrr_run({"convert", "-q", load(), "-o", old, "--overwrite"});
  EXPECT_EQ(c.status, 0) << c.out;
  EXPECT_NE(read("old"), "keep me\n");
  // Not files: written as always.
  EXPECT_EQ(blkrr_run({"convert", "-q", load(), "-o", "/dev/null"}).status, 0);
}

TEST_F(Outputs, AReportDirectoryIsReplacedOnlyWithOverwriteAndMadeWithItsParents) {
  const std::string dir = path("a/b/");  // a/ does not exist
  auto r = blkrr_run({"report", "-q", "--gnuplot", "no-such-gnuplot", load(), "-o", dir});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(read("a/b/index.html").find("blkrr report"), std::string::npos);
  r = blkrr_run({"report", "-q", "--gnuplot", "no-such-gnuplot", load(), "-o", dir});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("holds index.html of an earlier run"), std::string::npos) << r.out;
  r = blkrr_run({"report", "-q", "--gnuplot", "no-such-gnuplot", load(), "-o", dir, "--overwrite"});
  EXPECT_EQ(r.status, 0) << r.out;
  // Re-reporting the directory from its saved data is what was asked.
  r = blkrr_run({"report", "-q", "--gnuplot", "no-such-gnuplot", "-o", dir, "--bins", "10"});
  EXPECT_EQ(r.status, 0) << r.out;
}

// `convert -o x.parquet` wrote a blkreplay load under that name without a word.
TEST_F(Outputs, AnUnknownExtensionIsNamedUnlessToSaysTheFormat) {
  auto r = blkrr_run({"convert", "-q", load(), "-o", path("x.parquet")});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("convert: warning: -o " + path("x.parquet") +
                       ": blkrr knows no format '.parquet'; writing a blkreplay load"),
            std::string::npos)
      << r.out;
  r = blkrr_run({"convert", "-q", load(), "-o", path("y.parquet"), "--to", "load"});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  r = blkrr_run({"convert", "-q", load(), "-o", path("z.load.gz")});
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
}

// `dump x.load.gz` said "bad magic".
TEST_F(Outputs, DumpOfALoadSaysItIsOneAndSuggestsConvert) {
  auto r = blkrr_run({"dump", load()});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find(load() +
                       " is a load input, not a native trace (.blkrr), which is what "
                       "dump reads: convert it first (blkrr convert " +
                       load() + " -o windows-mssql.blkrr)"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace blkrr
