// Runs the blkrr binary as a user would, for the tests of tests/cli.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace blkrr::testing {

struct CliRun {
  int status = -1;  // exit code, or 128 + signal
  std::string out;  // stdout and stderr merged (stderr dropped with `merge` false)
};

// A shell command line's output and exit status (popen).
inline CliRun run_command(const std::string& cmd) {
  CliRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

// `blkrr ARGS` through the shell (arguments quoted).
inline CliRun blkrr_run(const std::vector<std::string>& args, bool merge = true) {
  std::string cmd = "'" BLKRR_BINARY "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  return run_command(cmd + (merge ? " 2>&1" : " 2>/dev/null"));
}

// A file's whole content ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A test with a scratch directory of its own, removed afterwards.
class ScratchDirTest : public ::testing::Test {
 protected:
  explicit ScratchDirTest(const char* tag) : tag_(tag) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("blkrr-" + std::string(tag_) + "-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  const char* tag_;
  std::filesystem::path dir_;
};

}  // namespace blkrr::testing
