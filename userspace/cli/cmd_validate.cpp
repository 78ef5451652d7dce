// blkrr validate: offline check of a replay result (or a load) against a
// trace of the device recorded separately. The live check is
// `blkrr replay --validate` (validate/live_validator.h).
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "core/distribution.h"
#include "core/io_guard.h"
#include "core/progress.h"
#include "core/args.h"
#include "validate/offline.h"
#include "validate/report_io.h"

namespace blkrr::cli {

Result<int> cmd_validate(int argc, char** argv) {
  std::vector<std::string> pos;
  std::string json_path, device, offset_str;
  bool fail_incomplete = false, strict = false, per_request = false, quiet = false;
  uint64_t slack_ns = 5'000'000, sector_offset = 0, list = 10, max_listed = 1000;
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
  bool json_stdout = false;
  p.common_flag(CommonOpt::kJson, &json_stdout, "the report as JSON on standard output");
  p.common_string(CommonOpt::kJsonFile, "the report as JSON into FILE", &json_path);
  bool overwrite = false;
  p.common_flag(CommonOpt::kOverwrite, &overwrite);
  p.flag(0, "fail-incomplete", &fail_incomplete, "exit non-zero unless the verdict is complete");
  p.common_string(CommonOpt::kDevice,
                  "device of the trace to compare with (name, /dev/name or MAJ:MIN); default: all",
                  &device);
  p.option(0, "slack", "DURATION",
           "time tolerance around each request's window (default 5ms; e.g. 500us, 20ms)",
           [&](std::string_view v) -> Status {
             auto d = parse_duration_ns(v);
             if (!d) return d.error();
             slack_ns = *d;
             return {};
           });
  p.opt_string(0, "offset", "SECONDS",
               "trace time minus replay time, instead of finding it (may be negative)",
               &offset_str);
  p.opt_u64(0, "sector-offset", "N",
            "add N sectors to replayed sectors (the replay ran on a partition starting at N)",
            &sector_offset);
  p.flag(0, "strict", &strict, "completions the trace missed also make the verdict unknown");
  p.flag(0, "per-request", &per_request,
         "JSON: replay and block-layer latency of every covered request");
  p.opt_u64(0, "list", "N", "requests shown per list on stderr (default 10)", &list);
  p.opt_u64(0, "max-listed", "N", "requests kept per list in the JSON (default 1000)", &max_listed);
  p.common_flag(CommonOpt::kQuiet, &quiet, "no report on stderr");
  for (char c : {'F', 's', 'O', 'S', 'x', 'r', 'l', 'L'})
    p.removed(c, "its long form (see --help)");
  bool exact_pct = false;
  p.flag(0, "exact-percentiles", &exact_pct,
         "exact latency percentiles however many requests (memory grows with them); by default "
         "past 1 M samples they come from a histogram within 0.39 %");
  p.positionals("REPLAY TRACE...", &pos, 2, 64);
  p.examples(
      "  blkrr record -d sdX -o run.blkrr &   # trace the device while the replay runs\n"
      "  blkrr replay prod.load.gz /dev/sdX -o run.replay.gz; kill %1\n"
      "  blkrr validate run.replay.gz run.blkrr --json-file run.validate.json --fail-incomplete\n"
      "  blkrr validate run.replay.gz capture -d sdb   # blktrace files capture.blktrace.N");
  auto pr = p.parse(argc, argv);
  if (!pr) return pr.error();
  if (!*pr) return 0;
  if (exact_pct) Distribution::set_default_exact_limit(UINT64_MAX);

  validate::OfflineOptions o;
  o.match.pre_slack_ns = slack_ns;
  o.match.post_slack_ns = slack_ns;
  o.match.strict_completions = strict;
  o.match.per_request = per_request;
  o.match.max_listed = max_listed;
  o.sector_offset = sector_offset;
  if (!offset_str.empty()) {
    auto v = parse_double(offset_str);
    if (!v) return Error(ErrorKind::kUsage, "--offset '" + offset_str + "': " + v.error().message);
    o.offset_ns = static_cast<int64_t>(*v * 1e9);
  }
  // --json-file must name neither the replay result nor a trace, and be writable,
  // before any work (io_guard.h).
  BLKRR_TRY(check_outputs({{json_path, "--json-file"}}, pos,
                          overwrite ? Existing::kReplace : Existing::kRefuse));
  if (json_stdout && !json_path.empty())
    return Error(ErrorKind::kUsage, "give --json or --json-file, not both");
  if (json_stdout) json_path = "-";
  // On a terminal, what is being done and for how long (large traces take
  // seconds to read and match).
  ProgressTicker progress(ProgressLine::wanted(quiet));
  progress.phase("validate: reading " + pos[0]);
  auto replay = validate::read_replay_input(pos[0]);
  if (!replay) return replay.error();
  std::vector<std::string> traces(pos.begin() + 1, pos.end());
  progress.phase("validate: reading " + traces[0] + (traces.size() > 1 ? " ..." : ""));
  auto trace = validate::read_trace_input(traces, device);
  if (!trace) return trace.error();
  print_input_warnings("validate", replay->warnings);
  print_input_warnings("validate", trace->warnings);
  if (replay->is_replay_result) {  // the wrong trace is named, not blamed on the replay
    auto fits =
        validate::check_pairing(replay->origin, replay->span_ns(), trace->extent, !device.empty());
    if (!fits) return fits.error().context(pos[0] + " and " + traces[0]);
  }
  progress.phase("validate: matching");
  validate::Report rep = validate::validate_offline(std::move(*replay), *trace, o);
  progress.stop();

  if (!json_path.empty()) {
    std::string text = validate::to_json(rep).dump(2) + "\n";
    if (json_path == "-") {
      std::fputs(text.c_str(), stdout);
    } else {
      auto st = write_file_atomic(json_path, text);
      if (!st) return st.error().context("the JSON report");
    }
  }
  if (!quiet) std::fputs(validate::format_text(rep, list).c_str(), stderr);
  if (!fail_incomplete) return 0;
  switch (rep.verdict) {
    case validate::Verdict::kComplete:
      return 0;
    case validate::Verdict::kIncomplete:
      return kExitIncomplete;
    case validate::Verdict::kUnknown:
      return kExitUnknown;
  }
  return 0;
}

}  // namespace blkrr::cli
