#include "replay/session.h"
#include "core/json_doc.h"
#include "core/io_guard.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

#include "core/clock.h"
#include "core/units.h"
#include "core/version.h"
#include "replay/buffers.h"
#include "replay/replay_clock.h"
#include "replay/engine.h"
#include "replay/process_guard.h"
#include "replay/planner.h"
#include "replay/read_ahead.h"
#include "replay/record_bus.h"
#include "replay/replayer.h"
#include "replay/results.h"
#include "replay/session_progress.h"
#include "replay/target.h"

namespace blkrr::replay {

Result<EngineKind> parse_engine(std::string_view s) {
  if (s == "uring" || s == "io_uring") return EngineKind::kUring;
  if (s == "threads") return EngineKind::kThreads;
  return Error(ErrorKind::kUsage, "unknown engine '" + std::string(s) + "' (use uring or threads)");
}

namespace {

uint64_t random_run_id() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, 0) != sizeof id)
    id = mono_ns() ^ (static_cast<uint64_t>(getpid()) << 32);
  return id;
}

// Inputs that can be read a second time (not standard input or a pipe).
bool regular_files(const std::vector<std::string>& paths) {
  struct stat st;
  return std::all_of(paths.begin(), paths.end(), [&st](const std::string& p) {
    return p != "-" && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  });
}

std::vector<std::string> load_inputs(const SessionOptions& o) {
  std::vector<std::string> in = {o.load};
  in.insert(in.end(), o.more_pieces.begin(), o.more_pieces.end());
  return in;
}

Result<uint64_t> load_end_sector(const SessionOptions& o) {
  auto src = open_source(load_inputs(o), o.source);
  if (!src) return src.error();
  uint64_t end = 0;
  Request q;
  for (;;) {
    auto r = (*src)->next(q);
    if (!r) return r.error();
    if (!*r) break;
    end = std::max<uint64_t>(end, q.sector + (q.bytes + 511) / 512);
  }
  return end;
}

nlohmann::json settings_json(const SessionOptions& o, uint64_t run_id, std::string_view engine) {
  return {
      {"timing", timing_name(o.schedule.mode)},
      {"speedup", o.schedule.speedup},
      {"start_s", static_cast<double>(o.schedule.window_start_ns) / 1e9},
      {"duration_s", static_cast<double>(o.schedule.window_duration_ns) / 1e9},
      {"start_at", o.start_at_unix ? nlohmann::json(*o.start_at_unix) : nlohmann::json()},
      {"order", order_name(o.order)},
      {"cmode", cmode_name(o.cmode)},
      {"strong", o.strong},
      {"vmode", vmode_name(o.vmode)},
      {"engine", engine},
      {"threads", o.engine == EngineKind::kThreads ? nlohmann::json(o.threads) : nlohmann::json()},
      {"queue_depth", o.queue_depth},
      {"mapping", o.scale ? "scale" : "wrap"},
      {"align", align_name(o.align)},
      {"dry_run", o.dry_run},
      {"fake_io", o.fake_io},
      {"direct", o.direct},
      {"force", o.force},
      {"spin_ns", o.spin_ns},
      {"adaptive_spin", o.adaptive_spin && o.rt_priority == 0},
      {"reap_spin_ns", o.reap_spin_ns},
      {"run_id", id_string(run_id)},
      // The replayer's process: `blkrr validate` names its own probe of the
      // device (safety checks) by it.
      {"pid", static_cast<uint32_t>(getpid())},
      {"command_line", o.command_line}};
}

