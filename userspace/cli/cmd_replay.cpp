// blkrr replay LOAD DEVICE: replay a load with its original timing.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/replay_args.h"
#include "core/distribution.h"
#include "core/io_guard.h"
#include "core/signals.h"
#include "replay/session.h"
#include "validate/live_validator.h"
#include "validate/replay_adapter.h"
#include "validate/report_io.h"

namespace blkrr::cli {
namespace {

// -o and --json must not name the load or the device, and must be writable,
// before the replay starts (io_guard.h); nor may the device be the load.
Status check_replay_files(const ReplayArgs& a) {
  const replay::SessionOptions& o = a.session;
  std::vector<std::string> inputs = {o.load, o.device};
  inputs.insert(inputs.end(), o.more_pieces.begin(), o.more_pieces.end());
  BLKRR_TRY(check_outputs({{o.output, "-o"}, {o.json_path, "--json-file"}}, inputs,
                          a.overwrite ? Existing::kReplace : Existing::kRefuse));
  if (std::string in = input_file_at(o.device, {o.load}); !in.empty())
    return Error(ErrorKind::kUsage, "the device " + o.device + " is the load " + in +
                                        " (the same file); replaying would overwrite it");
  return {};
}

// --validate: a live validator attached to the device for the replay, its
// report added to the summary.
struct ValidateHooks {
  std::unique_ptr<validate::LiveValidator> validator;
  validate::ValidatorSink vsink;
  int status = 0;
  std::string text;

  void attach(replay::SessionHooks& hooks, uint64_t window_ns) {
    hooks.sinks.push_back(&vsink);
    // Attach after the safety checks (so their probe is not foreign I/O) and
    // before the first request is due.
    hooks.before_start = [this, window_ns](const std::string& device) -> Status {
      validate::LiveOptions lo;
      lo.window_ns = window_ns;
      auto v = validate::LiveValidator::start(device, lo);
      if (!v) return v.error().context("--validate");
      validator = std::move(*v);
      vsink.stream_to(validator.get());  // matched as they complete, within the window
      return {};
    };
    hooks.after_end = [this](nlohmann::json& summary, uint64_t start_ns) -> Status {
      vsink.set_start(start_ns);
      auto rep = validator->finish(vsink.take());
      if (!rep) return rep.error().context("--validate");
      summary["validation"] = validate::to_json(*rep);
      text = validate::format_text(*rep);
      if (rep->verdict == validate::Verdict::kIncomplete) status = 3;
      if (rep->verdict == validate::Verdict::kUnknown) status = 4;
      return {};
    };
  }
};

}  // namespace

Result<int> run_replay(ReplayArgs a) {
  if (a.exact_percentiles) Distribution::set_default_exact_limit(UINT64_MAX);
  replay::SessionOptions& o = a.session;
  o.progress = !a.quiet && isatty(STDERR_FILENO);
  BLKRR_TRY(check_replay_files(a));
  if (a.json_stdout) o.json_path = std::string("-");

  replay::SessionHooks hooks;
  ValidateHooks validation;
  if (a.validate) validation.attach(hooks, a.validate_window_ns);
  // Ctrl-C, SIGTERM or SIGHUP ends the replay early; a second Ctrl-C kills.
  StopSignals signals({.hangup = true, .second_ctrl_c_kills = true});
  auto oc = replay::run_session(o, hooks, &signals.flag());
  if (!oc) return oc.error();
  print_input_warnings("replay", oc->input_warnings);
  if (!oc->device_gone.empty()) std::fprintf(stderr, "%s\n", oc->device_gone.c_str());
  if (!a.quiet)
    for (const auto& l : oc->report) std::fprintf(stderr, "%s\n", l.c_str());
  if (!validation.text.empty()) std::fputs(validation.text.c_str(), stderr);
  if (oc->exit_status == 0 && a.fail_incomplete) return validation.status;
  return oc->exit_status;
}

Result<int> cmd_replay(int argc, char** argv) {
  auto a = parse_replay_args(argc, argv);
  if (!a) return a.error();
  if (a->help_printed) return 0;
  return run_replay(std::move(*a));
}

}  // namespace blkrr::cli
