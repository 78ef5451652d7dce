// One reader behaviour: every command that reads an input (convert, dump,
// report, validate, replay) gives the same warnings, the same error and the
// same exit status for the same damaged input.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/test_cli_run.h"
#include "core/trace_format.h"

namespace fs = std::filesystem;
using namespace blkrr;

namespace {

uint32_t crc32_of(const std::string& s) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

const char kLoadHeader[] = "start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n";

// The "blkrr CMD: warning: TEXT" lines of an output, as TEXTs.
std::set<std::string> warnings_of(const std::string& out) {
  std::set<std::string> w;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("blkrr ", 0) != 0) continue;
    auto at = l.find(": warning: ");
    if (at != std::string::npos) w.insert(l.substr(at + 11));
  }
  return w;
}

class ReaderParity : public blkrr::testing::ScratchDirTest {
 protected:
  ReaderParity() : ScratchDirTest("parity") {}

  void SetUp() override {
    ScratchDirTest::SetUp();
    std::ofstream(path("good.load")) << kLoadHeader << "0.0 ; 8 ; 8 ; R ; 0 ; 0\n"
                                     << "0.001 ; 16 ; 8 ; W ; 0 ; 0\n";
    good_trace_ = native({1000, 2000, 3000}, "good.blkrr", 1000);
    std::ofstream(path("img")).close();
    fs::resize_file(path("img"), 64 << 20);
  }

  // A native trace of requests issued at `issue` (4 KiB writes).
  std::string native(const std::vector<uint64_t>& issue, const std::string& name,
                     uint32_t per_block) {
    TraceHeader h;
    TraceWriter::Options o;
    o.records_per_block = per_block;
    auto w = TraceWriter::create(path(name), h, o);
    EXPECT_TRUE(w);
    Request q;
    q.op = Op::kWrite;
    q.bytes = 4096;
    for (size_t i = 0; i < issue.size(); ++i) {
      q.issue_ns = issue[i];
      q.complete_ns = issue[i] + 500;
      q.sector = 8 * i;
      EXPECT_TRUE(w->append(q));
    }
    EXPECT_TRUE(w->close({{"lost_events", 0}}));
    return path(name);
  }

  // Every command that reads `in`; native traces also through dump, and as
  // the trace of validate (a load as the thing validated).
  std::vector<std::pair<std::string, blkrr::testing::CliRun>> run_all(const std::string& in,
                                                                      bool is_trace) {
    using blkrr::testing::blkrr_run;
    std::vector<std::pair<std::string, blkrr::testing::CliRun>> r;
    fs::remove_all(path("rep"));
    r.emplace_back("convert",
                   blkrr_run({"convert", "-q", "--overwrite", in, "-o", path("out.csv")}));
    // The records go to /dev/null: a warning must not land inside a line of them.
    if (is_trace)
      r.emplace_back("dump", blkrr::testing::run_command("'" BLKRR_BINARY "' dump -H '" + in +
                                                         "' 2>&1 >/dev/null"));
    r.emplace_back("report",
                   blkrr_run({"report", "-q", "--gnuplot", "true", in, "-o", path("rep")}));
    r.emplace_back("validate", is_trace ? blkrr_run({"validate", "-q", path("good.load"), in})
                                        : blkrr_run({"validate", "-q", in, good_trace_}));
    r.emplace_back("replay", blkrr_run({"replay", "-q", "--dry-run", "-t", "fullspeed",
                                        "--allow-file", in, path("img")}));
    return r;
  }

  // Every command: exit status `status`, `text` in its output, and the same
  // warnings as every other.
  void expect_alike(const std::string& in, bool is_trace, int status, const std::string& text) {
    auto runs = run_all(in, is_trace);
    const std::set<std::string> first = warnings_of(runs.front().second.out);
    for (const auto& [cmd, run] : runs) {
      SCOPED_TRACE(cmd + " " + in);
      EXPECT_EQ(run.status, status) << run.out.substr(0, 2000);
      EXPECT_NE(run.out.find(text), std::string::npos) << run.out.substr(0, 2000);
      EXPECT_EQ(warnings_of(run.out), first) << run.out.substr(0, 2000);
    }
  }

  std::string good_trace_;
};

TEST_F(ReaderParity, TruncatedNativeTraceWarnsAlikeAndExitsZero) {
  std::vector<uint64_t> t;
  for (uint64_t i = 0; i < 2500; ++i) t.push_back(1000 + i * 977);
  auto cut = native(t, "cut.blkrr", 1000);
  fs::resize_file(cut, fs::file_size(cut) - 100);
  auto runs = run_all(cut, true);
  expect_alike(cut, true, 0, "cut.blkrr' ends inside a block at offset");
  EXPECT_EQ(warnings_of(runs.front().second.out).size(), 1u) << runs.front().second.out;
}

