// A degenerate native trace: a few KB that expand to millions of identical
// records (blocks of 1 M records whose every column is elided; 64 blocks,
// 64 M records, is the worst case seen). `blkrr validate`
// against it must stay within a fixed memory bound, as `convert` does.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/cli/test_cli_run.h"
#include "core/trace_format.h"

namespace fs = std::filesystem;
using namespace blkrr;

namespace {

constexpr uint64_t kPerBlock = uint64_t{1} << 20;  // the most records a block may hold
// 4 M records: reading the 64 M of the worst case takes minutes on a loaded
// 2-core machine; 4 M held as records would take 350 MB, past the bound.
constexpr uint64_t kBlocks = 4;

// Writes a trace of one block of kPerBlock identical records, then repeats
// that block's bytes: the same block, CRC and all, kBlocks times.
void write_degenerate_trace(const std::string& path) {
  TraceHeader h;
  TraceWriter::Options o;
  o.records_per_block = static_cast<uint32_t>(kPerBlock);
  o.zlib_level = 9;
  auto w = TraceWriter::create(path, h, o);
  ASSERT_TRUE(w) << w.error().message;
  Request q;
  q.op = Op::kWrite;
  q.bytes = 4096;
  q.sector = 2048;
  q.issue_ns = 0;  // every column constant, the first record's issue delta too
  q.complete_ns = 100'000;
  for (uint64_t i = 0; i < kPerBlock; ++i) ASSERT_TRUE(w->append(q));
  ASSERT_TRUE(w->flush());
  const auto with_block = fs::file_size(path);
  ASSERT_TRUE(w->close({{"lost_events", 0}}));
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  const uint32_t hlen = static_cast<uint8_t>(bytes[12]) | static_cast<uint8_t>(bytes[13]) << 8 |
                        static_cast<uint8_t>(bytes[14]) << 16 |
                        static_cast<uint32_t>(static_cast<uint8_t>(bytes[15])) << 24;
  const size_t block_at = 16 + hlen + 4;
  const std::string block = bytes.substr(block_at, with_block - block_at);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes.substr(0, block_at);
  for (uint64_t i = 0; i < kBlocks; ++i) out << block;
  out << bytes.substr(with_block);
}

// AddressSanitizer reserves terabytes of address space and keeps freed
// memory in quarantine: under it the address-space limit and the RSS bound
// do not apply (the plain build checks them); the behaviour is still checked.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

struct Measured {
  int status = -1;
  long max_rss_kb = 0;
};

// Runs the binary with `args`, output discarded, under a 4 GiB address-space
// limit (so that a reader that holds every record fails fast instead of
// taking the machine's memory); its exit status and peak RSS.
Measured run_measured(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit lim = {uint64_t{4} << 30, uint64_t{4} << 30};
    if (!kAddressSanitizer) setrlimit(RLIMIT_AS, &lim);
    std::vector<char*> argv = {const_cast<char*>(BLKRR_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(126);
    execv(BLKRR_BINARY, argv.data());
    _exit(127);
  }
  Measured m;
  int st = 0;
  struct rusage ru = {};
  if (pid < 0 || wait4(pid, &st, 0, &ru) != pid) return m;
  m.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  m.max_rss_kb = ru.ru_maxrss;
  return m;
}

class DegenerateTrace : public blkrr::testing::ScratchDirTest {
 protected:
  DegenerateTrace() : ScratchDirTest("degenerate") {}
};

// 4 M identical records in a few KB: validate reads them all within a
// fixed bound (one block of 1 M decoded records, ~90 MB, is the largest
// part), names the repeats in its report, and exits 0.
TEST_F(DegenerateTrace, ValidateHoldsARepeatedRecordOnce) {
  const std::string trace = path("many.blkrr");
  write_degenerate_trace(trace);
  ASSERT_LT(fs::file_size(trace), 16u << 10) << "not a degenerate trace";
  std::ofstream(path("one.load")) << "start ; sector; length ; op ;  replay_delay=0 ; "
                                     "replay_duration=0\n0.0 ; 2048 ; 8 ; W ; 0 ; 0\n";
  auto dump = blkrr::testing::run_command("'" BLKRR_BINARY "' dump -H " + trace + " | tail -1");
  EXPECT_NE(dump.out.find("counter lost_events = 0"), std::string::npos) << dump.out;

  const Measured m =
      run_measured({"validate", "-q", path("one.load"), trace, "--json-file", path("v.json")});
  EXPECT_EQ(m.status, 0);
  EXPECT_GT(m.max_rss_kb, 0);
  if (!kAddressSanitizer) {
    EXPECT_LT(m.max_rss_kb, 320 * 1024) << "validate held " << m.max_rss_kb / 1024 << " MB";
  }
  const std::string report = blkrr::testing::slurp(path("v.json"));
  EXPECT_NE(report.find(std::to_string(kPerBlock * kBlocks - 1) +
                        " block-layer records repeated the one before them"),
            std::string::npos)
      << report.substr(0, 3000);
}

}  // namespace
