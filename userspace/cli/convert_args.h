// The command line of `blkrr convert`: its options and every rule between
// them.
#pragma once

#include "converters/convert.h"
#include "converters/dependency_graph.h"
#include "core/result.h"

namespace blkrr::cli {

struct ConvertArgs {
  bool help_printed = false;  // --help or --version was printed: nothing to run
  // The conversion (-o); progress is left to run_convert (a terminal
  // question). inputs, source, existing and reorder_window_ns are the
  // graph's too.
  ConvertOptions convert;
  GraphOptions graph;  // --dependencies FILE and its inference options
  bool quiet = false, verbose = false;
};

// The options, their values and the rules between them: an output, known
// formats, ranges, options that exclude each other. Reads no input; only
// --wrap/--scale DEVICE looks at the device or file named.
Result<ConvertArgs> parse_convert_args(int argc, char** argv);

// The conversion and the dependency graph the arguments ask for; 0 when both
// were written.
Result<int> run_convert_command(ConvertArgs a);

}  // namespace blkrr::cli
