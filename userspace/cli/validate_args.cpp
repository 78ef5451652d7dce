#include "cli/validate_args.h"

#include "core/args.h"
#include "core/common_options.h"

namespace blkrr::cli {

namespace {

// The options as given, before the rules between them.
struct ValidateFlags {
  std::vector<std::string> pos;
  std::string offset;
  bool json_stdout = false;
  uint64_t slack_ns = 5'000'000;
};

void add_match_options(ArgParser& p, ValidateArgs& a, ValidateFlags& f) {
  validate::OfflineOptions& o = a.offline;
  p.option(0, "slack", "DURATION",
           "time tolerance around each request's window (default 5ms; e.g. 500us, 20ms)",
           [&f](std::string_view v) -> Status {
             auto d = parse_duration_ns(v);
             if (!d) return d.error();
             f.slack_ns = *d;
             return {};
           });
  p.opt_string(0, "offset", "SECONDS",
               "trace time minus replay time, instead of finding it (may be negative)", &f.offset);
  p.opt_u64(0, "sector-offset", "N",
            "add N sectors to replayed sectors (the replay ran on a partition starting at N)",
            &o.sector_offset);
  p.flag(0, "strict", &o.match.strict_completions,
         "completions the trace missed also make the verdict unknown");
  p.flag(0, "per-request", &o.match.per_request,
         "JSON: replay and block-layer latency of every covered request");
}

void add_validate_options(ArgParser& p, ValidateArgs& a, ValidateFlags& f) {
  p.common_flag(CommonOpt::kJson, &f.json_stdout, "the report as JSON on standard output");
  p.common_string(CommonOpt::kJsonFile, "the report as JSON into FILE", &a.json_path);
  p.common_flag(CommonOpt::kOverwrite, &a.overwrite);
  p.flag(0, "fail-incomplete", &a.fail_incomplete, "exit non-zero unless the verdict is complete");
  p.common_string(CommonOpt::kDevice,
                  "device of the trace to compare with (name, /dev/name or MAJ:MIN); default: all",
                  &a.device);
  add_match_options(p, a, f);
  p.opt_u64(0, "list", "N", "requests shown per list on stderr (default 10)", &a.list);
  p.opt_u64(0, "max-listed", "N", "requests kept per list in the JSON (default 1000)",
            &a.offline.match.max_listed);
  p.common_flag(CommonOpt::kQuiet, &a.quiet, "no report on stderr");
  for (char c : {'F', 's', 'O', 'S', 'x', 'r', 'l', 'L'})
    p.removed(c, "its long form (see --help)");
  p.flag(0, "exact-percentiles", &a.exact_percentiles,
         "exact latency percentiles however many requests (memory grows with them); by default "
         "past 1 M samples they come from a histogram within 0.39 %");
  p.positionals("REPLAY TRACE...", &f.pos, 2, 64);
}

// --slack, --offset, --json and --json-file into their values, the
// positionals into the replay and its traces.
Status take_validate_flags(const ValidateFlags& f, ValidateArgs& a) {
  validate::OfflineOptions& o = a.offline;
  o.match.pre_slack_ns = f.slack_ns;
  o.match.post_slack_ns = f.slack_ns;
  if (!f.offset.empty()) {
    auto v = parse_double(f.offset);
    if (!v) return Error(ErrorKind::kUsage, "--offset '" + f.offset + "': " + v.error().message);
    o.offset_ns = static_cast<int64_t>(*v * 1e9);
  }
  if (f.json_stdout && !a.json_path.empty())
    return Error(ErrorKind::kUsage, "give --json or --json-file, not both");
  if (f.json_stdout) a.json_path = std::string("-");  // (= "-" trips GCC 12's -Wrestrict)
  a.replay = f.pos[0];
  a.traces.assign(f.pos.begin() + 1, f.pos.end());
  return {};
}

}  // namespace

std::vector<std::string> ValidateArgs::inputs() const {
  std::vector<std::string> all{replay};
  all.insert(all.end(), traces.begin(), traces.end());
  return all;
}

Result<ValidateArgs> parse_validate_args(int argc, char** argv) {
  ValidateArgs a;
  a.offline.match.max_listed = 1000;
  ValidateFlags f;
  ArgParser p(
      "blkrr validate", "REPLAY TRACE... [options]",
      "Check that the block layer served every request of a replay: compare a replay result\n"
      "(*.replay.gz) or a load (*.load.gz) with a trace of the replay device recorded\n"
      "separately (native .blkrr, blktrace capture NAME or NAME.blktrace.N, blkparse text).\n"
      "Requests are matched by sector range, operation and time window, allowing splits and\n"
      "merges. The replay's times are relative: submission = due time (from the speedup,\n"
      "--start and timing the replay recorded) + delay; they are put on the trace's clock by\n"
      "the offset most of the first requests agree on, or, when no offset fits, requests are\n"
      "paired by order and sector (see docs/validate.md). Prints a report on stderr.\n"
      "Exit status with --fail-incomplete: 0 complete, 3 incomplete, 4 unknown (lost events).");
  add_validate_options(p, a, f);
  p.examples(
      "  blkrr record -d sdX -o run.blkrr &   # trace the device while the replay runs\n"
      "  blkrr replay prod.load.gz /dev/sdX -o run.replay.gz; kill %1\n"
      "  blkrr validate run.replay.gz run.blkrr --json-file run.validate.json --fail-incomplete\n"
      "  blkrr validate run.replay.gz capture -d sdb   # blktrace files capture.blktrace.N");
  auto pr = p.parse(argc, argv);
  if (!pr) return pr.error();
  if (!*pr) {
    a.help_printed = true;
    return a;
  }
  BLKRR_TRY(take_validate_flags(f, a));
  return a;
}

}  // namespace blkrr::cli
