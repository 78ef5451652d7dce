// blkrr replay LOAD DEVICE: replay a load with its original timing.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/dependency_options.h"
#include "core/rotation.h"
#include "core/distribution.h"
#include "core/io_guard.h"
#include "core/signals.h"
#include "core/args.h"
#include "core/device.h"
#include "core/start_at.h"
#include "replay/session.h"
#include "validate/live_validator.h"
#include "validate/replay_adapter.h"
#include "validate/report_io.h"

namespace blkrr::cli {
namespace {

// --spin-us when none is given (see --realtime below).
constexpr uint64_t kDefaultSpinUs = 100;
constexpr uint64_t kSpinNotGiven = ~uint64_t{0};

template <class T, class F>
ArgParser::Setter set_with(T* out, F parse) {
  return [out, parse](std::string_view v) -> Status {
    auto r = parse(v);
    if (!r) return r.error();
    *out = *r;
    return {};
  };
}

}  // namespace

Result<int> cmd_replay(int argc, char** argv) {
  replay::SessionOptions o;
  std::vector<std::string> pos;
  std::string from = "auto";
  uint64_t qd = 128, threads = 16, spin_us = kSpinNotGiven, rt_prio = 0;
  double start_at = 0;
  bool quiet = false;
  ArgParser p(
      "blkrr replay", "[options] LOAD DEVICE",
      "Replay LOAD (a blkreplay *.load.gz or a native .blkrr trace, streamed; or the pieces of\n"
      "one rotated recording, record --rotate) on DEVICE (/dev/NAME, NAME or MAJ:MIN) with\n"
      "O_DIRECT and its recorded timing: every request is due at its recorded offset from one\n"
      "start instant, and how late it started (delay) and how long it took (latency) is\n"
      "measured. DEVICE is overwritten: mounted devices and devices with a filesystem, RAID\n"
      "or partition-table signature are refused unless --force, and so is a device another\n"
      "replay holds (a BSD lock on the device node; the holder is named) or another program\n"
      "opened exclusively.");
  p.option('t', "timing", "MODE",
           "timestamp (default), fullspeed (in order, as fast as the queue allows) or dependency "
           "(each request after the inferred parents it waited for, plus its think time; needs "
           "completion times)",
           set_with(&o.schedule.mode, replay::parse_timing));
  add_dependency_options(p, o.schedule.deps);
  bool no_compensation = false;
  p.flag(0, "no-compensation", &no_compensation,
         "dependency: do not take the replayer's measured reaction time off think times");
  p.opt_double(0, "speedup", "F", "replay F times faster (0.5 = half speed); default 1",
               &o.schedule.speedup);
  p.option(0, "start", "TIME", "begin at this load time (e.g. 60, 1.5s, 2m)",
           set_with(&o.schedule.window_start_ns, parse_duration_ns));
  p.common(CommonOpt::kDuration, "replay this much load time only",
           set_with(&o.schedule.window_duration_ns, parse_duration_ns));
  p.opt_u64(0, "repeat", "N",
            "replay the load N times, each pass one mean gap after the previous one (the file "
            "is read again for every pass)",
            &o.source.repeat);
  p.option(0, "start-at", "UNIX_TIME", "start at this wall-clock instant (several hosts in step)",
           set_with(&start_at, parse_start_at));
  p.option(0, "order", "POLICY",
           "none (open loop, default), per-process (needs a native trace) or global",
           set_with(&o.order, replay::parse_order));
  p.option('e', "engine", "ENGINE", "uring (io_uring, default) or threads",
           set_with(&o.engine, replay::parse_engine));
  p.opt_u64(0, "threads", "N", "workers of the threads engine (default 16)", &threads);
  p.opt_u64(0, "queue-depth", "N", "at most N requests in flight (default 128)", &qd);
  p.opt_u64(0, "bottleneck", "N", "same as --queue-depth", &qd);
  p.option(
      0, "cmode", "MODE",
      "overlapping requests: conflicts (count only), drop, partial (push back, default), ordering",
      set_with(&o.cmode, replay::parse_cmode));
  p.option(0, "strong", "0|1|2", "what overlaps: 0 write/write, 1 read/write too (default), 2 any",
           set_with(&o.strong, replay::parse_strong));
  p.option(0, "vmode", "MODE", "none (default), verify, final-verify or paranoia",
           set_with(&o.vmode, replay::parse_vmode));
  // One meaning with convert's --wrap/--scale SIZE|DEVICE, whose target is
  // replay's DEVICE here.
  bool wrap = false;
  p.flag(0, "wrap", &wrap,
         "positions past the end of DEVICE wrap modulo its size (the default; convert --wrap "
         "DEVICE writes the same positions)");
  p.flag(0, "scale", &o.scale,
         "positions are scaled proportionally onto DEVICE instead (convert --scale DEVICE)");
  p.option(0, "align", "MODE",
           "requests not aligned to the logical block: round (default), skip, fail",
           set_with(&o.align, blkrr::parse_align));
  p.flag(0, "dry-run", &o.dry_run, "do everything but the reads and writes (results are FAKE)");
  p.flag(0, "fake-io", &o.fake_io, "submit no-op operations through the engine (results are FAKE)");
  bool no_direct = false;
  p.flag(0, "no-direct", &no_direct, "do not use O_DIRECT (results are FAKE)");
  p.flag(0, "stop-on-error", &o.stop_on_error,
         "end the replay at the first request the device fails (what is in flight completes, "
         "the rest is not started); by default failed requests are counted by errno, the "
         "first 100 listed in the summary, and the replay goes on. A device that goes away "
         "always ends it, with an error");
  p.flag(0, "force", &o.force,
         "replay onto a device that is mounted, holds data, or is locked by another replay");
  p.flag(0, "allow-file", &o.allow_file, "accept a regular file as DEVICE (tests)");
  p.opt_string(0, "from", "FORMAT", "input format (default: detected from the content)", &from);
  p.opt_u64(0, "spin-us", "US",
            "sleep until US before a deadline, then spin (default 100, more when timer "
            "wake-ups come later than that unless --fixed-spin; under --realtime 0: sleep to "
            "the deadline)",
            &spin_us);
  bool fixed_spin = false;
  p.flag(0, "fixed-spin", &fixed_spin, "never spin longer than --spin-us");
  p.opt_u64(0, "realtime", "PRIO",
            "run the replay threads SCHED_FIFO at PRIO (1-99) so that other load on the host "
            "cannot delay submissions; they then sleep to each deadline instead of spinning",
            &rt_prio);
  p.common_string(CommonOpt::kOutput, "per-request results in blkreplay's format", &o.output,
                  "OUT.replay.gz");
  bool json_stdout = false;
  p.common_flag(CommonOpt::kJson, &json_stdout, "the summary as JSON on standard output");
  p.common_string(CommonOpt::kJsonFile, "the summary as JSON into FILE", &o.json_path);
  bool overwrite = false;
  p.common_flag(CommonOpt::kOverwrite, &overwrite,
                "replace -o and --json-file files that exist (--force does not)");
  bool do_validate = false, fail_incomplete = false;
  p.flag(0, "validate", &do_validate,
         "watch the device's block layer with eBPF during the replay and check that every "
         "submitted request reached it (splits and merges allowed); result in the summary. "
         "Memory: at most 52 MB of held records and the 64 MB ring buffer, at any rate "
         "(--validate-window)");
  uint64_t validate_window_ns = validate::LiveOptions::kDefaultWindowNs;
  p.option(0, "validate-window", "TIME",
           "with --validate: how long to wait for the records of a request before resolving it "
           "(default 5s); records that come later are counted late and their requests missing. "
           "Memory holds one window of records (requests and block-layer records; a run of "
           "equal ones counts once), at most 52 MB of them at any rate (~800,000 waiting for "
           "the window, 64 bytes each), plus the 32 MiB ring buffer (64 MB resident). Past "
           "that cap the oldest are resolved early: the window shrinks, and the report counts "
           "how often and to how little (held_cap) and what came late for it. 0: no window, "
           "only the cap",
           set_with(&validate_window_ns, parse_duration_ns));
  p.flag(0, "fail-incomplete", &fail_incomplete,
         "with --validate: exit 3 when a request is missing, 4 when the verdict is unknown "
         "(the validator lost events)");
  p.common_flag(CommonOpt::kQuiet, &quiet, "no progress line and no end-of-run block");
  p.removed('n', "--dry-run");
  bool exact_pct = false;
  p.flag(0, "exact-percentiles", &exact_pct,
         "keep every latency and delay for exact percentiles (memory grows with the load); by "
         "default past 1 M requests they come from a histogram within 0.39 %");
  p.positionals("LOAD [PIECE...] DEVICE", &pos, 2, 100000);
  p.examples(
      "  blkrr replay prod.load.gz /dev/sdX -o run.replay.gz --json-file run.json\n"
      "  blkrr replay prod.load.gz /dev/sdX --validate --fail-incomplete -j | jq .validation\n"
      "  blkrr replay prod.blkrr /dev/sdX --order per-process --vmode verify\n"
      "  blkrr replay prod.load.gz /dev/sdX --start 10m -D 60 --speedup 2\n"
      "  blkrr replay prod.load.gz /dev/sdX --timing fullspeed --engine threads --threads 64\n"
      "  blkrr replay prod.load.gz /dev/sdX --start-at $(date +%s -d '+30 sec')   # on every host");
  auto pr = p.parse(argc, argv);
  if (!pr) return pr.error();
  if (!*pr) return 0;

  if (wrap && o.scale) return Error(ErrorKind::kUsage, "use either --wrap or --scale, once");
  o.load = pos[0];
  o.device = pos.back();
  if (pos.size() > 2) {  // the pieces of one rotated recording (docs/recording.md)
    o.more_pieces.assign(pos.begin() + 1, pos.end() - 1);
    if (group_rotated_pieces(std::vector<std::string>(pos.begin(), pos.end() - 1)).size() != 1) {
      const std::string& extra = pos[2];
      const bool json = extra.size() > 5 && extra.ends_with(".json");
      return Error(ErrorKind::kUsage,
                   "unexpected argument '" + extra + "'" +
                       (json ? " (--json writes to standard output; --json-file FILE writes a "
                               "file)"
                             : "") +
                       ": replay takes one LOAD and a DEVICE, or the pieces of one rotated "
                       "recording (record --rotate) and a DEVICE");
    }
  }
  // DEVICE as every command takes it: /dev/NAME, NAME or MAJ:MIN.
  auto node = device_node(o.device);
  if (!node) return node.error();
  o.device = *node;
  if (exact_pct) Distribution::set_default_exact_limit(UINT64_MAX);
  if (from != "auto") {
    auto f = parse_input_format(from);
    if (!f) return Error(ErrorKind::kUsage, "unknown input format '" + from + "'");
    o.source.format = *f;
  }
  if (o.source.repeat == 0) return Error(ErrorKind::kUsage, "--repeat must be at least 1");
  if (qd == 0 || qd > 65536)
    return Error(ErrorKind::kUsage, "--queue-depth must be between 1 and 65536");
  if (threads == 0 || threads > 4096)
    return Error(ErrorKind::kUsage, "--threads must be between 1 and 4096");
  o.queue_depth = static_cast<uint32_t>(qd);
  o.threads = static_cast<uint32_t>(threads);
  if (rt_prio > 99) return Error(ErrorKind::kUsage, "--realtime must be between 1 and 99");
  // A SCHED_FIFO thread that spins through the gaps of a dense load never
  // sleeps, and the kernel then stops it for tens of milliseconds to let other
  // work run (RT throttling, the fair server): measured 13-35 ms p99 at 50k
  // IOPS (docs/performance.md). Under --realtime it sleeps to the deadline,
  // unless --spin-us says otherwise.
  if (spin_us == kSpinNotGiven) spin_us = rt_prio > 0 ? 0 : kDefaultSpinUs;
  if (spin_us > 1'000'000)
    return Error(ErrorKind::kUsage, "--spin-us must be at most 1000000 (1 s)");
  o.spin_ns = spin_us * 1000;
  o.adaptive_spin = !fixed_spin;
  o.compensate_reaction = !no_compensation;
  o.rt_priority = static_cast<int>(rt_prio);
  o.direct = !no_direct;
  if (start_at != 0) o.start_at_unix = start_at;
  o.progress = !quiet && isatty(STDERR_FILENO);
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);

