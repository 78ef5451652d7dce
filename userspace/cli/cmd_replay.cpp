// blkrr replay LOAD DEVICE: replay a load with its original timing.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/distribution.h"
#include "core/io_guard.h"
#include "core/args.h"
#include "core/start_at.h"
#include "replay/session.h"
#include "validate/live.h"
#include "validate/replay_adapter.h"
#include "validate/report_io.h"

namespace blkrr::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void on_sigint(int) {
  g_stop.store(true);
  signal(SIGINT, SIG_DFL);  // a second Ctrl-C kills
}

// Installs the Ctrl-C handler for the lifetime of the replay.
class SigintGuard {
 public:
  SigintGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SigintGuard() {
    sigaction(SIGINT, &old_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_ {
  }, old_term_{};
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

}  // namespace

Result<int> cmd_replay(int argc, char** argv) {
  replay::SessionOptions o;
  std::vector<std::string> pos;
  std::string from = "auto";
  uint64_t qd = 128, threads = 16, spin_us = 100, rt_prio = 0;
  double start_at = 0;
  bool quiet = false;
  ArgParser p(
      "blkrr replay", "[options] LOAD DEVICE",
      "Replay LOAD (a blkreplay *.load.gz or a native .blkrr trace, streamed) on DEVICE with\n"
      "O_DIRECT and its recorded timing: every request is due at its recorded offset from one\n"
      "start instant, and how late it started (delay) and how long it took (latency) is\n"
      "measured. DEVICE is overwritten: mounted devices and devices with a filesystem, RAID\n"
      "or partition-table signature are refused unless --force.");
  p.option('t', "timing", "MODE",
           "timestamp (default) or fullspeed (in order, as fast as the queue allows)",
           set_with(&o.schedule.mode, replay::parse_timing));
  p.opt_double(0, "speedup", "F", "replay F times faster (0.5 = half speed); default 1",
               &o.schedule.speedup);
  p.option(0, "start", "TIME", "begin at this load time (e.g. 60, 1.5s, 2m)",
           set_with(&o.schedule.window_start_ns, parse_duration_ns));
  p.option(0, "duration", "TIME", "replay this much load time only",
           set_with(&o.schedule.window_duration_ns, parse_duration_ns));
  p.option(0, "start-at", "UNIX_TIME", "start at this wall-clock instant (several hosts in step)",
           set_with(&start_at, parse_start_at));
  p.option(0, "order", "POLICY",
           "none (open loop, default), per-process (needs a native trace) or global",
           set_with(&o.order, replay::parse_order));
  p.option('e', "engine", "ENGINE", "uring (io_uring, default) or threads",
           set_with(&o.engine, replay::parse_engine));
  p.opt_u64(0, "threads", "N", "workers of the threads engine (default 16)", &threads);
  p.opt_u64('q', "queue-depth", "N", "at most N requests in flight (default 128)", &qd);
  p.opt_u64(0, "bottleneck", "N", "same as --queue-depth", &qd);
  p.option(
      0, "cmode", "MODE",
      "overlapping requests: conflicts (count only), drop, partial (push back, default), ordering",
      set_with(&o.cmode, replay::parse_cmode));
  p.option(0, "strong", "0|1|2", "what overlaps: 0 write/write, 1 read/write too (default), 2 any",
           set_with(&o.strong, replay::parse_strong));
  p.option(0, "vmode", "MODE", "none (default), verify, final-verify or paranoia",
           set_with(&o.vmode, replay::parse_vmode));
  p.flag(0, "scale", &o.scale,
         "map positions proportionally instead of wrapping modulo the device size");
  p.option(0, "align", "MODE",
           "requests not aligned to the logical block: round (default), skip, fail",
           set_with(&o.align, blkrr::parse_align));
  p.flag('n', "dry-run", &o.dry_run, "do everything but the reads and writes (results are FAKE)");
  p.flag(0, "fake-io", &o.fake_io, "submit no-op operations through the engine (results are FAKE)");
  bool no_direct = false;
  p.flag(0, "no-direct", &no_direct, "do not use O_DIRECT (results are FAKE)");
  p.flag(0, "force", &o.force, "replay onto a device that is mounted or holds data");
  p.flag(0, "allow-file", &o.allow_file, "accept a regular file as DEVICE (tests)");
  p.opt_string(0, "from", "FORMAT", "input format (default: detected from the content)", &from);
  p.opt_u64(0, "spin-us", "US",
            "sleep until US before a deadline, then spin (default 100; more when timer "
            "wake-ups come later than that, unless --fixed-spin)",
            &spin_us);
  bool fixed_spin = false;
  p.flag(0, "fixed-spin", &fixed_spin, "never spin longer than --spin-us");
  p.opt_u64(0, "realtime", "PRIO",
            "run the replay threads SCHED_FIFO at PRIO (1-99) so that other load on the host "
            "cannot delay submissions",
            &rt_prio);
  p.opt_string('o', "output", "OUT.replay.gz", "per-request results in blkreplay's format",
               &o.output);
  p.opt_string(0, "json", "FILE", "summary as JSON", &o.json_path);
  bool do_validate = false, fail_incomplete = false;
  p.flag(0, "validate", &do_validate,
         "watch the device's block layer with eBPF during the replay and check that every "
         "submitted request reached it (splits and merges allowed); result in the summary");
  p.flag(0, "fail-incomplete", &fail_incomplete,
         "with --validate: exit 3 when a request is missing, 4 when the verdict is unknown "
         "(the validator lost events)");
  p.flag(0, "quiet", &quiet, "no progress line and no end-of-run block");
  bool exact_pct = false;
  p.flag(0, "exact-percentiles", &exact_pct,
         "keep every latency and delay for exact percentiles (memory grows with the load); by "
         "default past 1 M requests they come from a histogram within 0.39 %");
  p.positionals("LOAD DEVICE", &pos, 2, 2);
  p.examples(
      "  blkrr replay prod.load.gz /dev/sdX -o run.replay.gz --json run.json\n"
      "  blkrr replay prod.load.gz /dev/sdX --validate --fail-incomplete --json run.json\n"
      "  blkrr replay prod.blkrr /dev/sdX --order per-process --vmode verify\n"
      "  blkrr replay prod.load.gz /dev/sdX --start 10m --duration 60 --speedup 2\n"
      "  blkrr replay prod.load.gz /dev/sdX --timing fullspeed --engine threads --threads 64\n"
      "  blkrr replay prod.load.gz /dev/sdX --start-at $(date +%s -d '+30 sec')   # on every host");
  auto pr = p.parse(argc, argv);
  if (!pr) return pr.error();
  if (!*pr) return 0;

  o.load = pos[0];
  o.device = pos[1];
  if (exact_pct) Distribution::set_default_exact_limit(UINT64_MAX);
  if (from != "auto") {
    auto f = parse_input_format(from);
    if (!f) return Error("unknown input format '" + from + "'", 2);
    o.source.format = *f;
  }
  if (qd == 0 || qd > 65536) return Error("--queue-depth must be between 1 and 65536", 2);
  if (threads == 0 || threads > 4096) return Error("--threads must be between 1 and 4096", 2);
  o.queue_depth = static_cast<uint32_t>(qd);
  o.threads = static_cast<uint32_t>(threads);
  o.spin_ns = spin_us * 1000;
  o.adaptive_spin = !fixed_spin;
  if (rt_prio > 99) return Error("--realtime must be between 1 and 99", 2);
  o.rt_priority = static_cast<int>(rt_prio);
  o.direct = !no_direct;
  if (start_at != 0) o.start_at_unix = start_at;
  o.progress = !quiet && isatty(STDERR_FILENO);
  for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);

  if (fail_incomplete && !do_validate) return Error("--fail-incomplete needs --validate", 2);
  if (do_validate && (o.dry_run || o.fake_io))
    return Error("--validate needs real I/O: drop --dry-run / --fake-io", 2);

  // -o and --json must not name the load or the device, and must be
  // writable, before the replay starts (io_guard.h).
  BLKRR_TRY(check_outputs({{o.output, "-o"}, {o.json_path, "--json"}}, {o.load, o.device}));
  if (std::string in = input_file_at(o.device, {o.load}); !in.empty())
    return Error("the device " + o.device + " is the load " + in +
                     " (the same file); replaying would overwrite it",
                 2);

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
      auto v = validate::LiveValidator::start(device);
      if (!v) return v.error().context("--validate");
      validator = std::move(*v);
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
  SigintGuard guard;
  auto oc = replay::run_session(o, hooks, &g_stop);
  if (!oc) return oc.error();
  if (!quiet)
    for (const auto& l : oc->report) std::fprintf(stderr, "%s\n", l.c_str());
  if (!validation_text.empty()) std::fputs(validation_text.c_str(), stderr);
  if (oc->exit_status == 0 && fail_incomplete) return validation_status;
  return oc->exit_status;
}

}  // namespace blkrr::cli
