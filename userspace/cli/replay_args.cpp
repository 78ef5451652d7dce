#include "cli/replay_args.h"

#include <string>
#include <vector>

#include "cli/dependency_options.h"
#include "core/args.h"
#include "core/device.h"
#include "core/rotation.h"
#include "core/start_at.h"
#include "validate/live_validator.h"

namespace blkrr::cli {
namespace {

// --spin-us when none is given (see --realtime below).
constexpr uint64_t kDefaultSpinUs = 100;
constexpr uint64_t kSpinNotGiven = ~uint64_t{0};

// What the options say before the rules turn it into ReplayArgs.
struct RawReplayArgs {
  std::vector<std::string> pos;
  std::string from = "auto";
  uint64_t qd = 128, threads = 16, spin_us = kSpinNotGiven, rt_prio = 0;
  uint64_t reap_spin_us = 0;
  double start_at = 0;
  bool compensation = false, no_compensation = false, wrap = false, no_direct = false,
       fixed_spin = false;
};

template <class T, class F>
ArgParser::Setter set_with(T* out, F parse) {
  return [out, parse](std::string_view v) -> Status {
    auto r = parse(v);
    if (!r) return r.error();
    *out = *r;
    return {};
  };
}

void add_timing_options(ArgParser& p, replay::SessionOptions& o, RawReplayArgs& raw) {
  p.option('t', "timing", "MODE",
           "timestamp (default), fullspeed (in order, as fast as the queue allows) or dependency "
           "(each request after the inferred parents it waited for, plus its think time; needs "
           "completion times)",
           set_with(&o.schedule.mode, replay::parse_timing));
  add_dependency_options(p, o.schedule.deps);
  p.opt_string(0, "dependencies", "FILE",
               "dependency: the graph `blkrr convert LOAD --dependencies FILE` wrote (maybe "
               "edited) instead of inferring one; its windows are the graph's",
               &o.dependency_graph);
  p.flag(0, "compensation", &raw.compensation,
         "dependency: take the replayer's measured reaction time off think times (the default "
         "under --dep-think recorded only)");
  p.flag(0, "no-compensation", &raw.no_compensation,
         "dependency: do not take the replayer's measured reaction time off think times (the "
         "default under --dep-think work)");
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
           set_with(&raw.start_at, parse_start_at));
  p.option(0, "order", "POLICY",
           "none (open loop, default), per-process (needs a native trace) or global",
           set_with(&o.order, replay::parse_order));
}

void add_engine_options(ArgParser& p, replay::SessionOptions& o, RawReplayArgs& raw) {
  p.option('e', "engine", "ENGINE", "uring (io_uring, default) or threads",
           set_with(&o.engine, replay::parse_engine));
  p.opt_u64(0, "threads", "N", "workers of the threads engine (default 16)", &raw.threads);
  p.opt_u64(0, "queue-depth", "N", "at most N requests in flight (default 128)", &raw.qd);
  p.opt_u64(0, "bottleneck", "N", "same as --queue-depth", &raw.qd);
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
  p.flag(0, "wrap", &raw.wrap,
         "positions past the end of DEVICE wrap modulo its size (the default; convert --wrap "
         "DEVICE writes the same positions)");
  p.flag(0, "scale", &o.scale,
         "positions are scaled proportionally onto DEVICE instead (convert --scale DEVICE)");
  p.option(0, "align", "MODE",
           "requests not aligned to the logical block: round (default), skip, fail",
           set_with(&o.align, blkrr::parse_align));
}

void add_safety_options(ArgParser& p, replay::SessionOptions& o, RawReplayArgs& raw) {
  p.flag(0, "dry-run", &o.dry_run, "do everything but the reads and writes (results are FAKE)");
  p.flag(0, "fake-io", &o.fake_io, "submit no-op operations through the engine (results are FAKE)");
  p.flag(0, "no-direct", &raw.no_direct, "do not use O_DIRECT (results are FAKE)");
  p.flag(0, "stop-on-error", &o.stop_on_error,
         "end the replay at the first request the device fails (what is in flight completes, "
         "the rest is not started); by default failed requests are counted by errno, the "
         "first 100 listed in the summary, and the replay goes on. A device that goes away "
         "always ends it, with an error");
  p.flag(0, "force", &o.force,
         "replay onto a device that is mounted, holds data, or is locked by another replay");
  p.flag(0, "allow-file", &o.allow_file, "accept a regular file as DEVICE (tests)");
  p.opt_string(0, "from", "FORMAT", "input format (default: detected from the content)", &raw.from);
  p.opt_u64(0, "spin-us", "US",
            "sleep until US before a deadline, then spin (default 100, more when timer "
            "wake-ups come later than that unless --fixed-spin; under --realtime 0: sleep to "
            "the deadline)",
            &raw.spin_us);
  p.flag(0, "fixed-spin", &raw.fixed_spin, "never spin longer than --spin-us");
  p.opt_u64(0, "reap-spin-us", "US",
            "waiting for a completion with nothing due, poll for it up to US (0-1000) before "
            "sleeping (default 0: sleep at once); the spinning thread takes a CPU that the "
            "device's kernel worker or the threads engine's workers may need",
            &raw.reap_spin_us);
  p.opt_u64(0, "realtime", "PRIO",
            "run the replay threads SCHED_FIFO at PRIO (1-99) so that other load on the host "
            "cannot delay submissions; they then sleep to each deadline instead of spinning",
            &raw.rt_prio);
}

void add_result_options(ArgParser& p, ReplayArgs& a) {
  p.common_string(CommonOpt::kOutput, "per-request results in blkreplay's format",
                  &a.session.output, "OUT.replay.gz");
  p.common_flag(CommonOpt::kJson, &a.json_stdout, "the summary as JSON on standard output");
  p.common_string(CommonOpt::kJsonFile, "the summary as JSON into FILE", &a.session.json_path);
  p.common_flag(CommonOpt::kOverwrite, &a.overwrite,
                "replace -o and --json-file files that exist (--force does not)");
  p.flag(0, "validate", &a.validate,
         "watch the device's block layer with eBPF during the replay and check that every "
         "submitted request reached it (splits and merges allowed); result in the summary. A "
         "dm or md volume is followed down its stack to the disks below it, a RAID1's writes "
         "on every member, a striped volume's requests into each chunk. "
         "Memory: at most 52 MB of held records and the 64 MB ring buffer, at any rate "
         "(--validate-window)");
  p.option(0, "validate-window", "TIME",
           "with --validate: how long to wait for the records of a request before resolving it "
           "(default 5s); records that come later are counted late and their requests missing. "
           "Memory holds one window of records (requests and block-layer records; a run of "
           "equal ones counts once), at most 52 MB of them at any rate (~800,000 waiting for "
           "the window, 64 bytes each), plus the 32 MiB ring buffer (64 MB resident). Past "
           "that cap the oldest are resolved early: the window shrinks, and the report counts "
           "how often and to how little (held_cap) and what came late for it. 0: no window, "
           "only the cap",
           set_with(&a.validate_window_ns, parse_duration_ns));
  p.flag(0, "fail-incomplete", &a.fail_incomplete,
         "with --validate: exit 3 when a request is missing, 4 when the verdict is unknown "
         "(the validator lost events)");
  p.common_flag(CommonOpt::kQuiet, &a.quiet, "no progress line and no end-of-run block");
  p.removed('n', "--dry-run");
  p.flag(0, "exact-percentiles", &a.exact_percentiles,
         "keep every latency and delay for exact percentiles (memory grows with the load); by "
         "default past 1 M requests they come from a histogram within 0.39 %");
}

// LOAD [PIECE...] DEVICE, DEVICE as every command takes it: /dev/NAME, NAME
// or MAJ:MIN.
Status take_positionals(const std::vector<std::string>& pos, replay::SessionOptions& o) {
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
  auto node = device_node(o.device);
  if (!node) return node.error();
  o.device = *node;
  return {};
}

// The numbers in range, and the engine's settings from them.
Status take_numbers(const RawReplayArgs& raw, replay::SessionOptions& o) {
  if (raw.from != "auto") {
    auto f = parse_input_format(raw.from);
    if (!f) return Error(ErrorKind::kUsage, "unknown input format '" + raw.from + "'");
    o.source.format = *f;
  }
  if (o.source.repeat == 0) return Error(ErrorKind::kUsage, "--repeat must be at least 1");
  if (raw.qd == 0 || raw.qd > 65536)
    return Error(ErrorKind::kUsage, "--queue-depth must be between 1 and 65536");
  if (raw.threads == 0 || raw.threads > 4096)
    return Error(ErrorKind::kUsage, "--threads must be between 1 and 4096");
  o.queue_depth = static_cast<uint32_t>(raw.qd);
  o.threads = static_cast<uint32_t>(raw.threads);
  if (raw.rt_prio > 99) return Error(ErrorKind::kUsage, "--realtime must be between 1 and 99");
  // A SCHED_FIFO thread that spins through the gaps of a dense load never
  // sleeps, and the kernel then stops it for tens of milliseconds to let other
  // work run (RT throttling, the fair server): measured 13-35 ms p99 at 50k
  // IOPS (docs/performance.md). Under --realtime it sleeps to the deadline,
  // unless --spin-us says otherwise.
  uint64_t spin_us = raw.spin_us;
  if (spin_us == kSpinNotGiven) spin_us = raw.rt_prio > 0 ? 0 : kDefaultSpinUs;
  if (spin_us > 1'000'000)
    return Error(ErrorKind::kUsage, "--spin-us must be at most 1000000 (1 s)");
  o.spin_ns = spin_us * 1000;
  if (raw.reap_spin_us > 1000)
    return Error(ErrorKind::kUsage, "--reap-spin-us must be at most 1000");
  o.reap_spin_ns = raw.reap_spin_us * 1000;
  o.adaptive_spin = !raw.fixed_spin;
  if (raw.compensation && raw.no_compensation)
    return Error(ErrorKind::kUsage, "give --compensation or --no-compensation, not both");
  o.compensation = raw.compensation      ? replay::Compensation::kOn
                   : raw.no_compensation ? replay::Compensation::kOff
                                         : replay::Compensation::kAuto;
  o.rt_priority = static_cast<int>(raw.rt_prio);
  o.direct = !raw.no_direct;
  if (raw.start_at != 0) o.start_at_unix = raw.start_at;
  return {};
}

// --validate and its options, and the one standard output.
Status check_validate_and_json(const ReplayArgs& a) {
  if (a.fail_incomplete && !a.validate)
    return Error(ErrorKind::kUsage, "--fail-incomplete needs --validate");
  if (a.validate_window_ns != validate::LiveOptions::kDefaultWindowNs && !a.validate)
    return Error(ErrorKind::kUsage, "--validate-window needs --validate");
  if (a.validate && (a.session.dry_run || a.session.fake_io))
    return Error(ErrorKind::kUsage, "--validate needs real I/O: drop --dry-run / --fake-io");
  if (a.json_stdout && !a.session.json_path.empty())
    return Error(ErrorKind::kUsage, "give --json or --json-file, not both");
  if (a.json_stdout && a.session.output == "-")
    return Error(ErrorKind::kUsage,
                 "-o - and -j both write to standard output; give --json-file FILE");
  return {};
}

}  // namespace