// The load, checked against the options that depend on its format.
Result<std::unique_ptr<RequestSource>> open_load(const SessionOptions& o) {
  BLKRR_TRY(validate(o.schedule));
  if (o.queue_depth == 0) return Error(ErrorKind::kUsage, "--queue-depth must be at least 1");
  auto src = open_source(load_inputs(o), o.source);
  if (!src) return src.error().context("opening load " + o.load);
  const InputFormat format = (*src)->info().format;
  if (o.schedule.mode == TimingMode::kDependency && !(*src)->info().has_completion)
    return Error(ErrorKind::kUsage,
                 "--timing dependency needs completion times to infer which request waited for "
                 "which; " +
                     o.load + " is a " + std::string(input_format_name(format)) +
                     " input, which carries no completion times and so no dependencies (use a "
                     "native trace, blktrace/blkparse with issue events, or MSR; or --timing "
                     "timestamp)");
  if (o.order == OrderMode::kPerProcess && format != InputFormat::kNative)
    return Error(ErrorKind::kUsage,
                 "--order per-process needs process ids, which only a native trace (.blkrr) has; " +
                     o.load + " is a " + std::string(input_format_name(format)) + " input");
  return src;
}

// --dependencies FILE: the stored graph, for a dependency replay of one pass.
Result<std::optional<DependencyGraphReader>> open_graph(const SessionOptions& o) {
  if (o.dependency_graph.empty()) return std::optional<DependencyGraphReader>();
  if (o.schedule.mode != TimingMode::kDependency)
    return Error(ErrorKind::kUsage, "--dependencies " + o.dependency_graph +
                                        " gives the parents of --timing dependency; add it");
  if (o.source.repeat > 1)
    return Error(ErrorKind::kUsage, "--dependencies describes one pass of the load, not --repeat " +
                                        std::to_string(o.source.repeat) +
                                        " (leave out --dependencies to infer "
                                        "the graph of every pass)");
  auto g = DependencyGraphReader::open(o.dependency_graph);
  if (!g) return g.error();
  return std::optional<DependencyGraphReader>(std::move(*g));
}

// Whether think times lose the reaction time: by the rule they come from, the
// stored graph's or the inference's.
bool compensate_for(const SessionOptions& o, const std::optional<DependencyGraphReader>& graph) {
  return compensates(o.compensation, (graph ? graph->options() : o.schedule.deps).think);
}

// The summary's dependency block: the windows of the stored graph or of the
// inference, and the graph's file.
nlohmann::json dependency_block(const SessionOptions& o,
                                const std::optional<DependencyGraphReader>& graph,
                                const ReplayResult& res, const Planner& planner,
                                const ReplayConfig& cfg) {
  nlohmann::json j =
      dependency_summary(graph ? graph->options() : o.schedule.deps, cfg.compensate_reaction, res,
                         planner.dependency_counters());
  j["graph"] = graph ? nlohmann::json(o.dependency_graph) : nlohmann::json();
  return j;
}

// How the load's positions land on the target (--scale or wrap, --align).
Result<DeviceMap> device_map_for(const SessionOptions& o, const Target& tgt) {
  MapOptions mo;
  mo.mode = o.scale ? MapMode::kScale : MapMode::kWrap;
  mo.align = o.align;
  mo.device_sectors = tgt.size_bytes / 512;
  mo.logical_block = tgt.logical_block;
  if (o.scale) {
    auto end = load_end_sector(o);
    if (!end) return end.error().context("reading " + o.load + " for --scale");
    mo.load_end_sector = *end;
  }
  if (!o.scale)  // a load larger than the device: say so at once, not only in the summary
    mo.on_first_wrap = [device = o.device, size = tgt.size_bytes](uint64_t sector,
                                                                  uint32_t sectors) {
      std::fprintf(stderr,
                   "blkrr replay: warning: a request of the load reaches %s (sector %" PRIu64
                   "), past the end of %s (%s): requests past the end wrap around to its "
                   "start, so the replay does not keep the load's locality; use a device of "
                   "the load's size or --scale (the summary gives the wraparound factor)\n",
                   fmt_bytes(static_cast<double>((sector + sectors) * 512)).c_str(), sector,
                   device.c_str(), fmt_bytes(static_cast<double>(size)).c_str());
    };
  auto dm = DeviceMap::create(mo);
  if (!dm) return dm.error().context(o.device);
  return dm;
}

