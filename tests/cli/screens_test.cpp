// Progress lines on a terminal, without root: script(1) gives blkrr a
// pseudo-terminal. The input is a FIFO fed after 1.5 s, so the step lasts at
// least that long whatever the machine's speed (the line is due after 0.5 s).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/test_cli_run.h"

namespace fs = std::filesystem;

namespace blkrr {
namespace {

using testing::ScratchDirTest;
using testing::slurp;

class Screens : public ScratchDirTest {
 protected:
  Screens() : ScratchDirTest("screens") {}
  void SetUp() override {
    if (std::system("command -v script >/dev/null 2>&1") != 0)
      GTEST_SKIP() << "script(1) (util-linux) is needed for a pseudo-terminal";
    ScratchDirTest::SetUp();
  }

  // Runs `blkrr ARGS` on a terminal with `input` arriving late through the
  // FIFO path("in"); returns what the terminal showed.
  std::string on_terminal(const std::string& args) {
    const std::string load = std::string(BLKRR_TEST_DATA) + "/windows-mssql.load.gz";
    const std::string feed = "sleep 1.5; cat '" + load + "'";
    const std::string cmd = "cd '" + dir().string() + "' || exit 1; mkfifo in || exit 1; (" + feed +
                            ") > in & script -qfec \"'" BLKRR_BINARY "' " + args + "\" '" +
                            path("tty.log") + "' > /dev/null 2>&1";
    EXPECT_EQ(std::system(("bash -c \"" + escape(cmd) + "\"").c_str()), 0);
    return slurp(path("tty.log"));
  }
  static std::string escape(const std::string& s) {
    std::string o;
    for (char c : s) {
      if (c == '"' || c == '\\' || c == '$' || c == '`') o += '\\';
      o += c;
    }
    return o;
  }
};

TEST_F(Screens, ReportSaysWhatItReadsOnATerminal) {
  std::string tty = on_terminal("report in -o rep --gnuplot /nonexistent");
  EXPECT_NE(tty.find("\rreport: reading in ("), std::string::npos) << tty;
  EXPECT_NE(tty.find("read in: "), std::string::npos) << tty;
  // Piped (and with -q on a terminal), no progress line.
  fs::remove(path("in"));
  auto piped =
      testing::blkrr_run({"report", std::string(BLKRR_TEST_DATA) + "/windows-mssql.load.gz", "-o",
                          path("rep2"), "--gnuplot", "/nonexistent"});
  EXPECT_EQ(piped.status, 0) << piped.out;
  EXPECT_EQ(piped.out.find('\r'), std::string::npos) << piped.out;
}

}  // namespace
}  // namespace blkrr
