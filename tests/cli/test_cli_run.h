// Runs the blkrr binary as a user would, for the tests of tests/cli.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

namespace blkrr::testing {

struct CliRun {
  int status = -1;  // exit code, or 128 + signal
  std::string out;  // stdout and stderr merged (stderr dropped with `merge` false)
};

// `blkrr ARGS` through the shell (arguments quoted).
inline CliRun blkrr_run(const std::vector<std::string>& args, bool merge = true) {
  std::string cmd = "'" BLKRR_BINARY "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += merge ? " 2>&1" : " 2>/dev/null";
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

}  // namespace blkrr::testing
