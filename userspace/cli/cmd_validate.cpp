// blkrr validate: offline check of a replay result (or a load) against a
// trace of the device recorded separately. The live check is
// `blkrr replay --validate` (validate/live_validator.h).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/validate_args.h"
#include "core/distribution.h"
#include "core/io_guard.h"
#include "core/progress.h"
#include "validate/offline.h"
#include "validate/report_io.h"

namespace blkrr::cli {

namespace {

// Reads the replay and its trace, checks that they belong together, and
// matches them.
Result<validate::Report> validate_inputs(const ValidateArgs& a) {
  // On a terminal, what is being done and for how long (large traces take
  // seconds to read and match).
  ProgressTicker progress(ProgressLine::wanted(a.quiet));
  progress.phase("validate: reading " + a.replay);
  auto replay = validate::read_replay_input(a.replay);
  if (!replay) return replay.error();
  progress.phase("validate: reading " + a.traces[0] + (a.traces.size() > 1 ? " ..." : ""));
  auto trace = validate::read_trace_input(a.traces, a.device);
  if (!trace) return trace.error();
  print_input_warnings("validate", replay->warnings);
  print_input_warnings("validate", trace->warnings);
  if (replay->is_replay_result) {  // the wrong trace is named, not blamed on the replay
    auto fits = validate::check_pairing(replay->origin, replay->span_ns(), trace->extent,
                                        !a.device.empty());
    if (!fits) return fits.error().context(a.replay + " and " + a.traces[0]);
  }
  progress.phase("validate: matching");
  validate::Report rep = validate::validate_offline(std::move(*replay), *trace, a.offline);
  progress.stop();
  return rep;
}

// The exit status of a verdict with --fail-incomplete.
int verdict_status(validate::Verdict v) {
  switch (v) {
    case validate::Verdict::kComplete:
      return 0;
    case validate::Verdict::kIncomplete:
      return kExitIncomplete;
    case validate::Verdict::kUnknown:
      return kExitUnknown;
  }
  return 0;
}

Result<int> run_validate(const ValidateArgs& a) {
  if (a.exact_percentiles) Distribution::set_default_exact_limit(UINT64_MAX);
  // --json-file must name neither the replay result nor a trace, and be writable,
  // before any work (io_guard.h).
  BLKRR_TRY(check_outputs({{a.json_path, "--json-file"}}, a.inputs(),
                          a.overwrite ? Existing::kReplace : Existing::kRefuse));
  auto rep = validate_inputs(a);
  if (!rep) return rep.error();
  if (!a.json_path.empty()) {
    std::string text = validate::to_json(*rep).dump(2) + "\n";
    if (a.json_path == "-") {
      std::fputs(text.c_str(), stdout);
    } else {
      auto st = write_file_atomic(a.json_path, text);
      if (!st) return st.error().context("the JSON report");
    }
  }
  if (!a.quiet) std::fputs(validate::format_text(*rep, a.list).c_str(), stderr);
  return a.fail_incomplete ? verdict_status(rep->verdict) : 0;
}

}  // namespace

Result<int> cmd_validate(int argc, char** argv) {
  auto a = parse_validate_args(argc, argv);
  if (!a) return a.error();
  if (a->help_printed) return 0;
  return run_validate(*a);
}

}  // namespace blkrr::cli
