#include "replay/session_setup.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "core/clock.h"
#include "core/json_doc.h"
#include "core/units.h"
#include "core/version.h"

namespace blkrr::replay::setup {

namespace {

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

}  // namespace

uint64_t random_run_id() {
  uint64_t id = 0;
  if (getrandom(&id, sizeof id, 0) != sizeof id)
    id = mono_ns() ^ (static_cast<uint64_t>(getpid()) << 32);
  return id;
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

bool compensate_for(const SessionOptions& o, const std::optional<DependencyGraphReader>& graph) {
  return compensates(o.compensation, (graph ? graph->options() : o.schedule.deps).think);
}

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

std::vector<std::string> fake_reasons(const SessionOptions& o) {
  std::vector<std::string> fake;
  if (o.dry_run) fake.push_back("--dry-run: no I/O was done");
  if (o.fake_io) fake.push_back("--fake-io: operations were not read/write");
  if (!o.direct) fake.push_back("--no-direct: the page cache was in the way");
  return fake;
}

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

}  // namespace blkrr::replay::setup