TEST_F(ReaderParity, CorruptBlockLengthFailsAlike) {
  auto bad = native({1000, 2000, 3000}, "badlen.blkrr", 1000);
  std::fstream f(bad, std::ios::in | std::ios::out | std::ios::binary);
  uint8_t pre[16];
  f.read(reinterpret_cast<char*>(pre), 16);
  const uint32_t hlen = pre[12] | pre[13] << 8 | pre[14] << 16 | uint32_t(pre[15]) << 24;
  f.seekp(16 + hlen + 4 + 12);  // the first block's compressed length
  const char huge[4] = {'\xff', '\xff', '\xff', '\x7f'};
  f.write(huge, 4);
  f.close();
  expect_alike(bad, true, 1, "badlen.blkrr': corrupt block header at offset");
}

TEST_F(ReaderParity, NativeTimesCenturiesApartFailAlike) {
  auto far = native({1000, 8'400'000'000'000'000'000ull}, "far.blkrr", 1000);
  expect_alike(far, true, 1, "a request starts more than 146 years after the first one");
}

TEST_F(ReaderParity, LoadCutMidLineFailsAlike) {
  std::ofstream(path("cutline.load")) << kLoadHeader << "0.0 ; 8 ; 8 ; R ; 0 ; 0\n0.5 ; 1234";
  expect_alike(path("cutline.load"), false, 1, "cutline.load:3: too few ';' fields");
}

TEST_F(ReaderParity, LoadWithoutItsLastNewlineWarnsAlike) {
  std::ofstream(path("nonl.load")) << kLoadHeader << "0.0 ; 8 ; 8 ; R ; 0 ; 0\n0.5 ; 16 ; 8 ; W";
  expect_alike(path("nonl.load"), false, 0, "the last line without a newline (file cut off?)");
}

TEST_F(ReaderParity, LoadTimesCenturiesApartFailAlike) {
  std::ofstream(path("far.load")) << kLoadHeader << "0.0 ; 8 ; 8 ; R ; 0 ; 0\n"
                                  << "8400000000.5 ; 16 ; 8 ; W ; 0 ; 0\n";
  expect_alike(path("far.load"), false, 1,
               "far.load:3: a request starts more than 146 years after the first one");
}

// A header that is valid JSON but means nothing blkrr can read.
TEST_F(ReaderParity, NativeHeaderMeaningIsCheckedAlike) {
  auto good = native({1000, 2000}, "h.blkrr", 1000);
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string json = bytes.substr(16, (bytes[12] & 0xff) | (bytes[13] & 0xff) << 8);
  const std::string rest = bytes.substr(16 + json.size() + 4);
  auto with_header = [&](const std::string& name, const std::string& j) {
    std::string out = bytes.substr(0, 12);
    for (int i = 0; i < 4; ++i) out += static_cast<char>(j.size() >> (8 * i));
    out += j;
    const uint32_t c = crc32_of(j);
    for (int i = 0; i < 4; ++i) out += static_cast<char>(c >> (8 * i));
    std::ofstream(path(name), std::ios::binary) << out << rest;
    return path(name);
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string j = json;
    auto at = j.find(from);
    EXPECT_NE(at, std::string::npos) << from << " in " << j;
    if (at != std::string::npos) j.replace(at, from.size(), to);
    return j;
  };
  expect_alike(with_header("fmt.blkrr", replace("\"blkrr-trace\"", "\"blkrr-trash\"")), true, 1,
               "'format' is \"blkrr-trash\", not \"blkrr-trace\"");
  expect_alike(with_header("clk.blkrr", replace("\"CLOCK_MONOTONIC\"", "\"tuesday\"")), true, 1,
               "'clock' is \"tuesday\", which is not a clock");
  expect_alike(with_header("dev.blkrr", replace("\"devices\":[]", "\"devices\":\"sda\"")), true, 1,
               "'devices' is \"sda\", not an array");
  expect_alike(with_header("dup.blkrr", replace("{", "{\"host\":\"a\",")), true, 1,
               "key 'host' appears twice");
  // A trailer counter below zero ("TRLR", length, CRC, JSON at the end).
  const std::string trailer = "{\"lost_events\":-5}";
  std::string neg = bytes.substr(0, bytes.rfind("TRLR")) + "TRLR";
  for (uint32_t v : {static_cast<uint32_t>(trailer.size()), crc32_of(trailer)})
    for (int i = 0; i < 4; ++i) neg += static_cast<char>(v >> (8 * i));
  std::ofstream(path("neg.blkrr"), std::ios::binary) << neg << trailer;
  expect_alike(path("neg.blkrr"), true, 1,
               "counter 'lost_events' is -5: counters cannot be negative or fractional");
}

}  // namespace
