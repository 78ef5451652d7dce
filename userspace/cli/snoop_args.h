// The command line of `blkrr snoop`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace blkrr::cli {

struct SnoopArgs {
  bool help_printed = false;  // --help or --version was printed: nothing to run
  std::vector<std::string> devices;
  uint32_t pid = 0;
  bool has_pid = false;
  std::string comm;
  bool issue = false, majmin = false, queue = false, json = false;
  uint64_t duration_ns = 0;  // 0: until a signal
};

// The options and every rule between them; opens no device (whether the
// devices and -p exist is the capture's to check). The old --start is taken
// as --issue with a note on stderr.
Result<SnoopArgs> parse_snoop_args(int argc, char** argv);

}  // namespace blkrr::cli