Result<std::unique_ptr<Engine>> make_engine(const SessionOptions& o, Clock& clock,
                                            const Target& tgt, BufferPool& pool) {
  if (o.dry_run) return make_dry_engine(clock);
  EngineOptions eo;
  eo.fd = tgt.fd.get();
  eo.queue_depth = o.queue_depth;
  eo.threads = o.threads;
  eo.fake_io = o.fake_io;
  eo.fixed_buffers = pool.fixed_buffers();
  return o.engine == EngineKind::kUring ? make_uring_engine(clock, eo)
                                        : make_threads_engine(clock, eo);
}

// Why the results are not those of a real replay (empty: they are).
std::vector<std::string> fake_reasons(const SessionOptions& o) {
  std::vector<std::string> fake;
  if (o.dry_run) fake.push_back("--dry-run: no I/O was done");
  if (o.fake_io) fake.push_back("--fake-io: operations were not read/write");
  if (!o.direct) fake.push_back("--no-direct: the page cache was in the way");
  return fake;
}

// The result file (-o), opened with its header lines: what ran where, how.
Result<std::optional<OutputSink>> open_output(const SessionOptions& o, const Target& tgt,
                                              const std::vector<std::string>& fake,
                                              const nlohmann::json& settings) {
  if (o.output.empty()) return std::optional<OutputSink>();
  std::vector<std::string> preamble = {std::string("blkrr ") + version() + " replay of " + o.load +
                                       " on " + tgt.description};
  if (!fake.empty()) preamble.push_back("FAKE RESULTS: " + fake.front());
  std::vector<std::string> info_lines = {"INFO: device " + tgt.description};
  // Which device and when, so that `validate` can tell a trace of another
  // device or time from a replay that lost requests (validate/pairing.h).
  struct stat st {};
  if (!tgt.is_file && ::fstat(tgt.fd.get(), &st) == 0 && S_ISBLK(st.st_mode))
    info_lines.push_back("INFO: device_number " +
                         dev_to_string(make_dev(major(st.st_rdev), minor(st.st_rdev))));
  info_lines.push_back("INFO: opened_unix_ns " + std::to_string(realtime_ns()));
  info_lines.push_back("INFO: command " + o.command_line);
  info_lines.push_back("INFO: settings " + settings.dump());
  struct utsname un {};
  if (::uname(&un) == 0)  // for reports: where the replay ran
    info_lines.push_back(std::string("INFO: host ") + un.nodename + " kernel " + un.release);
  for (const auto& w : tgt.warnings) info_lines.push_back("WARN: " + w);
  auto s = OutputSink::create(o.output, preamble, info_lines);
  if (!s) return s.error();
  return std::optional<OutputSink>(std::move(*s));
}

// An open-ended replay's progress line learns the load's total from a count
// beside the replay (none without a progress line, or for a load that
// cannot be read twice).
std::unique_ptr<LoadCounter> load_counter(const SessionOptions& o, const Schedule& sched) {
  if (!o.progress || o.schedule.window_start_ns != 0 || o.schedule.window_duration_ns != 0 ||
      !regular_files(load_inputs(o)))
    return nullptr;
  return std::make_unique<LoadCounter>([&o] { return open_source(load_inputs(o), o.source); },
                                       sched);
}

