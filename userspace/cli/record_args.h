// The command line of `blkrr record`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/record_flight.h"
#include "cli/record_output.h"
#include "core/result.h"

namespace blkrr::cli {

struct RecordArgs {
  std::vector<std::string> devs;
  uint32_t pid = 0;
  bool have_pid = false;
  uint64_t ringbuf_mb = 64, duration_ns = 0;
  std::string comm, cgroup;
  bool quiet = false, lean = false, verbose = false;
  double start_at = 0;
  OutputPlan output;  // -o, --rotate, --rotate-size, --keep, --max-total
  FlightPlan flight;  // --ring and its triggers
  bool to_stdout() const { return output.out == "-"; }
};

// The options into `a`; false when --help or --version was printed.
Result<bool> parse_record_args(int argc, char** argv, RecordArgs& a);

// The output options against each other, and the default name (a file, or
// with rotation a stem).
Status check_output_plan(OutputPlan& o, const std::string& default_stem);
// --ring and its triggers against the output and each other.
Status check_flight_plan(const FlightPlan& f, const OutputPlan& o, bool lean);

}  // namespace blkrr::cli