  if (fail_incomplete && !do_validate)
    return Error(ErrorKind::kUsage, "--fail-incomplete needs --validate");
  if (validate_window_ns != validate::LiveOptions::kDefaultWindowNs && !do_validate)
    return Error(ErrorKind::kUsage, "--validate-window needs --validate");
  if (do_validate && (o.dry_run || o.fake_io))
    return Error(ErrorKind::kUsage, "--validate needs real I/O: drop --dry-run / --fake-io");

  // -o and --json must not name the load or the device, and must be
  // writable, before the replay starts (io_guard.h).
  std::vector<std::string> inputs = {o.load, o.device};
  inputs.insert(inputs.end(), o.more_pieces.begin(), o.more_pieces.end());
  BLKRR_TRY(check_outputs({{o.output, "-o"}, {o.json_path, "--json-file"}}, inputs,
                          overwrite ? Existing::kReplace : Existing::kRefuse));
  if (json_stdout && !o.json_path.empty())
    return Error(ErrorKind::kUsage, "give --json or --json-file, not both");
  if (json_stdout && o.output == "-")
    return Error(ErrorKind::kUsage,
                 "-o - and -j both write to standard output; give --json-file FILE");
  if (json_stdout) o.json_path = "-";
  if (std::string in = input_file_at(o.device, {o.load}); !in.empty())
    return Error(ErrorKind::kUsage, "the device " + o.device + " is the load " + in +
                                        " (the same file); replaying would overwrite it");