Result<ReplayArgs> parse_replay_args(int argc, char** argv) {
  ReplayArgs a;
  a.validate_window_ns = validate::LiveOptions::kDefaultWindowNs;
  RawReplayArgs raw;
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
  add_timing_options(p, a.session, raw);
  add_engine_options(p, a.session, raw);
  add_safety_options(p, a.session, raw);
  add_result_options(p, a);
  p.positionals("LOAD [PIECE...] DEVICE", &raw.pos, 2, 100000);
  p.examples(
      "  blkrr replay prod.load.gz /dev/sdX -o run.replay.gz --json-file run.json\n"
      "  blkrr replay prod.load.gz /dev/sdX --validate --fail-incomplete -j | jq .validation\n"
      "  blkrr replay prod.blkrr /dev/sdX --order per-process --vmode verify\n"
      "  blkrr replay prod.load.gz /dev/sdX --start 10m -D 60 --speedup 2\n"
      "  blkrr replay prod.load.gz /dev/sdX --timing fullspeed --engine threads --threads 64\n"
      "  blkrr replay prod.load.gz /dev/sdX --start-at $(date +%s -d '+30 sec')   # on every host");
  auto pr = p.parse(argc, argv);
  if (!pr) return pr.error();
  if (!*pr) {
    a.help_printed = true;
    return a;
  }
  if (raw.wrap && a.session.scale)
    return Error(ErrorKind::kUsage, "use either --wrap or --scale, once");
  BLKRR_TRY(take_positionals(raw.pos, a.session));
  BLKRR_TRY(take_numbers(raw, a.session));
  for (int i = 0; i < argc; ++i) a.session.command_line += (i ? " " : "") + std::string(argv[i]);
  BLKRR_TRY(check_validate_and_json(a));
  return a;
}

}  // namespace blkrr::cli
