#include "tests/integration/test_processes.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

namespace blkrr::testing {

std::vector<std::vector<IoOp>> make_known_load(int threads, int per_thread, uint64_t first_sector,
                                               uint64_t sectors) {
  std::vector<std::vector<IoOp>> out(threads);
  const int total = threads * per_thread;
  // One request per slot; slots 4 KiB aligned and larger than the biggest request.
  const uint64_t slot = (sectors / static_cast<uint64_t>(total)) & ~uint64_t{7};
  for (int i = 0; i < total; i++) {
    IoOp op;
    op.op = (i % 3 == 1) ? Op::kWrite : Op::kRead;
    op.bytes = 4096u << (i % 5);  // 4, 8, 16, 32, 64 KiB
    // Shuffle slots deterministically so threads do not walk sequentially.
    uint64_t s = (static_cast<uint64_t>(i) * 37) % static_cast<uint64_t>(total);
    op.sector = first_sector + s * slot;
    out[i % threads].push_back(op);
  }
  return out;
}

IoChild::IoChild(IoChild&& o) noexcept : pid_(o.pid_), gate_(o.gate_) {
  o.pid_ = -1;
  o.gate_ = -1;
}

Result<IoChild> IoChild::spawn(const std::string& comm, const std::string& dev_path,
                               const std::vector<std::vector<IoOp>>& per_thread,
                               int repeat_for_ms) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return Error("pipe failed");
  pid_t pid = fork();
  if (pid < 0) return Error("fork failed");
  if (pid == 0) {
    close(p[1]);
    prctl(PR_SET_NAME, comm.c_str());
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    char c;
    if (read(p[0], &c, 1) != 1) _exit(3);
    int fd = open(dev_path.c_str(), O_RDWR | O_DIRECT);
    if (fd < 0) _exit(2);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(repeat_for_ms);
    bool ok = true;
    std::vector<std::thread> ts;
    std::vector<int> results(per_thread.size(), 0);
    for (size_t t = 0; t < per_thread.size(); t++) {
      ts.emplace_back([&, t] {
        void* buf = nullptr;
        if (posix_memalign(&buf, 4096, 1 << 20) != 0) return;
        std::memset(buf, static_cast<int>(0x30 + t), 1 << 20);
        do {
          for (const auto& op : per_thread[t]) {
            off_t off = static_cast<off_t>(op.sector * 512);
            ssize_t n = op.op == Op::kWrite ? pwrite(fd, buf, op.bytes, off)
                                            : pread(fd, buf, op.bytes, off);
            if (n != static_cast<ssize_t>(op.bytes)) results[t] = 1;
          }
        } while (repeat_for_ms > 0 && std::chrono::steady_clock::now() < deadline);
        free(buf);
      });
    }
    for (auto& th : ts) th.join();
    for (int r : results) ok = ok && r == 0;
    close(fd);
    _exit(ok ? 0 : 1);
  }
  close(p[0]);
  IoChild c;
  c.pid_ = pid;
  c.gate_ = p[1];
  return c;
}

void IoChild::go() {
  if (gate_ < 0) return;
  char c = 'g';
  (void)!write(gate_, &c, 1);
  close(gate_);
  gate_ = -1;
}

int IoChild::wait() {
  if (pid_ < 0) return -1;
  go();
  int st = 0;
  waitpid(pid_, &st, 0);
  pid_ = -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

IoChild::~IoChild() {
  if (gate_ >= 0) close(gate_);
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

BlkrrProcess::BlkrrProcess(BlkrrProcess&& o) noexcept
    : pid_(o.pid_), fd_(o.fd_), out_(std::move(o.out_)) {
  o.pid_ = -1;
  o.fd_ = -1;
}

// The child writes into an unlinked temporary file, not a pipe: a command
// that prints a lot while the test is busy elsewhere never blocks on a full
// pipe (top --json stalled that way before the test read its output).
Result<BlkrrProcess> BlkrrProcess::start(const std::vector<std::string>& args,
                                         const std::string& ready, int timeout_ms,
                                         const char* stdout_path) {
  char tmpl[] = "/tmp/blkrr-test-out.XXXXXX";
  int fd = mkostemp(tmpl, O_CLOEXEC);
  if (fd < 0) return Error("mkostemp failed");
  unlink(tmpl);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd);
    return Error("fork failed");
  }
  if (pid == 0) {
    int out = stdout_path ? open(stdout_path, O_WRONLY | O_CLOEXEC) : fd;
    dup2(out < 0 ? fd : out, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    std::string bin = BLKRR_BINARY;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  BlkrrProcess b;
  b.pid_ = pid;
  b.fd_ = fd;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (b.out_.find(ready) == std::string::npos) {
    if (std::chrono::steady_clock::now() > deadline)
      return Error("blkrr did not print '" + ready + "' in time; output: " + b.out_);
    size_t before = b.out_.size();
    b.read_some(100);
    int st;
    if (b.out_.size() == before && waitpid(pid, &st, WNOHANG) == pid) {
      b.pid_ = -1;
      b.read_some(0);
      return Error("blkrr exited early; output: " + b.out_);
    }
  }
  return b;
}

// Appends what the child wrote since the last read; waits up to timeout_ms
// when there is nothing new.
void BlkrrProcess::read_some(int timeout_ms) {
  char buf[4096];
  for (int waited = 0;; waited += 10) {
    ssize_t n = pread(fd_, buf, sizeof(buf), static_cast<off_t>(out_.size()));
    if (n > 0) {
      out_.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (waited >= timeout_ms) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void BlkrrProcess::signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

int BlkrrProcess::wait() {
  if (pid_ < 0) return -1;
  int st = 0;
  waitpid(pid_, &st, 0);
  pid_ = -1;
  read_some(0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

BlkrrProcess::~BlkrrProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) close(fd_);
}

std::set<uint64_t> run_known_batch(const std::string& comm, const std::string& dev,
                                   uint64_t first_sector, int threads, int per_thread) {
  const auto load = make_known_load(threads, per_thread, first_sector, 20000);
  auto child = IoChild::spawn(comm, dev, load);
  EXPECT_TRUE(child) << (child ? "" : child.error().message);
  std::set<uint64_t> s;
  if (!child) return s;
  child->go();
  EXPECT_EQ(child->wait(), 0);
  for (const auto& t : load)
    for (const auto& op : t) s.insert(op.sector);
  return s;
}

}  // namespace blkrr::testing