  replay::SessionHooks hooks;
  std::unique_ptr<validate::LiveValidator> validator;
  validate::ValidatorSink vsink;
  int validation_status = 0;
  std::string validation_text;
  if (do_validate) {
    hooks.sinks.push_back(&vsink);
    // Attach after the safety checks (so their probe is not foreign I/O) and
    // before the first request is due.
    hooks.before_start = [&](const std::string& device) -> Status {
      validate::LiveOptions lo;
      lo.window_ns = validate_window_ns;
      auto v = validate::LiveValidator::start(device, lo);
      if (!v) return v.error().context("--validate");
      validator = std::move(*v);
      vsink.stream_to(validator.get());  // matched as they complete, within the window
      return {};
    };
    hooks.after_end = [&](nlohmann::json& summary, uint64_t start_ns) -> Status {
      vsink.set_start(start_ns);
      auto rep = validator->finish(vsink.take());
      if (!rep) return rep.error().context("--validate");
      summary["validation"] = validate::to_json(*rep);
      validation_text = validate::format_text(*rep);
      if (rep->verdict == validate::Verdict::kIncomplete) validation_status = 3;
      if (rep->verdict == validate::Verdict::kUnknown) validation_status = 4;
      return {};
    };
  }
  // Ctrl-C, SIGTERM or SIGHUP ends the replay early; a second Ctrl-C kills.
  StopSignals signals({.hangup = true, .second_ctrl_c_kills = true});
  auto oc = replay::run_session(o, hooks, &signals.flag());
  if (!oc) return oc.error();
  print_input_warnings("replay", oc->input_warnings);
  if (!oc->device_gone.empty()) std::fprintf(stderr, "%s\n", oc->device_gone.c_str());
  if (!quiet)
    for (const auto& l : oc->report) std::fprintf(stderr, "%s\n", l.c_str());
  if (!validation_text.empty()) std::fputs(validation_text.c_str(), stderr);
  if (oc->exit_status == 0 && fail_incomplete) return validation_status;
  return oc->exit_status;
}

}  // namespace blkrr::cli