ReplayConfig replay_config(const SessionOptions& o, const Target& tgt, uint64_t run_id,
                           uint64_t window_ns, const LoadCounter* total) {
  ReplayConfig cfg;
  cfg.order = o.order;
  cfg.cmode = o.cmode;
  cfg.strong = o.strong;
  cfg.vmode = o.vmode;
  cfg.run_id = run_id;
  cfg.queue_depth = o.queue_depth;
  cfg.logical_block = tgt.logical_block;
  cfg.spin_ns = o.spin_ns;
  // Not under --realtime: a SCHED_FIFO thread that spins through its gaps
  // never sleeps, and the kernel then stalls it for up to 50 ms a second
  // to let other work run (RT throttling / the fair server).
  cfg.adaptive_spin = o.adaptive_spin && o.rt_priority == 0;
  cfg.reap_spin_ns = o.reap_spin_ns;
  cfg.dependency = o.schedule.mode == TimingMode::kDependency;
  cfg.stop_on_error = o.stop_on_error;
  if (!tgt.is_file) cfg.device_present = [path = tgt.path] { return device_still_present(path); };
  if (o.progress)
    cfg.on_progress = [window_ns, total, last_completed = uint64_t{0},
                       last_elapsed = uint64_t{0}](const Progress& p) mutable {
      print_progress(p, window_ns, total ? total->size() : std::nullopt, last_completed,
                     last_elapsed);
    };
  return cfg;
}

// What build_summary needs to know before the run: options, device, load.
SummaryInput summary_input(const SessionOptions& o, const nlohmann::json& settings,
                           const Target& tgt, InputFormat format,
                           const std::vector<std::string>& fake) {
  SummaryInput si;
  si.settings = settings;
  si.device = {{"path", tgt.path},
               {"description", tgt.description},
               {"size_bytes", tgt.size_bytes},
               {"logical_block", tgt.logical_block},
               {"regular_file", tgt.is_file}};
  si.load_path = o.load;
  si.load_format = std::string(input_format_name(format));
  si.fake_reasons = fake;
  si.warnings = tgt.warnings;
  return si;
}

// What the replay loop returns and how the record bus between it and the
// sinks fared (bounded memory, spilled to disk beyond).
struct RunOutput {
  Result<ReplayResult> result = Error(ErrorKind::kInternal, "not run");
  nlohmann::json results_queue;
};

RunOutput run_replay(const ReplayConfig& cfg, Clock& clock, Engine& engine, BufferPool& pool,
                     PlannedSource& reader, const std::vector<RecordSink*>& sinks,
                     const std::atomic<bool>* stop) {
  RunOutput run;
  RecordBus bus(true);
  for (RecordSink* s : sinks) bus.add_sink(s);
  Replayer rp(cfg, clock, engine, pool, reader, bus);
  run.result = rp.run(stop);
  bus.finish();
  run.results_queue = {{"spilled_batches", bus.spilled_batches()},
                       {"spill_peak_mb", static_cast<double>(bus.spill_peak_bytes()) / 1e6},
                       {"replay_thread_waits", bus.waits()},
                       {"replay_thread_waited_s", static_cast<double>(bus.waited_ns()) / 1e9},
                       {"lost_records", bus.lost()}};
  return run;
}

// The summary's parts that build_summary does not know: the threads' CPU,
// the results queue, the timer, the start instant.
void add_run_details(nlohmann::json& summary, const ReplayResult& res, const ReadAhead& reader,
                     const nlohmann::json& results_queue, Clock& clock) {
  summary["start_instant_monotonic_ns"] = res.start_instant_ns;
  const double started = static_cast<double>(std::max<uint64_t>(res.completed, 1));
  summary["cpu"] = {
      {"replay_thread_s", static_cast<double>(res.thread_cpu_ns) / 1e9},
      {"replay_thread_ns_per_request", static_cast<double>(res.thread_cpu_ns) / started},
      {"reader_thread_s", static_cast<double>(reader.reader_cpu_ns()) / 1e9},
      {"reader_thread_ns_per_request", static_cast<double>(reader.reader_cpu_ns()) / started},
      {"replay_thread_waited_for_reader", reader.consumer_waits()}};
  summary["results_queue"] = results_queue;
  if (results_queue["lost_records"].get<uint64_t>() > 0)
    summary["warnings"].push_back(results_queue["lost_records"].dump() +
                                  " results could not be read back from the spill file "
                                  "(I/O error in $TMPDIR or /var/tmp): missing from -o");
  summary["timing"] = {{"sleeps", res.sleeps},
                       {"wake_late_max_ns", res.wake_late_max_ns},
                       {"reap_spins", res.reap_spins},
                       {"reap_spin_hits", res.reap_spin_hits},
                       {"spin_max_ns", res.spin_max_ns}};
  summary["start_unix"] =
      static_cast<double>(clock.realtime_ns() - (clock.now_ns() - res.start_instant_ns)) / 1e9;
}

