#include "replay/session.h"
#include "core/json_doc.h"
#include "core/io_guard.h"

#include <algorithm>

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
#include "replay/session_setup.h"
#include "replay/target.h"

namespace blkrr::replay {

Result<EngineKind> parse_engine(std::string_view s) {
  if (s == "uring" || s == "io_uring") return EngineKind::kUring;
  if (s == "threads") return EngineKind::kThreads;
  return Error(ErrorKind::kUsage, "unknown engine '" + std::string(s) + "' (use uring or threads)");
}

namespace {

using setup::compensate_for;
using setup::dependency_block;
using setup::device_map_for;
using setup::fake_reasons;
using setup::load_counter;
using setup::make_engine;
using setup::open_graph;
using setup::open_load;
using setup::open_output;
using setup::random_run_id;
using setup::replay_config;
using setup::settings_json;
using setup::summary_input;

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
