// The command line of `blkrr report` (not --fleet: cmd_report_fleet.cpp).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "report/report.h"

namespace blkrr::cli {

struct ReportArgs {
  bool help_printed = false;  // --help or --version was printed: nothing to run
  // -o DIR without its trailing slashes, --static, --dynamic, --bins (50 if
  // not given), --gnuplot, the command line; compare when --compare is given.
  report::ReportOptions report;
  // The inputs, the --compare ORIGINAL first; none: re-report -o DIR from
  // its saved data.
  std::vector<std::string> files;
  std::vector<std::string> labels;  // --label, in input order (at most one per input)
  bool overwrite = false, quiet = false, exact_percentiles = false;
};

// The options and every rule between them; reads no input and looks at no
// directory (whether -o DIR can take the report is the run's to check).
Result<ReportArgs> parse_report_args(int argc, char** argv);

}  // namespace blkrr::cli
