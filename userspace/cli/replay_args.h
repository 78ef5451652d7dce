// The command line of `blkrr replay`: its options and every rule between
// them, checked before anything is opened for writing.
#pragma once

#include <cstdint>

#include "core/result.h"
#include "replay/session.h"

namespace blkrr::cli {

struct ReplayArgs {
  bool help_printed = false;       // --help or --version was printed: nothing to run
  replay::SessionOptions session;  // progress is left to run_replay (a terminal question)
  bool quiet = false;
  bool json_stdout = false;  // -j: the summary on standard output (session.json_path stays "")
  bool overwrite = false;
  bool validate = false, fail_incomplete = false;
  uint64_t validate_window_ns = 0;  // --validate-window (default validate::LiveOptions')
  bool exact_percentiles = false;
};

// The options, their values and the rules between them: ranges, flags that
// exclude or need each other, LOAD [PIECE...] DEVICE (the pieces' headers
// are read to group them) and DEVICE as every command names one
// (core/device.h device_node: looked up in /sys and /dev). Outputs are not
// checked here: run_replay does that before the replay starts.
Result<ReplayArgs> parse_replay_args(int argc, char** argv);

// The replay the arguments describe; its exit status.
Result<int> run_replay(ReplayArgs a);

}  // namespace blkrr::cli
