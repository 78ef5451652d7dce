// Every command that writes through a temporary file, interrupted mid-write by
// SIGINT, SIGTERM and SIGHUP: its output folder holds no temporary and no
// partial output afterwards. convert, report and validate die of the signal
// (after removing their temporaries); replay stops cleanly (status 130) and
// writes complete results of the requests it did.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli/test_cli_run.h"

namespace fs = std::filesystem;

namespace blkrr::testing {
namespace {

const std::string kLoad = BLKRR_TEST_DATA "/linux-mysql.load.gz";

// `blkrr ARGS` as a child with the default signal actions (a shell would
// start a background job with SIGINT ignored), output to `log`.
pid_t spawn_blkrr(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  FILE* f = std::freopen(log.c_str(), "w", stdout);
  if (!f || dup2(STDOUT_FILENO, STDERR_FILENO) < 0) _exit(120);
  std::vector<char*> argv;
  std::string bin = BLKRR_BINARY;
  argv.push_back(bin.data());
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(bin.c_str(), argv.data());
  _exit(121);
}

bool wait_until(const std::function<bool()>& cond, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

// Names of the files under `dir` (relative), recursively.
std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> v;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec))
    if (it->is_regular_file(ec)) v.push_back(fs::relative(it->path(), dir).string());
  std::sort(v.begin(), v.end());
  return v;
}

// A temporary of AtomicFile ("." + name + ".XXXXXX") under `dir` holding at
// least `min_bytes`.
bool temporary_with(const fs::path& dir, uintmax_t min_bytes) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 8 && name[0] == '.' && it->is_regular_file(ec) &&
        it->file_size(ec) >= min_bytes)
      return true;
  }
  return false;
}

std::string describe(int st) {
  if (WIFSIGNALED(st)) return "killed by signal " + std::to_string(WTERMSIG(st));
  if (WIFEXITED(st)) return "exit " + std::to_string(WEXITSTATUS(st));
  return "status " + std::to_string(st);
}

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

class Interrupt : public ScratchDirTest {
 protected:
  Interrupt() : ScratchDirTest("interrupt") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    out_ = dir() / "out";
    fs::create_directories(out_);
    ::setenv("BLKRR_RUN_DIR", path("run").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("BLKRR_RUN_DIR");
    ScratchDirTest::TearDown();
  }

  // Starts `args`, waits until `mid_write` holds (at most 120 s), sends `sig`
  // and returns the wait status; the test fails if the command ended before.
  int interrupt(const std::vector<std::string>& args, int sig,
                const std::function<bool()>& mid_write) {
    const std::string log = path("log." + std::to_string(sig));
    pid_t pid = spawn_blkrr(args, log);
    int st = 0;
    bool ended = false;
    bool ready = wait_until(
        [&] {
          if (waitpid(pid, &st, WNOHANG) == pid) ended = true;
          return ended || mid_write();
        },
        120);
    if (ended) {
      ADD_FAILURE() << "the command ended (" << describe(st)
                    << ") before it could be interrupted: " << slurp(log);
      return st;
    }
    EXPECT_TRUE(ready) << "never reached the point to interrupt: " << slurp(log);
    kill(pid, sig);
    waitpid(pid, &st, 0);
    return st;
  }

  fs::path out_;
};

TEST_F(Interrupt, ConvertLeavesNoTemporaryAndNoOutput) {
  for (int sig : kSignals) {
    SCOPED_TRACE(strsignal(sig));
    int st = interrupt({"convert", kLoad, "--repeat", "100000", "-o", (out_ / "big.csv").string()},
                       sig, [&] { return temporary_with(out_, 1 << 20); });
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == sig) << describe(st);
    EXPECT_EQ(files_under(out_), std::vector<std::string>{});
  }
}

// Inputs that take seconds to read, made once: a load and a native trace of
// the same requests (linux-mysql.load.gz repeated).
class InterruptBig : public Interrupt {
 protected:
  static void SetUpTestSuite() {
    inputs_ = fs::temp_directory_path() / ("blkrr-interrupt-in-" + std::to_string(getpid()));
    fs::create_directories(inputs_);
    for (const char* name : {"big.load", "big.blkrr"}) {
      CliRun r = blkrr_run({"convert", kLoad, "--repeat", "20", "-o", (inputs_ / name).string()});
      ASSERT_EQ(r.status, 0) << r.out;
    }
  }
  static void TearDownTestSuite() { fs::remove_all(inputs_); }
  static std::string input(const char* name) { return (inputs_ / name).string(); }
  static fs::path inputs_;
};
fs::path InterruptBig::inputs_;

// report dies of the signal: no temporary, and neither index.html nor
// report.json (written last), so the report is plainly unfinished. The data
// files it completed before stay (each one whole).
TEST_F(InterruptBig, ReportLeavesNoTemporaryAndNoIndex) {
  for (int sig : kSignals) {
    SCOPED_TRACE(strsignal(sig));
    const fs::path rep = out_ / ("rep" + std::to_string(sig));
    int st = interrupt({"report", input("big.load"), "-o", rep.string(), "-q"}, sig,
                       [&] { return temporary_with(rep, 1); });
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == sig) << describe(st);
    for (const auto& f : files_under(rep)) {
      EXPECT_NE(fs::path(f).filename().string()[0], '.') << f;
      EXPECT_NE(f, "index.html");
      EXPECT_NE(f, "report.json");
    }
  }
}

// validate dies of the signal before its JSON report is written: nothing in
// the folder.
TEST_F(InterruptBig, ValidateLeavesNoTemporaryAndNoReport) {
  for (int sig : kSignals) {
    SCOPED_TRACE(strsignal(sig));
    const auto start = std::chrono::steady_clock::now();
    int st = interrupt(
        {"validate", input("big.load"), input("big.blkrr"), "--json-file",
         (out_ / "v.json").string(), "-q"},
        sig, [&] { return std::chrono::steady_clock::now() - start > std::chrono::seconds(1); });
    EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == sig) << describe(st);
    EXPECT_EQ(files_under(out_), std::vector<std::string>{});
  }
}

// replay stops cleanly on each signal (status 130) and writes whole results of
// what it did: the result file with its summary, and the JSON summary; no
// temporary. --fake-io on a regular file: no root, no device.
TEST_F(Interrupt, ReplayStopsWithWholeResultsAndNoTemporary) {
  const std::string img = path("dev.img");
  ASSERT_EQ(run_command("truncate -s 64M '" + img + "'").status, 0);
  for (int sig : kSignals) {
    SCOPED_TRACE(strsignal(sig));
    const std::string res = (out_ / "run.replay.gz").string(), js = (out_ / "run.json").string();
    int st =
        interrupt({"replay", kLoad, img, "--allow-file", "--no-direct", "--fake-io", "--timing",
                   "fullspeed", "--repeat", "1000", "-o", res, "--json-file", js, "-q"},
                  sig, [&] { return temporary_with(out_, 64 << 10); });
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 130) << describe(st);
    EXPECT_EQ(files_under(out_), (std::vector<std::string>{"run.json", "run.replay.gz"}));
    CliRun z = run_command("gzip -dc '" + res + "' | grep -c -e '^SUMMARY: ' -e '^# interrupted'");
    EXPECT_EQ(z.out, "2\n");
    EXPECT_NE(slurp(js).find("\"interrupted\": true"), std::string::npos);
    fs::remove(res);
    fs::remove(js);
  }
}

}  // namespace
}  // namespace blkrr::testing
