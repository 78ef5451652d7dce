// blkrr top on a terminal (root only, loop device): an 80x24 pseudo-terminal
// as a user's, q typed on it. The screen fits (no line over 80 columns, no
// more lines than the terminal has, the header whole) and q ends top at once
// with status 0, as in iotop.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "core/clock.h"
#include "tests/integration/test_loop_device.h"
#include "tests/integration/test_top.h"

namespace blkrr::testing {
namespace {

// blkrr with a pseudo-terminal of cols x rows as its controlling terminal
// and standard input, output and error.
struct PtyBlkrr {
  int master = -1;
  pid_t pid = -1;
  std::string out;

  PtyBlkrr(const std::vector<std::string>& args, unsigned short cols, unsigned short rows) {
    master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return;
    std::string slave = ptsname(master);
    pid = fork();
    if (pid == 0) {
      setsid();
      int s = open(slave.c_str(), O_RDWR);  // the controlling terminal
      winsize ws{rows, cols, 0, 0};
      ioctl(s, TIOCSWINSZ, &ws);
      for (int fd = 0; fd < 3; ++fd) dup2(s, fd);
      std::vector<char*> argv{const_cast<char*>(BLKRR_BINARY)};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      execv(BLKRR_BINARY, argv.data());
      _exit(127);
    }
  }
  ~PtyBlkrr() {
    if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (master >= 0) close(master);
  }
  // Reads for up to ms, or until `until` appears in what was read.
  void read_for(int ms, const std::string& until = {}) {
    uint64_t end = mono_ns() + uint64_t(ms) * 1'000'000;
    while (mono_ns() < end && (until.empty() || out.find(until) == std::string::npos)) {
      pollfd p{master, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      ssize_t n = read(master, buf, sizeof buf);
      if (n <= 0) break;
      out.append(buf, size_t(n));
    }
  }
  // The exit status within ms, -1 if still running.
  int wait_exit(int ms) {
    uint64_t end = mono_ns() + uint64_t(ms) * 1'000'000;
    int st = 0;
    while (mono_ns() < end) {
      read_for(20);
      if (waitpid(pid, &st, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
    }
    return -1;
  }
};

std::vector<std::string> screen_lines(const std::string& screen) {
  std::vector<std::string> out;
  std::istringstream in(screen);
  for (std::string l; std::getline(in, l);) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    out.push_back(l);
  }
  return out;
}

TEST(TopScreen, FitsAn80x24TerminalAndQQuits) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(64ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  sleep_ms(300);
  PtyBlkrr top({"top", "-d", loop->path(), "0.3"}, 80, 24);
  ASSERT_GT(top.pid, 0);
  top.read_for(15000, "DISKTIME>");
  ASSERT_NE(top.out.find("DISKTIME>"), std::string::npos) << top.out;
  auto c = IoChild::spawn("blkrr-screen", loop->path(), uniform(2, 100, Op::kWrite, 65536, 0));
  ASSERT_TRUE(c.ok());
  c->go();
  ASSERT_EQ(c->wait(), 0);
  top.read_for(700);
  uint64_t t0 = mono_ns();
  ASSERT_EQ(write(top.master, "q", 1), 1);
  EXPECT_EQ(top.wait_exit(3000), 0)
      << top.out.substr(top.out.size() > 3000 ? top.out.size() - 3000 : 0);
  double quit_ms = double(mono_ns() - t0) / 1e6;
  std::printf("[measured] top ended %.0f ms after q\n", quit_ms);
  EXPECT_LT(quit_ms, 1000);

  // Every full screen (between two clears) fits 80x24, its header whole.
  const std::string clear = "\033[H\033[2J";
  size_t screens = 0, ours = 0;
  for (size_t at = top.out.find(clear); at != std::string::npos;) {
    size_t next = top.out.find(clear, at + clear.size());
    if (next == std::string::npos) break;  // the last one may be cut short
    auto l = screen_lines(top.out.substr(at + clear.size(), next - at - clear.size()));
    ++screens;
    EXPECT_LE(l.size(), 23u);
    for (const auto& line : l) EXPECT_LE(line.size(), 80u) << line;
    std::string all = top.out.substr(at, next - at);
    for (const char* item : {"load: ", "read: ", "write: ", "util: "})
      EXPECT_NE(all.find(item), std::string::npos) << item << " missing:\n" << all;
    ours += all.find(" blkrr-screen ") != std::string::npos;
    at = next;
  }
  EXPECT_GE(screens, 2u);
  EXPECT_GE(ours, 1u) << top.out;
}

// -q with --prometheus prints nothing, also at exit, when nothing was lost.
TEST(TopScreen, QuietPrintsNothing) {
  SKIP_UNLESS_CAPTURE();
  auto loop = LoopDevice::create(64ull << 20);
  ASSERT_TRUE(loop.ok()) << loop.error().message;
  uint16_t port = static_cast<uint16_t>(20000 + (getpid() + 7) % 20000);
  std::string cmd = std::string("'") + BLKRR_BINARY +
                    "' top -q --prometheus 127.0.0.1:" + std::to_string(port) + " -d " +
                    loop->path() + " 0.2 2 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(WEXITSTATUS(pclose(p)), 0) << out;
  if (out.find("not counted") == std::string::npos) {
    EXPECT_EQ(out, "");
  }
}

}  // namespace
}  // namespace blkrr::testing
