// The blkrr binary as a user runs it, without root: help and exit codes of
// every subcommand, format round trips through `convert`, `dump` of a native
// trace, and clear errors (with the position) on damaged inputs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "converters/load_format.h"
#include "tests/cli/test_cli_run.h"
#include "tests/cli/test_trace_fixture.h"
#include "core/trace_format.h"

namespace fs = std::filesystem;
using namespace blkrr;

namespace {

using Run = blkrr::testing::CliRun;

// Runs `blkrr ARGS` through the shell, stdout and stderr merged.
Run blkrr(const std::vector<std::string>& args) {
  return blkrr::testing::blkrr_run(args);
}

// Runs a bash command line (redirections, FIFOs, process substitution);
// "BLKRR" in it is replaced by the binary.
Run shell(std::string cmd) {
  for (size_t at; (at = cmd.find("BLKRR")) != std::string::npos;)
    cmd.replace(at, 5, "'" BLKRR_BINARY "'");
  std::string quoted;
  for (char c : cmd) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return blkrr::testing::run_command("bash -c '" + quoted + "' 2>&1");
}

size_t count_lines(const std::string& s, const std::string& prefix = "") {
  std::istringstream in(s);
  size_t n = 0;
  for (std::string l; std::getline(in, l);)
    if (l.rfind(prefix, 0) == 0) ++n;
  return n;
}

std::vector<LoadRecord> read_load(const std::string& path) {
  std::vector<LoadRecord> out;
  auto rd = LoadReader::open(path);
  if (!rd) {
    ADD_FAILURE() << rd.error().message;
    return out;
  }
  LoadRecord r;
  while (true) {
    auto n = rd->next(r);
    if (!n) {
      ADD_FAILURE() << n.error().message;
      break;
    }
    if (!*n) break;
    out.push_back(r);
  }
  return out;
}

class Cli : public blkrr::testing::ScratchDirTest {
 protected:
  Cli() : ScratchDirTest("cli") {}
};

const char* const kCommands[] = {"record",   "top",    "snoop",   "convert", "replay",
                                 "validate", "report", "devices", "dump",    "features"};

TEST_F(Cli, EveryCommandHasHelpWithExamples) {
  auto top = blkrr({"--help"});
  EXPECT_EQ(top.status, 0);
  for (const char* c : kCommands) {
    EXPECT_NE(top.out.find(std::string("  ") + c + " "), std::string::npos) << c;
    auto r = blkrr({c, "--help"});
    EXPECT_EQ(r.status, 0) << c << ": " << r.out;
    EXPECT_NE(r.out.find("Usage: blkrr " + std::string(c)), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Examples:"), std::string::npos) << c;
  }
}

TEST_F(Cli, UnknownCommandsAndOptionsExitTwoWithAMessage) {
  auto r = blkrr({"frobnicate"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown command 'frobnicate'"), std::string::npos) << r.out;
  r = blkrr({"dump", "--no-such-option", "x.blkrr"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--no-such-option"), std::string::npos) << r.out;
  EXPECT_EQ(blkrr({}).status, 2);
}

// Usage errors of the commands' own checks: exit 2, the command named once.
TEST_F(Cli, UsageErrorsNameTheCommandOnce) {
  const std::vector<std::vector<std::string>> cases = {
      {"top", "-q"},   {"top", "--disktime", "--percent"},    {"top", "0"}, {"top", "1", "x"},
      {"snoop", "xx"}, {"snoop", "-n", "0123456789abcdefgh"},
  };
  for (const auto& args : cases) {
    auto r = blkrr(args);
    EXPECT_EQ(r.status, 2) << args[0] << " " << args[1] << ": " << r.out;
    EXPECT_EQ(r.out.rfind("blkrr " + args[0] + ": ", 0), 0u) << r.out;
    EXPECT_EQ(r.out.find("blkrr " + args[0] + ": blkrr"), std::string::npos)
        << "command name printed twice: " << r.out;
  }
}

// The test-only fault injection refuses a value it cannot use, before
// anything is attached, and names the variable and the value: a bad value,
// exit status 2.
TEST_F(Cli, BadFaultInjectionValueIsAClearError) {
  for (const char* bad : {"abc", "-3", "99999999999"}) {
    setenv("BLKRR_FAULT_SKIP_COMPLETION", bad, 1);
    auto r = blkrr({"snoop", "0.1"});
    unsetenv("BLKRR_FAULT_SKIP_COMPLETION");
    EXPECT_EQ(r.status, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find(std::string("blkrr snoop: BLKRR_FAULT_SKIP_COMPLETION='") + bad +
                         "': expected a count N"),
              std::string::npos)
        << r.out;
  }
}

// BLKRR_DENY takes only the names of optional features: a typo is an error
// that names it, for `features` and for every capturing command, before
// anything is loaded.
TEST_F(Cli, BadDenyValueIsAClearError) {
  setenv("BLKRR_DENY", "iter,kprobes", 1);
  auto f = blkrr({"features"});
  auto s = blkrr({"snoop", "0.1"});
  unsetenv("BLKRR_DENY");
  EXPECT_EQ(f.status, 2) << f.out;
  EXPECT_NE(f.out.find("blkrr features: BLKRR_DENY='iter,kprobes': unknown feature 'kprobes'"),
            std::string::npos)
      << f.out;
  EXPECT_EQ(s.status, 2) << s.out;
  EXPECT_NE(s.out.find("unknown feature 'kprobes'"), std::string::npos) << s.out;
}

// `blkrr features` prints every probe, says what a denied feature costs, and
// its JSON names the capture plan; exit 0 exactly when capture can run.
TEST_F(Cli, FeaturesReportsEveryProbeAndTheDenials) {
  setenv("BLKRR_DENY", "io_start,insert", 1);
  auto t = blkrr({"features"});
  auto j = blkrr({"features", "--json"});
  unsetenv("BLKRR_DENY");
  for (const char* name : {"btf", "tp_btf", "ringbuf", "map_iter", "block_io_start",
                           "block_io_done", "block_rq_insert", "capabilities"})
    EXPECT_NE(t.out.find(name), std::string::npos) << name << ": " << t.out;
  const bool possible = t.out.find("capture: possible") != std::string::npos;
  EXPECT_EQ(t.status, possible ? 0 : 1) << t.out;
  auto doc = nlohmann::json::parse(j.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << j.out;
  EXPECT_EQ(doc.at("schema"), nlohmann::json({{"name", "blkrr.features"}, {"version", 1}}));
  EXPECT_EQ(doc.at("capture_possible").get<bool>(), possible);
  EXPECT_EQ(doc.at("capture_features").at("attribution"), "block_rq_issue");  // io_start denied
  EXPECT_EQ(doc.at("capture_features").at("denied"), "insert,io_start");
  bool found = false;
  for (const auto& row : doc.at("features"))
    if (row.at("name") == "block_io_start") {
      found = true;
      EXPECT_FALSE(row.at("available").get<bool>());
      if (t.out.find("block_io_start                   optional no ") == std::string::npos) {
        EXPECT_EQ(row.at("detail"), "switched off by BLKRR_DENY=io_start");
      }
    }
  EXPECT_TRUE(found);
}

// record, top and snoop share one -p and one -d: the same verdicts and
// messages, exit status 2, before anything is attached (no root needed).
TEST_F(Cli, CaptureCommandsRejectBadPidsAndDevicesAlike) {
  for (const char* c : {"record", "top", "snoop"}) {
    auto r = blkrr({c, "-p", "x"});
    EXPECT_EQ(r.status, 2) << c << ": " << r.out;
    EXPECT_NE(r.out.find("blkrr " + std::string(c) + ": bad value 'x' for -p: bad process id 'x'"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("blkrr " + std::string(c) + ": blkrr"), std::string::npos)
        << "command name printed twice: " << r.out;
    r = blkrr({c, "-p", "0"});
    EXPECT_EQ(r.status, 2) << c << ": " << r.out;
    r = blkrr({c, "-p", "2147483646"});  // above any pid_max
    EXPECT_EQ(r.status, 2) << c << ": " << r.out;
    EXPECT_NE(r.out.find("-p 2147483646: no such process"), std::string::npos) << r.out;
    r = blkrr({c, "-d", "no-such-disk"});
    EXPECT_EQ(r.status, 2) << c << ": " << r.out;
    EXPECT_NE(r.out.find("-d no-such-disk: unknown block device 'no-such-disk'"), std::string::npos)
        << r.out;
  }
}

// record --cgroup takes a cgroup v2 directory and says what else it got,
// before the capture loads (so this runs without root).
TEST_F(Cli, RecordCgroupMustBeACgroupV2Directory) {
  auto r = blkrr({"record", "--cgroup", "/tmp", "-D", "1", "-o", path("c.blkrr")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--cgroup '/tmp' is not a cgroup v2 directory"), std::string::npos) << r.out;
  r = blkrr({"record", "--cgroup", "no/such/group", "-D", "1", "-o", path("c.blkrr")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("--cgroup 'no/such/group': no such cgroup directory"), std::string::npos)
      << r.out;
}

// load -> fio iolog -> native -> load keeps every request, and `dump --json`
// prints one object per request.
// record and replay take --start-at alike (one parser in core/start_at.h), and
// record refuses an instant in the past before it loads the capture (so this
// runs without root).
// A bio-based device (zram here; dm and md in production) has no requests:
// every command that captures records its bios where the kernel traces bio
// completions (docs/capture.md, "Bio-level capture"), and refuses it with
// the reason elsewhere, instead of showing nothing.
TEST_F(Cli, CapturingABioBasedDeviceIsBioLevelOrRefusedNotSilentlyEmpty) {
  if (!fs::exists("/sys/block/zram0") || fs::exists("/sys/block/zram0/mq"))
    GTEST_SKIP() << "no bio-based zram0 on this machine (the unit test covers dm and md)";
  auto f = nlohmann::json::parse(blkrr::testing::blkrr_run({"features", "--json"}, false).out,
                                 nullptr, false);
  ASSERT_FALSE(f.is_discarded());
  int bio_tracepoints = 0;  // block_bio_queue and block_bio_complete
  for (const auto& row : f["features"])
    if (row.value("name", std::string()).rfind("block_bio_", 0) == 0)
      bio_tracepoints += row.value("available", false) ? 1 : 0;
  const bool bio_level = bio_tracepoints == 2;
  for (std::vector<std::string> args :
       {std::vector<std::string>{"record", "-d", "zram0", "-D", "1", "-o", path("z.blkrr")},
        {"snoop", "-d", "zram0", "1"},
        {"top", "-d", "zram0", "0.2", "1"}}) {
    auto r = blkrr(args);
    if (bio_level) {  // selected at the bio level (record still refuses a zram0 of no size)
      EXPECT_EQ(r.out.find("no requests of its own"), std::string::npos)
          << args[0] << ": " << r.out;
      continue;
    }
    EXPECT_EQ(r.status, 2) << args[0] << ": " << r.out;
    EXPECT_NE(r.out.find("-d zram0: zram0 is a bio-based device with no requests of its own"),
              std::string::npos)
        << args[0] << ": " << r.out;
    EXPECT_NE(r.out.find("at the bio level only where the kernel traces bio completions"),
              std::string::npos)
        << args[0] << ": " << r.out;
  }
  fs::remove(path("z.blkrr"));
  auto d = blkrr({"devices", "zram0"});
  EXPECT_EQ(d.status, 0) << d.out;
  EXPECT_NE(d.out.find("bio-based, no requests of its own"), std::string::npos) << d.out;
  auto j = nlohmann::json::parse(blkrr::testing::blkrr_run({"devices", "-j", "zram0"}, false).out);
  EXPECT_EQ(j["devices"][0]["has_requests"], false) << j.dump();
}

TEST_F(Cli, StartAtIsParsedAlikeAndAPastInstantIsRefusedEarly) {
  for (const char* cmd : {"record", "replay"}) {
    auto r = blkrr({cmd, "--start-at", "soon", "a", "b"});
    EXPECT_EQ(r.status, 2) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("bad value 'soon' for --start-at: 'soon' is not a UNIX time in seconds"),
              std::string::npos)
        << cmd << ": " << r.out;
  }
  const std::string past = std::to_string(time(nullptr) - 10);
  auto r = blkrr({"record", "-D", "1", "--start-at", past, "-o", path("x.blkrr")});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("s in the past; choose an instant in the future"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(path("x.blkrr")));
  EXPECT_NE(blkrr({"record", "--help"}).out.find("--start-at UNIX_TIME"), std::string::npos);
}

// An iolog names its target only when --fio-file asks; else a placeholder
// and a warning that --quiet does not silence (it is no summary).
TEST_F(Cli, ConvertToFioWarnsOfThePlaceholderUnlessATargetIsNamed) {
  std::string load = std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz";
  auto a = blkrr({"convert", load, "--window", "0:1", "-q", "-o", path("a.iolog")});
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_NE(a.out.find("warning: the fio iolog targets the placeholder /dev/sdX"),
            std::string::npos)
      << a.out;
  auto b = blkrr(
      {"convert", load, "--window", "0:1", "--fio-file", path("lab.img"), "-o", path("b.iolog")});
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_EQ(b.out.find("warning"), std::string::npos) << b.out;
  std::ifstream f(path("b.iolog"));
  std::string first, second;
  std::getline(f, first);
  std::getline(f, second);
  EXPECT_EQ(second, "0 " + path("lab.img") + " add");
}

TEST_F(Cli, ConvertRoundTripThroughFioAndNativeKeepsEveryRequest) {
  std::string load = std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz";
  auto a = blkrr({"convert", load, "--window", "0:30", "-o", path("w.load.gz")});
  ASSERT_EQ(a.status, 0) << a.out;
  auto b = blkrr({"convert", path("w.load.gz"), "-o", path("w.iolog")});
  ASSERT_EQ(b.status, 0) << b.out;
  auto c = blkrr({"convert", path("w.iolog"), "-o", path("w.blkrr")});
  ASSERT_EQ(c.status, 0) << c.out;
  auto d = blkrr({"convert", path("w.blkrr"), "-o", path("back.load")});
  ASSERT_EQ(d.status, 0) << d.out;

  // The same requests in the same order; fio v3 iologs keep milliseconds,
  // so start times agree to the millisecond.
  auto orig = read_load(path("w.load.gz"));
  auto back = read_load(path("back.load"));
  ASSERT_GT(orig.size(), 500u);
  ASSERT_EQ(back.size(), orig.size());
  for (size_t i = 0; i < orig.size(); ++i) {
    EXPECT_EQ(back[i].sector, orig[i].sector) << i;
    EXPECT_EQ(back[i].sectors, orig[i].sectors) << i;
    EXPECT_EQ(back[i].op, orig[i].op) << i;
    EXPECT_LT(std::llabs(back[i].start_ns - orig[i].start_ns), 1'000'000) << i;
  }
  const size_t load_reqs = orig.size();

  auto j = blkrr({"dump", "--json", path("w.blkrr")});
  ASSERT_EQ(j.status, 0) << j.out.substr(0, 400);
  size_t requests = 0;
  for (size_t at = 0; (at = j.out.find("\"type\":\"request\"", at)) != std::string::npos; ++at)
    ++requests;
  EXPECT_EQ(requests, load_reqs);
  // The header comes first, the counters last.
  EXPECT_EQ(j.out.rfind("{\"", 0), 0u);
  EXPECT_NE(j.out.find("\"type\":\"header\""), std::string::npos);
}

TEST_F(Cli, DumpNamesDevicesAsTheRecordingHostDid) {
  TraceHeader h;
  h.tool_version = "cli_test";
  const DeviceInfo d = blkrr::testing::disk_sdz_with_sdz2();
  const PartitionInfo& p = d.partitions.front();
  h.devices.push_back(d);
  auto w = TraceWriter::create(path("t.blkrr"), h);
  ASSERT_TRUE(w.ok()) << w.error().message;
  Request r;
  r.issue_ns = 1000;
  r.complete_ns = 51000;
  r.dev = d.dev;
  r.part = p.dev;
  r.sector = 4096;
  r.bytes = 4096;
  r.set_comm("mysqld");
  ASSERT_TRUE(w->append(r).ok());
  r.part = r.dev = make_dev(259, 3);  // a device the header does not know
  ASSERT_TRUE(w->append(r).ok());
  ASSERT_TRUE(w->close({}).ok());

  auto t = blkrr({"dump", "--no-header", path("t.blkrr")});
  ASSERT_EQ(t.status, 0) << t.out;
  EXPECT_NE(t.out.find(" sdz2 "), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(" 259:3 "), std::string::npos) << t.out;
  auto j = blkrr({"dump", "--json", path("t.blkrr")});
  ASSERT_EQ(j.status, 0) << j.out;
  EXPECT_NE(j.out.find("\"device\":\"sdz2\""), std::string::npos) << j.out;
  EXPECT_NE(j.out.find("\"device\":\"259:3\""), std::string::npos) << j.out;
}

// Damaged inputs: a non-zero exit status and a message naming the file and
// the place, never a crash.
TEST_F(Cli, DamagedInputsFailWithFileAndPosition) {
  {
    std::ofstream f(path("bad.iolog"));
    f << "fio version 3 iolog\n0 /dev/sda add\n0 /dev/sda open\n100 /dev/sda read 0 4096\n"
      << "200 /dev/sda read twelve 4096\n";
  }
  auto r = blkrr({"convert", path("bad.iolog"), "-o", path("x.load")});
  EXPECT_NE(r.status, 0);
  EXPECT_LT(r.status, 128) << "crashed: " << r.out;
  EXPECT_NE(r.out.find("bad.iolog:5"), std::string::npos) << r.out;

  // A native trace of three blocks whose last block was cut off (a killed
  // recording): the complete blocks are read, with a warning that says where.
  TraceHeader h;
  TraceWriter::Options o;
  o.records_per_block = 1000;
  auto w = TraceWriter::create(path("cut.blkrr"), h, o);
  ASSERT_TRUE(w.ok());
  Request q;
  q.bytes = 4096;
  for (int i = 0; i < 2500; ++i) {
    q.issue_ns = 1000 + uint64_t(i) * 977;
    q.sector = uint64_t(i) * 8;
    ASSERT_TRUE(w->append(q).ok());
  }
  ASSERT_TRUE(w->close({}).ok());
  auto size = fs::file_size(path("cut.blkrr"));
  fs::resize_file(path("cut.blkrr"), size - 100);
  r = blkrr({"dump", "--no-header", path("cut.blkrr")});
  EXPECT_EQ(r.status, 0) << r.out.substr(0, 300);
  EXPECT_EQ(count_lines(r.out, "0."), 2000u);
  EXPECT_NE(r.out.find("cut.blkrr' ends inside a block at offset"), std::string::npos);

  // One byte changed inside the first block: an error naming file and offset.
  {
    std::fstream f(path("cut.blkrr"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size / 4));
    char c = 0;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x5a);
    f.seekp(static_cast<std::streamoff>(size / 4));
    f.write(&c, 1);
  }
  r = blkrr({"dump", "--no-header", path("cut.blkrr")});
  EXPECT_NE(r.status, 0);
  EXPECT_LT(r.status, 128) << "crashed";
  auto err = r.out.substr(r.out.rfind("blkrr dump"));
  EXPECT_NE(err.find("cut.blkrr"), std::string::npos) << err;
  EXPECT_NE(err.find("offset"), std::string::npos) << err;

  // Not a trace at all.
  {
    std::ofstream f(path("junk.blkrr"));
    f << "hello world, not a trace\n";
  }
  r = blkrr({"dump", path("junk.blkrr")});
  EXPECT_NE(r.status, 0);
  EXPECT_LT(r.status, 128);
  EXPECT_NE(r.out.find("junk.blkrr"), std::string::npos) << r.out;
}

// Issue 11: an empty replay result is not "COMPLETE 100 % of 0" with exit 0.
TEST_F(Cli, ValidateOfAnEmptyReplayIsAnError) {
  {
    auto w = LoadWriter::create(path("empty.replay.gz"), LoadKind::kReplay, {"empty"});
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->close());
    TraceHeader h;
    auto t = TraceWriter::create(path("t.blkrr"), h);
    ASSERT_TRUE(t);
    ASSERT_TRUE(t->close({}));
  }
  auto r = blkrr({"validate", path("empty.replay.gz"), path("t.blkrr")});
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("nothing to validate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("empty.replay.gz"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("COMPLETE"), std::string::npos) << r.out;
  r = blkrr({"validate", "--fail-incomplete", path("empty.replay.gz"), path("t.blkrr")});
  EXPECT_EQ(r.status, 1) << r.out;
}

// ---- issue 11: bad input and faults ----

const char kLoadHead[] = "start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0\n";

TEST_F(Cli, PipesFifosAndStdinWorkWithoutFrom) {
  std::string bp = std::string(BLKRR_TEST_DATA) + "/blkparse/fio-randrw.blkparse.txt.gz";
  auto ref = blkrr({"convert", bp, "-o", path("ref.load")});
  ASSERT_EQ(ref.status, 0) << ref.out;
  const size_t n = read_load(path("ref.load")).size();
  ASSERT_GT(n, 1000u);
  // Standard input, process substitution and a FIFO: detection reads the
  // same bytes as the reader (used to give 0 or part of the requests, or hang).
  auto a = shell("BLKRR convert - -o " + path("a.load") + " < " + bp);
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_EQ(read_load(path("a.load")).size(), n);
  auto b = shell("BLKRR convert <(zcat " + bp + ") -o " + path("b.load"));
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_EQ(read_load(path("b.load")).size(), n);
  auto c = shell("mkfifo " + path("f") + " && (zcat " + bp + " > " + path("f") +
                 " &) && timeout 60 BLKRR convert " + path("f") + " -o " + path("c.load"));
  ASSERT_EQ(c.status, 0) << c.out;
  EXPECT_EQ(read_load(path("c.load")).size(), n);
  // replay reads its load twice (the end sector, then the run): it hung on a
  // FIFO whose writer had left.
  auto d = shell("truncate -s 64M " + path("img") + " && mkfifo " + path("g") + " && (cat " +
                 path("ref.load") + " > " + path("g") + " &) && timeout 60 BLKRR replay " +
                 path("g") + " " + path("img") +
                 " --allow-file --dry-run --timing fullspeed --quiet -o " + path("d.replay"));
  ASSERT_EQ(d.status, 0) << d.out;
  EXPECT_EQ(read_load(path("d.replay")).size(), n);
}

TEST_F(Cli, OutputsNeverOverwriteInputs) {
  std::string load = path("in.load");
  {
    std::ofstream f(load);
    f << kLoadHead << "0.1 ; 8 ; 8 ; R\n";
  }
  fs::create_symlink(load, path("link.load"));
  const std::string before = read_load(load).empty() ? "" : "ok";
  ASSERT_EQ(before, "ok");
  // replay -o / --json naming the load (also through a link): refused before
  // the device is even opened.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"replay", load, "/dev/null", "-o", load},
           {"replay", load, "/dev/null", "--json-file", path("link.load")},
           {"validate", load, load, "--json-file", load},
           {"convert", load, "-o", path("link.load")}}) {
    auto r = blkrr(args);
    EXPECT_EQ(r.status, 2) << args[0] << ": " << r.out;
    EXPECT_NE(r.out.find("is the input " + load), std::string::npos) << r.out;
    EXPECT_EQ(read_load(load).size(), 1u) << args[0];
  }
  // Standard input redirected from the output (was replaced by its conversion).
  auto s = shell("BLKRR convert - -o " + load + " < " + load);
  EXPECT_EQ(s.status, 2) << s.out;
  EXPECT_NE(s.out.find("is the input - (standard input)"), std::string::npos) << s.out;
  EXPECT_EQ(read_load(load).size(), 1u);
  // --json-file into a missing directory fails at once, saying why.
  auto m = blkrr({"replay", load, "/dev/null", "--json-file", path("nodir/x.json")});
  EXPECT_EQ(m.status, 2) << m.out;
  EXPECT_NE(m.out.find("nodir does not exist"), std::string::npos) << m.out;
}

// Outputs the first checks missed: a blktrace capture named by its base
// name, the report directory (checked after reading every input; files in
// its data/ and plots/ are replaced), replay's device being its load,
// record's -o (checked after loading the capture).
TEST_F(Cli, EveryWriterChecksItsOutputBeforeWork) {
  std::string bt = std::string(BLKRR_TEST_DATA) + "/blktrace/fio-randrw.blktrace.";
  fs::copy_file(bt + "0", path("cap.blktrace.0"));
  fs::copy_file(bt + "1", path("cap.blktrace.1"));
  const auto size1 = fs::file_size(path("cap.blktrace.1"));
  auto c = blkrr({"convert", path("cap"), "-o", path("cap.blktrace.1")});
  EXPECT_EQ(c.status, 2) << c.out;
  EXPECT_NE(c.out.find("is the input " + path("cap.blktrace.1")), std::string::npos) << c.out;
  EXPECT_EQ(fs::file_size(path("cap.blktrace.1")), size1);

  fs::create_directories(path("rep/plots"));
  {
    std::ofstream f(path("rep/plots/in.load"));
    f << kLoadHead << "0.1 ; 8 ; 8 ; R\n";
  }
  auto r = blkrr({"report", path("rep/plots/in.load"), "-o", path("rep"), "-q"});
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("the input " + path("rep/plots/in.load") + " is in " + path("rep/plots")),
            std::string::npos)
      << r.out;
  auto fl = blkrr({"report", "--fleet", path("rep/plots/in.load"), "-o", path("rep"), "-q"});
  EXPECT_EQ(fl.status, 2) << fl.out;
  EXPECT_NE(fl.out.find(" is in " + path("rep/plots")), std::string::npos) << fl.out;
  EXPECT_EQ(read_load(path("rep/plots/in.load")).size(), 1u);
  EXPECT_FALSE(fs::exists(path("rep/report.json")));
  // A report directory is made with its missing parents (docs/cli.md, "Outputs").
  r = blkrr(
      {"report", path("rep/plots/in.load"), "-o", path("nodir/rep"), "-q", "--gnuplot", "true"});
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(fs::exists(path("nodir/rep/report.json")));

  // replay writes to its device: a device that is the load overwrote it.
  auto d = blkrr({"replay", path("rep/plots/in.load"), path("rep/plots/in.load"), "--allow-file",
                  "--timing", "fullspeed", "--quiet"});
  EXPECT_EQ(d.status, 2) << d.out;
  EXPECT_NE(d.out.find("is the load " + path("rep/plots/in.load")), std::string::npos) << d.out;
  EXPECT_EQ(read_load(path("rep/plots/in.load")).size(), 1u);

  auto rec = blkrr({"record", "-o", path("missing/x.blkrr"), "--duration", "1"});
  EXPECT_EQ(rec.status, 2) << rec.out;
  EXPECT_NE(rec.out.find("the directory " + path("missing") + " does not exist"), std::string::npos)
      << rec.out;
}

TEST_F(Cli, WriteErrorsFailAndLeaveNoPartialOutput) {
  std::string load = std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz";
  ASSERT_EQ(blkrr({"convert", load, "--window", "0:5", "-o", path("t.blkrr")}).status, 0);
  auto d = shell("BLKRR dump " + path("t.blkrr") + " > /dev/full");
  EXPECT_NE(d.status, 0) << d.out;
  EXPECT_LT(d.status, 128) << d.out;
  auto j = shell("BLKRR dump --json " + path("t.blkrr") + " > /dev/full");
  EXPECT_NE(j.status, 0) << j.out;
  for (const char* cmd : {"BLKRR --version", "BLKRR --help", "BLKRR devices"}) {
    auto r = shell(std::string(cmd) + " > /dev/full");
    EXPECT_EQ(r.status, 1) << cmd << ": " << r.out;  // --version and --help said 0
    EXPECT_NE(r.out.find("cannot write to standard output"), std::string::npos) << r.out;
  }
  // A full file system: a 64 KiB tmpfs cannot hold the load; nothing is left.
  if (geteuid() != 0) GTEST_SKIP() << "mounting a small tmpfs needs root";
  fs::create_directories(path("small"));
  if (shell("mount -t tmpfs -o size=64k tmpfs " + path("small")).status != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here";
  auto f = blkrr({"convert", load, "-o", path("small/out.load.gz"), "--gzip-level", "1"});
  shell("ls -la " + path("small") + " > " + path("ls.txt"));
  bool left = fs::exists(path("small/out.load.gz"));
  size_t entries = 0;
  for (auto& e : fs::directory_iterator(path("small"))) (void)e, ++entries;
  shell("umount " + path("small"));
  EXPECT_NE(f.status, 0) << f.out;
  EXPECT_NE(f.out.find("No space left"), std::string::npos) << f.out;
  EXPECT_FALSE(left);
  EXPECT_EQ(entries, 0u);
}

TEST_F(Cli, ReportOverAHugeTimeSpanIsBounded) {
  {
    std::ofstream f(path("gap.load"));
    f << kLoadHead << "0.0 ; 8 ; 8 ; R\n7171200.0 ; 16 ; 8 ; W\n";  // 83 days apart
  }
  auto t0 = std::chrono::steady_clock::now();
  auto r = blkrr({"report", path("gap.load"), "-o", path("rep"), "--gnuplot", "/nonexistent"});
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_LT(secs, 30.0);
  uintmax_t bytes = 0;
  for (auto& e : fs::recursive_directory_iterator(path("rep")))
    if (e.is_regular_file()) bytes += e.file_size();
  EXPECT_LT(bytes, 50u << 20) << "the report wrote " << bytes << " bytes";
}

TEST_F(Cli, DumpJsonOfANonUtf8CommIsValidJson) {
  TraceHeader h;
  auto w = TraceWriter::create(path("u.blkrr"), h);
  ASSERT_TRUE(w.ok());
  Request q;
  q.issue_ns = 10;
  q.complete_ns = 20;
  q.bytes = 4096;
  q.set_comm("k\xfeworker");
  ASSERT_TRUE(w->append(q).ok());
  ASSERT_TRUE(w->close({}).ok());
  auto r = blkrr({"dump", "--json", path("u.blkrr")});
  ASSERT_EQ(r.status, 0) << r.out;  // was "internal error"
  EXPECT_NE(r.out.find("\"comm\":\"k\xEF\xBF\xBDworker\""), std::string::npos) << r.out;
}

// Under --realtime the replay thread sleeps to each deadline: a SCHED_FIFO
// thread that spins is stopped by the kernel for tens of ms (issue 16).
TEST_F(Cli, ReplaySpinsByDefaultAndSleepsToDeadlinesUnderRealtime) {
  if (geteuid() != 0) GTEST_SKIP() << "--realtime needs root (SCHED_FIFO)";
  const std::string load = std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz";
  auto spin_us = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "replay",     load, path("img"), "--allow-file", "--dry-run",    "--timing",   "fullspeed",
        "--duration", "1",  "--quiet",   "--json-file",  path("s.json"), "--overwrite"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = blkrr(args);
    EXPECT_EQ(r.status, 0) << r.out;
    std::ifstream in(path("s.json"));
    auto j = nlohmann::json::parse(in, nullptr, false);
    return j.is_discarded() ? -1.0 : j["settings"]["spin_ns"].get<double>() / 1000;
  };
  ASSERT_EQ(shell("truncate -s 64M " + path("img")).status, 0);
  EXPECT_EQ(spin_us({}), 100.0);
  EXPECT_EQ(spin_us({"--realtime", "1"}), 0.0);
  EXPECT_EQ(spin_us({"--realtime", "1", "--spin-us", "20"}), 20.0);
}

// A load larger than the device wraps: a warning at once on stderr (even
// with --quiet, which silences the summary), and the report lists it.
TEST_F(Cli, ReplayOfALoadLargerThanTheDeviceWarnsAtOnce) {
  const std::string load = std::string(BLKRR_TEST_DATA) + "/linux-mysql.load.gz";
  ASSERT_EQ(shell("truncate -s 1M " + path("small.img")).status, 0);
  auto r = blkrr({"replay", load, path("small.img"), "--allow-file", "--dry-run", "--timing",
                  "fullspeed", "--duration", "1", "--quiet", "-o", path("w.replay")});
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("blkrr replay: warning: a request of the load reaches"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("past the end of " + path("small.img") + " (1.00 MiB)"), std::string::npos)
      << r.out;
  auto rep = blkrr({"report", path("w.replay"), "-o", path("rep")});
  ASSERT_EQ(rep.status, 0) << rep.out;
  EXPECT_NE(blkrr::testing::slurp(path("rep/index.html"))
                .find("the load was wrapped onto a smaller device"),
            std::string::npos);
  ASSERT_EQ(shell("truncate -s 64G " + path("big.img")).status, 0);
  auto ok = blkrr({"replay", load, path("big.img"), "--allow-file", "--dry-run", "--timing",
                   "fullspeed", "--duration", "1", "--quiet"});
  EXPECT_EQ(ok.out.find("warning"), std::string::npos) << ok.out;
}

}  // namespace