// The result file's end: verify errors, the summary line, the statistics.
Status finish_output(OutputSink& out, const ReplayResult& res, const nlohmann::json& summary,
                     const std::vector<std::string>& tail) {
  std::vector<std::string> lines;
  for (const auto& e : res.verify_error_list) lines.push_back(e.to_line());
  if (res.verify_errors > res.verify_error_list.size())
    lines.push_back(
        "VERIFY ERROR: " + std::to_string(res.verify_errors - res.verify_error_list.size()) +
        " more not listed");
  lines.push_back("SUMMARY: " + summary.dump());
  lines.insert(lines.end(), tail.begin(), tail.end());
  return out.finish(lines);
}

Status write_json_summary(const std::string& path, const nlohmann::json& summary) {
  auto st = write_file_atomic(
      path, summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (!st) return st.error().context("the --json summary");
  return {};
}

// The end-of-run block for stderr.
std::vector<std::string> end_report(const SessionOptions& o, const Target& tgt,
                                    const std::vector<std::string>& fake, const ReplayResult& res,
                                    const std::vector<std::string>& tail) {
  std::vector<std::string> report;
  report.push_back("blkrr replay: " + o.load + " on " + tgt.description);
  for (const auto& f : fake) report.push_back("FAKE RESULTS: " + f);
  for (const auto& w : tgt.warnings) report.push_back("WARN: " + w);
  const size_t shown = std::min<size_t>(res.verify_error_list.size(), 20);
  for (size_t i = 0; i < shown; ++i) report.push_back(res.verify_error_list[i].to_line());
  if (!res.first_error.empty()) report.push_back("first I/O error: " + res.first_error);
  if (!res.failures.stop_reason.empty())
    report.push_back("stopped early: " + res.failures.stop_reason);
  report.insert(report.end(), tail.begin(), tail.end());
  return report;
}

int exit_status(const ReplayResult& res) {
  if (res.interrupted) return 130;
  if (res.errors > 0 || res.verify_errors > 0 || res.verify_read_errors > 0) return 1;
  return 0;
}

// --start-at: the instant on the replay clock of that wall-clock time.
Status set_start_at(const SessionOptions& o, Clock& clock, ReplayConfig& cfg) {
  if (!o.start_at_unix) return {};
  auto at =
      start_instant_for_unix(*o.start_at_unix, clock.now_ns(), clock.realtime_ns(), 1'000'000);
  if (!at) return at.error();
  cfg.start_instant_ns = *at;
  return {};
}

// The device went away during the run.
std::string device_gone_message(const SessionOptions& o, const ReplayResult& res) {
  return "blkrr replay: " + o.device + ": " + res.failures.stop_reason +
         "; what completed before is in the results" +
         (o.output.empty() ? std::string() : " (" + o.output + ")");
}

}  // namespace

