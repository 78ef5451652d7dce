#include "cli/report_args.h"

#include "core/args.h"
#include "core/common_options.h"

namespace blkrr::cli {

namespace {

// The options as given, before the rules between them.
struct ReportFlags {
  std::vector<std::string> inputs;
  std::string original;
  uint64_t bins = 0;
};

void add_report_options(ArgParser& ap, ReportArgs& a, ReportFlags& f) {
  ap.common_string(CommonOpt::kOutput,
                   "report directory (created with its parents; one holding a report is "
                   "replaced only with --overwrite)",
                   &a.report.out_dir, "DIR");
  ap.common_flag(CommonOpt::kOverwrite, &a.overwrite, "replace the report in an existing -o DIR");
  ap.flag(0, "static", &a.report.want_static, "only the static analyses (also of replay results)");
  ap.flag(0, "dynamic", &a.report.want_dynamic, "only the dynamic analyses");
  ap.opt_string(0, "compare", "ORIGINAL",
                "fidelity of the replay results FILE... against the original load or trace",
                &f.original);
  ap.opt_u64(0, "bins", "N", "histogram buckets (default 50)", &f.bins);
  for (char c : {'s', 'c', 'b'}) ap.removed(c, "its long form (see --help)");
  ap.removed('d', "--dynamic");
  ap.opt_strings('l', "label", "NAME",
                 "name of the next input in plots and file names (repeatable, in input order; "
                 "with --compare the original comes first)",
                 &a.labels);
  ap.opt_string(0, "gnuplot", "PROG", "gnuplot program to run (default gnuplot)",
                &a.report.gnuplot);
  ap.common_flag(CommonOpt::kQuiet, &a.quiet, "no progress messages");
  ap.flag(0, "exact-percentiles", &a.exact_percentiles,
          "exact latency percentiles however many requests (memory grows with them); by default "
          "past 1 M samples they come from a histogram within 0.39 %");
  ap.positionals("FILE", &f.inputs, 0, 100000);
}

// -o, --bins, --compare and --label against each other; the inputs in order.
Status check_report_flags(const ReportFlags& f, ReportArgs& a) {
  report::ReportOptions& o = a.report;
  if (o.out_dir.empty()) return Error(ErrorKind::kUsage, "missing -o DIR (where the report goes)");
  if (f.bins > 100000)
    return Error(ErrorKind::kUsage,
                 "--bins " + std::to_string(f.bins) + " is too many (at most 100000)");
  while (o.out_dir.size() > 1 && o.out_dir.back() == '/') o.out_dir.pop_back();
  o.bins = f.bins ? f.bins : 50;
  if (f.inputs.empty() && f.original.empty()) return {};  // re-report
  if (!f.original.empty()) {
    o.compare = true;
    a.files.push_back(f.original);
  }
  a.files.insert(a.files.end(), f.inputs.begin(), f.inputs.end());
  if (a.files.size() < 2 && o.compare)
    return Error(ErrorKind::kUsage,
                 "--compare " + f.original + " needs at least one replay result FILE");
  if (a.labels.size() > a.files.size())
    return Error(ErrorKind::kUsage, "more --label options than inputs");
  return {};
}

}  // namespace

Result<ReportArgs> parse_report_args(int argc, char** argv) {
  ReportArgs a;
  ReportFlags f;
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
  add_report_options(ap, a, f);
  ap.examples(
      "  blkrr report prod.load.gz -o rep/                      static analyses of a load\n"
      "  blkrr report run1.replay.gz run2.replay.gz -o rep/     replays overlaid\n"
      "  blkrr report --compare prod.blkrr r1.replay.gz r2.replay.gz r3.replay.gz -o fid/\n"
      "  blkrr report -o rep/ --bins 100                        re-report with 100 buckets\n"
      "  firefox rep/index.html");
  auto ok = ap.parse(argc, argv);
  if (!ok) return ok.error();
  if (!*ok) {
    a.help_printed = true;
    return a;
  }
  BLKRR_TRY(check_report_flags(f, a));
  a.report.jobs = 2;
  for (int i = 0; i < argc; ++i) a.report.command_line += (i ? " " : "") + std::string(argv[i]);
  return a;
}

}  // namespace blkrr::cli
