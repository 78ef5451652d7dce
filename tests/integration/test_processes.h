// Process helpers for the integration tests: a forked workload child that
// issues an exact, known set of O_DIRECT requests, and a blkrr subcommand run
// as a child process.
#pragma once

#include <sys/types.h>

#include <cstdlib>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/request.h"
#include "core/result.h"

namespace blkrr::testing {

struct IoOp {
  Op op = Op::kRead;  // kRead or kWrite
  uint64_t sector = 0;
  uint32_t bytes = 0;
};

// `threads` lists of distinct, non-adjacent requests spread over `sectors`
// sectors, alternating reads and writes, sizes 4..64 KiB. Deterministic.
std::vector<std::vector<IoOp>> make_known_load(int threads, int per_thread, uint64_t first_sector,
                                               uint64_t sectors);

// Runs one make_known_load() batch from first_sector on (sectors spread over
// 20000) in an IoChild named `comm` to its end; the sectors it requested
// (empty, with a test failure, when the child could not run).
std::set<uint64_t> run_known_batch(const std::string& comm, const std::string& dev,
                                   uint64_t first_sector, int threads = 2, int per_thread = 4);

// A child process named `comm` that waits for go(), then runs each list in
// its own thread (so requests overlap on the device) with pread/pwrite on
// `dev_path` opened O_DIRECT, and exits 0 when every request succeeded.
class IoChild {
 public:
  static Result<IoChild> spawn(const std::string& comm, const std::string& dev_path,
                               const std::vector<std::vector<IoOp>>& per_thread,
                               int repeat_for_ms = 0);
  IoChild(IoChild&& o) noexcept;
  IoChild& operator=(IoChild&&) = delete;
  ~IoChild();
  pid_t pid() const { return pid_; }
  void go();
  // Exit status of the child (0 = every I/O succeeded).
  int wait();

 private:
  IoChild() = default;
  pid_t pid_ = -1;
  int gate_ = -1;
};

// `blkrr ARGS...` as a child; start() returns once `ready` appeared in its
// output (stdout and stderr merged) or fails after timeout_ms.
class BlkrrProcess {
 public:
  // stdout_path: where the child's standard output goes instead (e.g. /dev/full).
  static Result<BlkrrProcess> start(const std::vector<std::string>& args, const std::string& ready,
                                    int timeout_ms = 15000, const char* stdout_path = nullptr);
  BlkrrProcess(BlkrrProcess&& o) noexcept;
  BlkrrProcess& operator=(BlkrrProcess&&) = delete;
  ~BlkrrProcess();
  pid_t pid() const { return pid_; }
  void signal(int sig);
  // Waits for exit; returns the exit status, or 128 + signal number.
  int wait();
  const std::string& output() const { return out_; }

 private:
  BlkrrProcess() = default;
  void read_some(int timeout_ms);
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string out_;
};

// Sets an environment variable for the blkrr processes a test starts
// (e.g. BLKRR_FAULT_SKIP_COMPLETION), and removes it again.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

}  // namespace blkrr::testing