Result<SessionOutcome> run_session(const SessionOptions& requested, SessionHooks& hooks,
                                   const std::atomic<bool>* stop) {
  SessionOptions o = requested;
  auto src = open_load(o);
  if (!src) return src.error();
  auto graph = open_graph(o);
  if (!graph) return graph.error();
  auto tgt = open_target(o.device, {o.allow_file, o.force, o.direct, o.dry_run});
  if (!tgt) return tgt.error();
  o.queue_depth = fit_queue_depth(o.queue_depth, *tgt);
  auto dm = device_map_for(o, *tgt);
  if (!dm) return dm.error();
  Schedule sched(o.schedule);
  Planner planner(**src, sched, *dm);
  if (*graph) planner.use_graph(**graph);
  // The load is parsed (and decompressed) ahead on its own thread; the
  // replay thread only schedules and submits.
  ReadAhead reader(planner);

  auto pool = BufferPool::create(o.vmode != VerifyMode::kNone);
  if (!pool) return pool.error();
  // Before the engine and the record bus exist, so that their threads inherit it.
  RealtimeGuard rt;
  BLKRR_TRY(rt.enable(o.rt_priority));
  MonotonicClock clock;
  auto made = make_engine(o, clock, *tgt, *pool);
  if (!made) return made.error();
  std::unique_ptr<Engine> engine = std::move(*made);

  const uint64_t run_id = random_run_id();
  const std::vector<std::string> fake = fake_reasons(o);
  const nlohmann::json settings = settings_json(o, run_id, engine->name());
  StatsSink stats;
  auto out = open_output(o, *tgt, fake, settings);
  if (!out) return out.error();
  std::vector<RecordSink*> sinks = {&stats};
  if (*out) sinks.push_back(&**out);
  sinks.insert(sinks.end(), hooks.sinks.begin(), hooks.sinks.end());

  const std::unique_ptr<LoadCounter> total = load_counter(o, sched);
  ReplayConfig cfg = replay_config(o, *tgt, run_id, sched.window_span_ns(), total.get());
  cfg.compensate_reaction = compensate_for(o, *graph);
  if (hooks.before_start) BLKRR_TRY(hooks.before_start(o.device));
  BLKRR_TRY(set_start_at(o, clock, cfg));

  reader.prefill();  // start with requests in hand
  // With --realtime, no page fault on memory already in use (rings, slots,
  // buffers, queued requests) may delay a submission.
  MemoryLock mlock;
  if (o.rt_priority > 0) mlock.lock();
  RunOutput run = run_replay(cfg, clock, *engine, *pool, reader, sinks, stop);
  reader.stop();  // an early end (Ctrl-C, error) leaves it waiting for room
  const PlanCounters plan = reader.taken_counters(planner.counters());
  if (o.progress) print_final_progress(run.result);
  if (!run.result) return run.result.error();
  engine.reset();
  const ReplayResult& res = *run.result;

  SummaryInput si = summary_input(o, settings, *tgt, (*src)->info().format, fake);
  si.plan = &plan;
  si.map = &dm->counters();
  si.wraparound_factor = dm->wraparound_factor();
  si.result = &res;
  si.stats = &stats;
  SessionOutcome oc;
  oc.summary = build_summary(si);
  oc.input_warnings = (*src)->warnings();
  for (const auto& w : oc.input_warnings) oc.summary["warnings"].push_back(w);
  oc.summary["schema"] = schema_tag(kSchemaReplay);
  add_run_details(oc.summary, res, reader, run.results_queue, clock);
  if (cfg.dependency) oc.summary["dependency"] = dependency_block(o, *graph, res, planner, cfg);
  if (hooks.after_end) BLKRR_TRY(hooks.after_end(oc.summary, res.start_instant_ns));
  const std::vector<std::string> tail = summary_lines(oc.summary);
  if (*out) BLKRR_TRY(finish_output(**out, res, oc.summary, tail));
  if (!o.json_path.empty()) BLKRR_TRY(write_json_summary(o.json_path, oc.summary));
  oc.report = end_report(o, *tgt, fake, res, tail);
  if (cfg.dependency) oc.report.push_back(dependency_line(oc.summary["dependency"]));
  oc.exit_status = exit_status(res);
  if (res.failures.device_gone) oc.device_gone = device_gone_message(o, res);
  return oc;
}

}  // namespace blkrr::replay
