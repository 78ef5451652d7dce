// One meaning in every command, checked on the binary without root: device
// names and the exit status of one that names nothing, durations, -n COMM,
// and the flags two commands share (docs/cli.md). The commands stop at the
// device argument, before anything needs root.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/trace_format.h"
#include "tests/cli/test_cli_run.h"
#include "tests/cli/test_trace_fixture.h"

namespace blkrr::testing {
namespace {

const char* kNoDev = "nosuchdev9";

// The same unknown device: a usage error (2) naming it, in every command.
TEST(Consistency, UnknownDeviceExitsTwoInEveryCommand) {
  const std::vector<std::vector<std::string>> cases = {
      {"record", "-d", kNoDev},
      {"snoop", "-d", kNoDev},
      {"top", "-d", kNoDev},
      {"replay", "x.load.gz", kNoDev},
      {"devices", kNoDev},
      {"record", "-d", "/dev/nosuchdev9"},
      {"replay", "x.load.gz", "/dev/nosuchdev9"},
      {"replay", "x.load.gz", "4000:9"},
  };
  for (const auto& args : cases) {
    auto r = blkrr_run(args);
    EXPECT_EQ(r.status, 2) << args[0] << " " << args.back() << ": " << r.out;
    EXPECT_NE(r.out.find("nosuchdev9") == std::string::npos ? r.out.find("4000:9")
                                                            : r.out.find("nosuchdev9"),
              std::string::npos)
        << r.out;
  }
}

// A folder of sysfs that holds no device ("." under /sys/class/block) names
// no device either.
TEST(Consistency, ASysfsFolderThatIsNoDeviceExitsTwo) {
  auto r = blkrr_run({"devices", "."});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("device '.'"), std::string::npos) << r.out;
}

class ExitStatus : public ScratchDirTest {
 protected:
  ExitStatus() : ScratchDirTest("exit-status") {}
};

// An option value the input cannot use is the user's to change: exit 2, as
// any bad value (docs/cli.md); nothing is written. A damaged input stays 1.
TEST_F(ExitStatus, ConvertOptionsTheInputCannotUseExitTwo) {
  const std::string data = BLKRR_TEST_DATA, out = path("out.load");
  TraceHeader h;
  h.devices = {disk_sdz_with_sdz2()};
  auto w = TraceWriter::create(path("t.blkrr"), h);
  ASSERT_TRUE(w.ok()) << w.error().message;
  ASSERT_TRUE(w->close({}).ok());
  std::ofstream(path("m.csv")) << "128166372003061629,hm,1,Read,3221225472,4096,2043\n";
  const std::string head = "crafted\nstart ; sector; length ; op ;  x ; y\n";
  std::ofstream(path("two.load")) << head << "0.0 ; 1 ; 8 ; R ; 0.0 ; 0.0\n"
                                  << "1.0 ; 2 ; 8 ; W ; 0.0 ; 0.0\n";
  std::ofstream(path("bad.load")) << head << "0.0 ; 1 ; 8 ; X ; 0.0 ; 0.0\n";
  const std::string bp = data + "/blkparse/fio-randrw.blkparse.txt.gz";
  const std::string bt = data + "/blktrace/fio-randrw";
  const std::vector<std::vector<std::string>> cases = {
      {"convert", bp, "--device", "sda", "-o", out},                   // blkparse: MAJ:MIN only
      {"convert", bt, "--device", "nosuchdev9", "-o", out},            // names no device
      {"convert", path("m.csv"), "--device", "hm:x", "-o", out},       // no disk number
      {"convert", path("t.blkrr"), "--device", "sdq", "-o", out},      // not in the trace
      {"convert", bt, data + "/linux-mysql.load.gz", "-o", out},       // formats that do not mix
      {"convert", path("two.load"), "--timescale", "5e9", "-o", out},  // 1 s becomes 5e18 ns
  };
  for (const auto& args : cases) {
    auto r = blkrr_run(args);
    EXPECT_EQ(r.status, 2) << args[1] << " " << args[2] << ": " << r.out;
    EXPECT_FALSE(std::filesystem::exists(out)) << args[1] << " " << args[2];
  }
  auto fio = blkrr_run(
      {"convert", path("two.load"), "--fio-file", "/dev/lab disk", "-o", path("out.iolog")});
  EXPECT_EQ(fio.status, 2) << fio.out;
  auto bad = blkrr_run({"convert", path("bad.load"), "-o", out});
  EXPECT_EQ(bad.status, 1) << bad.out;
}

// -D 1m30s and the positional duration parse in record and snoop (the
// command then stops at the device, not at the duration).
TEST(Consistency, DurationsParseAlikeEverywhere) {
  const std::vector<std::vector<std::string>> cases = {
      {"record", "-d", kNoDev, "-D", "1m30s"}, {"record", "-d", kNoDev, "2"},
      {"record", "-d", kNoDev, "1h2m3.5s"},    {"snoop", "-d", kNoDev, "-D", "1m30s"},
      {"snoop", "-d", kNoDev, "1m30s"},        {"top", "-d", kNoDev, "1m30s", "2"},
  };
  for (const auto& args : cases) {
    auto r = blkrr_run(args);
    EXPECT_EQ(r.status, 2) << r.out;
    EXPECT_NE(r.out.find("unknown block device 'nosuchdev9'"), std::string::npos)
        << args[0] << " " << args.back() << ": " << r.out;
  }
  auto twice = blkrr_run({"record", "-D", "5", "2"});
  EXPECT_EQ(twice.status, 2);
  EXPECT_NE(twice.out.find("a duration twice"), std::string::npos) << twice.out;
  auto bad = blkrr_run({"record", "1x"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.out.find("not a duration: '1x'"), std::string::npos) << bad.out;
}

// -n COMM is the task name in top too (README: the same everywhere); a
// number gets iotop's -n NUM hint on stderr.
TEST(Consistency, TopTakesTheTaskName) {
  auto r = blkrr_run({"top", "-n", "fio", "-d", kNoDev});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown block device"), std::string::npos) << r.out;
  r = blkrr_run({"top", "-n", "0123456789abcdefgh"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("keeps 15 characters"), std::string::npos) << r.out;
  r = blkrr_run({"top", "-n", "5", "-d", kNoDev});
  EXPECT_NE(r.out.find("write blkrr top 1 5"), std::string::npos) << r.out;
  r = blkrr_run({"record", "-n", "0123456789abcdefgh"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("keeps 15 characters"), std::string::npos) << r.out;
}

// snoop's issue-time column is --issue; --start (replay's start TIME) still
// works there for now, with a note.
TEST(Consistency, SnoopIssueColumnAndTheOldSpelling) {
  auto r = blkrr_run({"snoop", "--start", "-d", kNoDev});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--start is now --issue"), std::string::npos) << r.out;
  r = blkrr_run({"snoop", "--issue", "-d", kNoDev});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.find("--start"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown block device"), std::string::npos) << r.out;
}

// --wrap and --scale choose the same mapping in replay and convert.
TEST(Consistency, ReplayTakesWrapAndScaleAsConvertDoes) {
  auto r = blkrr_run({"replay", "--wrap", "--scale", "x.load.gz", "y"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("use either --wrap or --scale, once"), std::string::npos) << r.out;
  auto h = blkrr_run({"replay", "--help"});
  EXPECT_NE(h.out.find("--wrap"), std::string::npos);
  EXPECT_NE(h.out.find("convert --scale DEVICE"), std::string::npos) << h.out;
  auto c = blkrr_run({"convert", "--help"});
  EXPECT_NE(c.out.find("as replay --wrap"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace blkrr::testing
