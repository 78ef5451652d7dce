// blkrr report --fleet: one report over the traces and replay results of a
// fleet (scripts/fleet/ansible), with a fleet summary beside the usual plots.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/args.h"
#include "report/dataset.h"
#include "report/fleet.h"
#include "report/report.h"

namespace blkrr::cli {

namespace {

// Labels name the plots' series and data files: the file name (the playbooks
// name files by host), made unique with the kind when a name repeats.
void unique_labels(std::vector<report::Dataset>& data) {
  std::set<std::string> seen;
  for (auto& d : data) {
    std::string base = d.label;
    if (seen.count(base)) base += std::string("-") + report::kind_name(d.kind);
    std::string label = base;
    for (int n = 2; seen.count(label); ++n) label = base + "-" + std::to_string(n);
    seen.insert(label);
    d.label = label;
  }
}

}  // namespace

Result<int> cmd_report_fleet(int argc, char** argv) {
  std::vector<std::string> inputs;
  std::string out_dir, gnuplot = "gnuplot";
  bool fleet = false, quiet = false;
  uint64_t bins = 0;
  ArgParser ap(argv[0], "--fleet DIR_OR_FILE... -o DIR [--bins N]",
               "One report over a fleet: the traces (*.blkrr) and replay results (*.replay.gz,\n"
               "with the X.json that `blkrr replay --json` wrote beside X.replay.gz) of several\n"
               "hosts, found in the directories given. Writes the usual report (every host's\n"
               "series in the same plots, statistics per input) and a fleet summary,\n"
               "DIR/fleet.txt (also printed), DIR/fleet.json and DIR/fleet.html: per host and\n"
               "for all hosts throughput, latency and issue-error percentiles, validation\n"
               "verdicts, and the start instants achieved (the inputs' wall-clock anchors)\n"
               "against the requested --start-at, with their spread across hosts.");
  ap.flag(0, "fleet", &fleet, "report over a fleet (this mode)");
  ap.common_string(CommonOpt::kOutput,
                   "report directory (created with its parents; one holding a report is "
                   "replaced only with --overwrite)",
                   &out_dir, "DIR");
  bool overwrite = false;
  ap.common_flag(CommonOpt::kOverwrite, &overwrite, "replace the report in an existing -o DIR");
  ap.opt_u64(0, "bins", "N", "histogram buckets (default 50)", &bins);
  ap.opt_string(0, "gnuplot", "PROG", "gnuplot program to run (default gnuplot)", &gnuplot);
  ap.common_flag(CommonOpt::kQuiet, &quiet, "no progress messages and no summary on stdout");
  ap.positionals("DIR_OR_FILE", &inputs, 1, 100000);
  ap.examples(
      "  blkrr report --fleet fleet/traces fleet/results -o fleet/report\n"
      "  blkrr report --fleet lab1.replay.gz lab2.replay.gz -o rep/\n"
      "  firefox fleet/report/fleet.html");
  auto ok = ap.parse(argc, argv);
  if (!ok) return ok.error();
  if (!*ok) return 0;
  if (out_dir.empty())
    return Error(ErrorKind::kUsage, "missing -o DIR (where the fleet report goes)");
  if (bins > 100000)
    return Error(ErrorKind::kUsage,
                 "--bins " + std::to_string(bins) + " is too many (at most 100000)");

  auto found = report::find_fleet_inputs(inputs);
  if (!found) return Error(ErrorKind::kUsage, found.error().message);
  std::vector<std::string> files;
  for (const auto& in : *found) {
    files.push_back(in.path);
    if (!in.json_path.empty()) files.push_back(in.json_path);
  }
  BLKRR_TRY(report::check_report_dir(out_dir, files, {"fleet.json", "fleet.txt", "fleet.html"},
                                     overwrite ? Existing::kReplace : Existing::kRefuse));
  std::vector<report::Dataset> data;
  std::vector<report::FleetMeta> meta;
  for (const auto& in : *found) {
    auto d = report::load_dataset(in.path, "");
    if (!d) return d.error().context("reading " + in.path);
    auto m = report::read_fleet_meta(in, *d);
    if (!m) return m.error().context("reading " + in.path);
    if (!quiet)
      std::fprintf(stderr, "read %s: %zu requests (%s%s)\n", in.path.c_str(), d->samples.size(),
                   report::kind_name(d->kind), in.json_path.empty() ? "" : ", with its summary");
    data.push_back(std::move(*d));
    meta.push_back(std::move(*m));
  }
  unique_labels(data);

  report::ReportOptions o;
  o.out_dir = out_dir;
  while (o.out_dir.size() > 1 && o.out_dir.back() == '/') o.out_dir.pop_back();
  o.bins = bins ? bins : 50;
  o.gnuplot = gnuplot;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);
  auto res = report::make_report(data, o);
  if (!res) return res.error();
  if (!res->render.message.empty())
    std::fprintf(stderr, "warning: %s\n", res->render.message.c_str());
  const report::FleetSummary summary = report::summarize_fleet(data, meta);
  BLKRR_TRY(report::write_fleet_files(summary, o.out_dir));
  if (!quiet) {
    std::fputs(report::format_text(summary).c_str(), stdout);
    std::fprintf(stderr, "fleet report: %s/fleet.html, %zu plots in %s\n", o.out_dir.c_str(),
                 res->plots, res->index.c_str());
  }
  return 0;
}

}  // namespace blkrr::cli
