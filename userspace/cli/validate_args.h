// The command line of `blkrr validate`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "validate/offline.h"

namespace blkrr::cli {

struct ValidateArgs {
  bool help_printed = false;        // --help or --version was printed: nothing to run
  std::string replay;               // the replay result or load
  std::vector<std::string> traces;  // the trace of the replay device (its files)
  std::string device;               // -d: the trace's device; "": all
  std::string json_path;            // --json-file FILE, "-" with --json, "" for none
  bool overwrite = false, fail_incomplete = false, quiet = false, exact_percentiles = false;
  uint64_t list = 10;  // requests shown per list on stderr
  validate::OfflineOptions offline;
  // The inputs as given: the replay, then the traces.
  std::vector<std::string> inputs() const;
};

// The options and every rule between them; reads no input and looks at no
// output (whether --json-file may be written is the run's to check).
Result<ValidateArgs> parse_validate_args(int argc, char** argv);

}  // namespace blkrr::cli
