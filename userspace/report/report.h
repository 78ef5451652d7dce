// `blkrr report`: reads inputs, runs the static, dynamic and fidelity
// analyses, writes data (CSV/JSON), plots (gnuplot) and index.html.
#pragma once

#include <string>
#include <vector>

#include "core/io_guard.h"
#include "core/result.h"
#include "report/dataset.h"
#include "report/plot.h"

namespace blkrr::report {

struct ReportOptions {
  std::string out_dir;
  bool want_static = false;  // neither set: every analysis that applies
  bool want_dynamic = false;
  bool compare = false;  // datasets[0] is the original, the rest its replays
  size_t bins = 50;
  std::string gnuplot = "gnuplot";
  int jobs = 2;
  std::string command_line;
};

struct ReportOutcome {
  size_t plots = 0;
  RenderResult render;
  std::string index;  // path of index.html
};

// Before any input is read: DIR is a writable directory or can be created
// (its parent exists and is writable), and no input is a file the report
// writes or removes: DIR/index.html, DIR/report.json, the `also` names in
// DIR (fleet.*), or anything in DIR/data and DIR/plots; DIR holds no earlier
// report unless `existing` allows replacing it (--overwrite). A missing DIR
// is made with its missing parents; an ancestor the user may not write in is
// named with the reason. Usage errors (2).
Status check_report_dir(const std::string& dir, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& also, Existing existing);

// Saves the datasets under DIR/data (for --bins re-reports) and reports them.
Result<ReportOutcome> make_report(const std::vector<Dataset>& data, const ReportOptions& o);
// Re-reports DIR from the data an earlier make_report saved there; options
// not given again (static/dynamic/compare) are taken from that run.
Result<ReportOutcome> rereport(ReportOptions o);

}  // namespace blkrr::report
