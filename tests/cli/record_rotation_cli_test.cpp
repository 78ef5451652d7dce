// The options of rotated recordings and the readers of their pieces, as a
// user runs them without root: refusals before the capture loads, and dump,
// convert and report of a set of pieces (one trace; gaps reported).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/rotation.h"
#include "core/trace_format.h"
#include "tests/cli/test_cli_run.h"

namespace fs = std::filesystem;
using namespace blkrr;

namespace {

using Run = blkrr::testing::CliRun;

Run blkrr(const std::vector<std::string>& args) {
  return blkrr::testing::blkrr_run(args);
}

class CliRotation : public blkrr::testing::ScratchDirTest {
 protected:
  CliRotation() : ScratchDirTest("cli-rotation") {}

  // Piece `seq` of recording `id`: requests issued at `issues` (ns), each
  // completing 1 ms later.
  std::string piece(const std::string& id, uint64_t seq, uint64_t start, uint64_t end,
                    const std::vector<uint64_t>& issues) {
    TraceHeader h;
    h.host = "db7";
    h.recording_id = id;
    h.piece = seq;
    h.piece_start_ns = start;
    h.mono_anchor_ns = start;
    h.real_anchor_ns = 1795749120ull * 1'000'000'000ull + (start - 1'000'000'000ull);
    const std::string p = piece_file_name(path("prod"), seq, h.real_anchor_ns);
    auto w = TraceWriter::create(p, h);
    EXPECT_TRUE(w.ok());
    for (uint64_t at : issues) {
      Request r;
      r.issue_ns = at;
      r.complete_ns = at + 1'000'000;
      r.dev = r.part = make_dev(8, 0);
      r.sector = at / 1000;
      r.bytes = 4096;
      r.set_comm("mysqld");
      EXPECT_TRUE(w->append(r).ok());
    }
    EXPECT_TRUE(w->close({{"piece_end_ns", end}, {"records_written", issues.size()}}).ok());
    return p;
  }
};

TEST_F(CliRotation, OutputOptionsAreCheckedBeforeTheCaptureLoads) {
  auto r = blkrr({"record", "--rotate", "1m", "-o", "-"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("-o - is refused"), std::string::npos) << r.out;
  r = blkrr({"record", "--keep", "3", "-o", path("x.blkrr")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("need --rotate or --rotate-size"), std::string::npos) << r.out;
  r = blkrr({"record", "--rotate", "0.5s", "-o", path("s")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("(1s or more)"), std::string::npos) << r.out;
  r = blkrr({"record", "--rotate-size", "100", "-o", path("s")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("(4k or more)"), std::string::npos) << r.out;
  r = blkrr({"record", "--rotate", "1m", "-o", path("nodir/s")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("does not exist"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_empty(dir()));
}

// The pieces given in any order are one trace: times kept, counters summed.
TEST_F(CliRotation, DumpConvertAndReportReadThePiecesAsOneTrace) {
  const auto p1 = piece("r1", 1, 1'000'000'000, 2'000'000'000, {1'500'000'000, 1'999'999'000});
  const auto p2 = piece("r1", 2, 2'000'000'000, 3'000'000'000, {2'000'000'000});
  auto d = blkrr({"dump", "--no-header", p2, p1});
  ASSERT_EQ(d.status, 0) << d.out;
  EXPECT_NE(d.out.find("0.000000000    0.001000000"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("0.500000000    0.501000000"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("# counter records_written = 3"), std::string::npos) << d.out;
  EXPECT_EQ(d.out.find("gap"), std::string::npos) << d.out;
  auto j = blkrr({"dump", "--json", p1, p2});
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_NE(j.out.find("\"recording\":{\"id\":\"r1\",\"pieces\":[{"), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"requests\":3"), std::string::npos) << j.out;

  auto c = blkrr({"convert", p1, p2, "-o", path("all.load")});
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_EQ(c.out.find("gap"), std::string::npos) << c.out;
  const std::string load = blkrr::testing::slurp(path("all.load"));
  // start times relative to the first request: 0, 0.499999 and 0.5 s (not moved)
  EXPECT_NE(load.find("0.499999000 ;      1999999"), std::string::npos) << load;
  EXPECT_NE(load.find("0.500000000 ;      2000000"), std::string::npos) << load;

  auto rep = blkrr({"report", p1, p2, "-o", path("rep"), "-q"});
  ASSERT_EQ(rep.status, 0) << rep.out;
  // One input, labelled by the stem.
  EXPECT_TRUE(fs::exists(path("rep/data/prod.requests.csv.gz"))) << rep.out;
}

TEST_F(CliRotation, GapsAndMixedRecordingsAreReported) {
  const auto p1 = piece("r1", 1, 1'000'000'000, 2'000'000'000, {1'500'000'000});
  const auto p3 = piece("r1", 3, 3'000'000'000, 4'000'000'000, {3'500'000'000});
  auto d = blkrr({"dump", p1, p3});
  ASSERT_EQ(d.status, 0) << d.out;
  EXPECT_NE(d.out.find("warning: gap in the recording: 1 piece(s) missing between"),
            std::string::npos)
      << d.out;
  auto c = blkrr({"convert", p1, p3, "-o", path("gap.load")});
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_NE(c.out.find("gap between rotated pieces"), std::string::npos) << c.out;
  // dump reads one recording at a time.
  const auto other = piece("r2", 4, 1'000'000'000, 2'000'000'000, {1'500'000'000});
  auto m = blkrr({"dump", p1, other});
  EXPECT_EQ(m.status, 2) << m.out;
  EXPECT_NE(m.out.find("is not a piece of the recording of"), std::string::npos) << m.out;
}

}  // namespace
