// The command line of `blkrr dump`.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"

namespace blkrr::cli {

struct DumpArgs {
  bool help_printed = false;  // --help or --version was printed: nothing to run
  bool json = false;
  bool no_header = false;          // text only: JSON always starts with the header object
  std::vector<std::string> files;  // one trace ("-": standard input), or the pieces of one
};

// The options and the files named; opens none of them.
Result<DumpArgs> parse_dump_args(int argc, char** argv);

// The trace (or the pieces of one rotated recording) on standard output.
Result<int> run_dump(const DumpArgs& a);

}  // namespace blkrr::cli
