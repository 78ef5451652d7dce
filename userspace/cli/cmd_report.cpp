// blkrr report: plots and statistics of loads, traces and replay results.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/report_args.h"
#include "core/distribution.h"
#include "core/progress.h"
#include "core/rotation.h"
#include "core/units.h"
#include "report/report.h"

namespace blkrr::cli {

namespace {

// What the user sees while the report is made: on a terminal a line says what
// is being done and for how long (reading a large input or drawing the plots
// takes seconds); without --quiet a message per input read.
class ReportProgress {
 public:
  explicit ReportProgress(bool quiet) : quiet_(quiet), ticker_(ProgressLine::wanted(quiet)) {}
  void phase(std::string text) { ticker_.phase(std::move(text)); }
  void say(const std::string& line) {
    if (!quiet_) ticker_.say(line);
  }
  void stop() { ticker_.stop(); }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

 private:
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  bool quiet_;
  ProgressTicker ticker_;
};

// Every input (the pieces of one rotated recording are one input,
// docs/recording.md), in order.
Result<std::vector<report::Dataset>> read_inputs(const ReportArgs& a, ReportProgress& progress) {
  std::vector<report::Dataset> data;
  const auto groups = group_rotated_pieces(a.files);
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string name =
        groups[i].size() == 1 ? groups[i][0]
                              : strfmt("%s (%zu pieces)", groups[i][0].c_str(), groups[i].size());
    progress.phase("report: reading " + name);
    auto d = report::load_dataset(groups[i], i < a.labels.size() ? a.labels[i] : "");
    if (!d) return d.error().context("reading " + name);
    print_input_warnings("report", d->warnings);
    progress.say(strfmt("read %s: %zu requests (%s%s) in %.2f s", name.c_str(), d->samples.size(),
                        report::kind_name(d->kind), d->fake ? ", FAKE RESULT" : "",
                        progress.elapsed()));
    data.push_back(std::move(*d));
  }
  return data;
}

Result<report::ReportOutcome> make_report(const ReportArgs& a, ReportProgress& progress) {
  const report::ReportOptions& o = a.report;
  if (a.files.empty()) {
    progress.say("re-reporting " + o.out_dir + " from its saved data");
    progress.phase("report: re-reporting " + o.out_dir);
    return report::rereport(o);
  }
  // Writable, and holding no input among the files it replaces, before
  // any input is read.
  BLKRR_TRY(report::check_report_dir(o.out_dir, a.files, {},
                                     a.overwrite ? Existing::kReplace : Existing::kRefuse));
  auto data = read_inputs(a, progress);
  if (!data) return data.error();
  progress.phase(strfmt("report: analysing and plotting %zu input%s", data->size(),
                        data->size() == 1 ? "" : "s"));
  return report::make_report(*data, o);
}

Result<int> run_report(const ReportArgs& a) {
  if (a.exact_percentiles) Distribution::set_default_exact_limit(UINT64_MAX);
  ReportProgress progress(a.quiet);
  auto res = make_report(a, progress);
  progress.stop();
  if (!res) return res.error();
  if (!res->render.message.empty())
    std::fprintf(stderr, "warning: %s\n", res->render.message.c_str());
  if (!a.quiet)
    std::fprintf(stderr, "report: %zu plots (%zu drawn) in %s in %.2f s\n", res->plots,
                 res->render.produced, res->index.c_str(), progress.elapsed());
  return 0;
}

}  // namespace

Result<int> cmd_report(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)  // --fleet: cmd_report_fleet.cpp
    if (std::string(argv[i]) == "--fleet") return cmd_report_fleet(argc, argv);
  auto a = parse_report_args(argc, argv);
  if (!a) return a.error();
  if (a->help_printed) return 0;
  return run_report(*a);
}

}  // namespace blkrr::cli
