// blkrr report: plots and statistics of loads, traces and replay results.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/rotation.h"
#include "core/distribution.h"
#include "core/progress.h"
#include "core/units.h"
#include "core/args.h"
#include "report/report.h"

namespace blkrr::cli {

Result<int> cmd_report(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)  // --fleet: cmd_report_fleet.cpp
    if (std::string(argv[i]) == "--fleet") return cmd_report_fleet(argc, argv);
  std::vector<std::string> inputs, labels;
  std::string out_dir, original, gnuplot = "gnuplot";
  bool want_static = false, want_dynamic = false, quiet = false;
  uint64_t bins = 0;
  ArgParser ap(argv[0], "FILE... -o DIR [--static] [--dynamic] [--compare ORIGINAL] [--bins N]",
               "Turns loads (*.load.gz), native traces (*.blkrr) and replay results\n"
               "(*.replay.gz) into PNG plots (gnuplot), one self-contained DIR/index.html with\n"
               "the summary tables, and the data as DIR/data/*.csv and DIR/report.json.\n"
               "Several inputs are overlaid in the same plots (reads blue, writes red).\n"
               "Static analyses (loads, traces): working set per 1/6/60/600 s (scaled down for\n"
               "shorter inputs) and cumulative, seek distance, turns, IOPS and MiB/s, size and\n"
               "position histograms, per-process views. Dynamic analyses (replay results,\n"
               "traces with completions): sonar, latency and delay plots, histograms, demanded\n"
               "vs achieved throughput, requests in flight. --compare adds replay fidelity and\n"
               "uncertainty. Without FILEs, DIR is re-reported from the data saved there (e.g.\n"
               "with other --bins).");
  ap.common_string(CommonOpt::kOutput,
                   "report directory (created with its parents; one holding a report is "
                   "replaced only with --overwrite)",
                   &out_dir, "DIR");
  bool overwrite = false;
  ap.common_flag(CommonOpt::kOverwrite, &overwrite, "replace the report in an existing -o DIR");
  ap.flag(0, "static", &want_static, "only the static analyses (also of replay results)");
  ap.flag(0, "dynamic", &want_dynamic, "only the dynamic analyses");
  ap.opt_string(0, "compare", "ORIGINAL",
                "fidelity of the replay results FILE... against the original load or trace",
                &original);
  ap.opt_u64(0, "bins", "N", "histogram buckets (default 50)", &bins);
  for (char c : {'s', 'c', 'b'}) ap.removed(c, "its long form (see --help)");
  ap.removed('d', "--dynamic");
  ap.opt_strings('l', "label", "NAME",
                 "name of the next input in plots and file names (repeatable, in input order; "
                 "with --compare the original comes first)",
                 &labels);
  ap.opt_string(0, "gnuplot", "PROG", "gnuplot program to run (default gnuplot)", &gnuplot);
  ap.common_flag(CommonOpt::kQuiet, &quiet, "no progress messages");
  bool exact_pct = false;
  ap.flag(0, "exact-percentiles", &exact_pct,
          "exact latency percentiles however many requests (memory grows with them); by default "
          "past 1 M samples they come from a histogram within 0.39 %");
  ap.positionals("FILE", &inputs, 0, 100000);
  ap.examples(
      "  blkrr report prod.load.gz -o rep/                      static analyses of a load\n"
      "  blkrr report run1.replay.gz run2.replay.gz -o rep/     replays overlaid\n"
      "  blkrr report --compare prod.blkrr r1.replay.gz r2.replay.gz r3.replay.gz -o fid/\n"
      "  blkrr report -o rep/ --bins 100                        re-report with 100 buckets\n"
      "  firefox rep/index.html");
  auto ok = ap.parse(argc, argv);
  if (!ok) return ok.error();
  if (!*ok) return 0;
  if (exact_pct) Distribution::set_default_exact_limit(UINT64_MAX);
  if (out_dir.empty()) return Error(ErrorKind::kUsage, "missing -o DIR (where the report goes)");
  if (bins > 100000)
    return Error(ErrorKind::kUsage,
                 "--bins " + std::to_string(bins) + " is too many (at most 100000)");

  report::ReportOptions o;
  o.out_dir = out_dir;
  while (o.out_dir.size() > 1 && o.out_dir.back() == '/') o.out_dir.pop_back();
  o.want_static = want_static;
  o.want_dynamic = want_dynamic;
  o.bins = bins ? bins : 50;
  o.gnuplot = gnuplot;
  o.jobs = 2;
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);

  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // On a terminal, a line says what is being done and for how long (reading
  // a large input or drawing the plots takes seconds).
  ProgressTicker progress(ProgressLine::wanted(quiet));
  auto say = [&](const std::string& line) {
    if (!quiet) progress.say(line);
  };
  Result<report::ReportOutcome> res = Error("");
  if (inputs.empty() && original.empty()) {
    say("re-reporting " + o.out_dir + " from its saved data");
    progress.phase("report: re-reporting " + o.out_dir);
    res = report::rereport(o);
  } else {
    std::vector<std::string> files;
    if (!original.empty()) {
      o.compare = true;
      files.push_back(original);
    }
    files.insert(files.end(), inputs.begin(), inputs.end());
    if (files.size() < 2 && o.compare)
      return Error(ErrorKind::kUsage,
                   "--compare " + original + " needs at least one replay result FILE");
    if (labels.size() > files.size())
      return Error(ErrorKind::kUsage, "more --label options than inputs");
    // Writable, and holding no input among the files it replaces, before
    // any input is read.
    BLKRR_TRY(report::check_report_dir(o.out_dir, files, {},
                                       overwrite ? Existing::kReplace : Existing::kRefuse));
    std::vector<report::Dataset> data;
    // The pieces of one rotated recording are one input (docs/recording.md).
    const auto groups = group_rotated_pieces(files);
    for (size_t i = 0; i < groups.size(); ++i) {
      const std::string name =
          groups[i].size() == 1 ? groups[i][0]
                                : strfmt("%s (%zu pieces)", groups[i][0].c_str(), groups[i].size());
      progress.phase("report: reading " + name);
      auto d = report::load_dataset(groups[i], i < labels.size() ? labels[i] : "");
      if (!d) return d.error().context("reading " + name);
      print_input_warnings("report", d->warnings);
      say(strfmt("read %s: %zu requests (%s%s) in %.2f s", name.c_str(), d->samples.size(),
                 report::kind_name(d->kind), d->fake ? ", FAKE RESULT" : "", elapsed()));
      data.push_back(std::move(*d));
    }
    progress.phase(strfmt("report: analysing and plotting %zu input%s", data.size(),
                          data.size() == 1 ? "" : "s"));
    res = report::make_report(data, o);
  }
  progress.stop();
  if (!res) return res.error();
  if (!res->render.message.empty())
    std::fprintf(stderr, "warning: %s\n", res->render.message.c_str());
  if (!quiet)
    std::fprintf(stderr, "report: %zu plots (%zu drawn) in %s in %.2f s\n", res->plots,
                 res->render.produced, res->index.c_str(), elapsed());
  return 0;
}

}  // namespace blkrr::cli
