#include "converters/convert.h"
#include "converters/convert_datasets.h"
#include "converters/prefetch_source.h"

#include <sys/stat.h>

#include <cmath>
#include <ctime>
#include <algorithm>
#include <deque>

#include "core/units.h"
#include "converters/derive.h"
#include "converters/text_io.h"
#include "core/clock.h"
#include "core/io_guard.h"
#include "core/progress.h"
#include "core/version.h"

namespace blkrr {

namespace {

uint32_t fields_for(const SourceInfo& info) {
  switch (info.format) {
    case InputFormat::kNative:
      return kFieldLatency | kFieldProcess | kFieldDevice | kFieldFlags | kFieldDiskTime |
             kFieldCgroup | kFieldError | kFieldRecord;
    case InputFormat::kBlktrace:
    case InputFormat::kBlkparse:
      return kFieldProcess | kFieldDevice | kFieldFlags | kFieldError |
             (info.has_completion ? kFieldLatency : 0u);
    case InputFormat::kMsrCsv:
    case InputFormat::kSystor:
      return kFieldLatency | kFieldDevice;
    case InputFormat::kAlibaba:
    case InputFormat::kTencent:
    case InputFormat::kK5cloud:
      return kFieldDevice;
    case InputFormat::kLoad:
      return info.has_completion ? kFieldLatency : 0u;
    default:
      return 0;
  }
}

std::string utc_now() {
  char buf[64];
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

struct Item {
  uint64_t point;
  Request r;
};

// Output start times stay below 2^62 ns (146 years) after every shift.
constexpr int64_t kMaxOutputNs = INT64_C(1) << 62;

class Pipeline {
 public:
  // measure: a first pass for --scale that only finds the highest sector.
  Pipeline(const ConvertOptions& o, ConvertSummary& s, bool measure = false)
      : o_(o), s_(s), tr_(o.transform), measure_(measure), progress_(o.progress) {}

  // --wrap/--scale: positions are mapped onto the target (load_end_sector:
  // the highest end sector before mapping, which --scale needs).
  Status set_fit(const FitOptions& f, uint64_t load_end_sector) {
    MapOptions mo;
    mo.mode = f.mode;
    mo.device_sectors = f.target_bytes / 512;
    mo.load_end_sector = load_end_sector;
    auto m = DeviceMap::create(mo);
    if (!m) return m.error().context(f.mode == MapMode::kScale ? "--scale" : "--wrap");
    map_.emplace(*m);
    return {};
  }

  Status open_output(const SourceInfo& info) {
    format_ = o_.to                ? *o_.to
              : o_.split_by_volume ? OutputFormat::kLoad
                                   : output_format_for_path(o_.output);
    s_.output_format = std::string(output_format_name(format_));
    so_.format = format_;
    so_.gz_level = o_.gz_level;
    so_.fields = fields_for(info);
    // An iolog names the file fio writes to. The recorded device's name would
    // aim a lab host's fio at its own disk of that name: only --fio-file
    // names a real target, else the placeholder, which fio cannot open.
    so_.fio_file = o_.fio_file.empty() ? std::string(kFioPlaceholder) : o_.fio_file;
    if (format_ == OutputFormat::kFio && o_.fio_file.empty())
      s_.warnings.push_back("the fio iolog targets the placeholder " + so_.fio_file +
                            ", not a device; name the lab device with --fio-file PATH "
                            "(fio --read_iolog writes to it) or retarget with fio's "
                            "--replay_redirect");
    bool changed = o_.select.active() || o_.transform.active() || o_.timescale != 1.0 ||
                   o_.repeat > 1 || o_.until_ns || o_.derive;
    if (info.format == InputFormat::kLoad && !info.preamble.empty()) {
      so_.preamble = info.preamble;  // keep the original notice
    } else {
      so_.preamble = {std::string("blkreplay load converted by blkrr ") + version() + " from " +
                          std::string(input_format_name(info.format)) + " input " +
                          join(info.paths, " "),
                      "on " + utc_now(), ""};
    }
    if (changed && !o_.command_line.empty()) {
      so_.preamble.push_back("Derived from " + join(info.paths, " ") + " by: " + o_.command_line);
      so_.preamble.push_back("");
    }
    if (info.trace_header) {
      so_.header = *info.trace_header;
    } else {
      so_.header.tool_version = version();
      so_.header.settings["converted_from"] = std::string(input_format_name(info.format));
      so_.header.settings["source"] = join(info.paths, " ");
    }
    if (!o_.command_line.empty()) so_.header.command_line = o_.command_line;
    if (measure_) return {};
    if (o_.derive) {
      auto d = Deriver::create(o_.derive, o_.snippet_ns);
      if (!d) return d.error();
      deriver_.emplace(std::move(*d));
      return {};
    }
    if (o_.split_by_volume) return open_split();
    auto sink = open_sink(o_.output, so_);
    if (!sink) return sink.error();
    sink_ = std::move(*sink);
    s_.outputs = {o_.output};
    return {};
  }

  // One pass over the input; output times are moved by pass_shift.
  Status run_pass(RequestSource& src, int64_t pass_shift) {
    shift_ = pass_shift;
    pass_n_ = 0;
    first_pass_ = s_.passes == 0;
    const SourceInfo& info = src.info();
    bool reorder = !info.sorted_by_issue || o_.point == StartPoint::kComplete;
    s_.reordered = reorder;
    last_point_ = 0;
    // Reorder buffer sorted by start time. Inputs are nearly sorted (native
    // traces are in completion order), so inserts land at or near the back.
    std::deque<Item> buf;
    uint64_t max_seen = 0;
    Request r;
    while (!stop_ && !window_done_) {
      auto got = src.next(r);
      if (!got) return got.error();
      if (!*got) break;
      if ((++seen_ & 0xfff) == 0 && progress_.due()) show_progress();
      if (first_pass_) {
        ++s_.in;
        ++s_.in_by_op[r.op];
      }
      if (!o_.select.matches(r)) {
        if (first_pass_) ++s_.deselected;
        continue;
      }
      uint64_t point = r.issue_ns;
      if (o_.point == StartPoint::kComplete) {
        if (!r.completed()) {
          if (first_pass_) ++s_.no_completion;
          continue;
        }
        point = r.complete_ns;
      }
      if (!reorder) {
        BLKRR_TRY(stage2(r, point, true));
        continue;
      }
      max_seen = std::max(max_seen, point);
      if (buf.empty() || buf.back().point <= point) {
        buf.push_back({point, r});
      } else {
        auto at = std::upper_bound(buf.begin(), buf.end(), point,
                                   [](uint64_t p, const Item& it) { return p < it.point; });
        buf.insert(at, {point, r});
      }
      // Bounded by trace time (the window) and by count: equal or stalled
      // times must not hold the whole input in memory.
      if (buf.size() > o_.reorder_max_items) ++s_.reorder_full;
      while (!buf.empty() &&
             (buf.front().point + static_cast<uint64_t>(o_.reorder_window_ns) <= max_seen ||
              buf.size() > o_.reorder_max_items)) {
        BLKRR_TRY(stage2(buf.front().r, buf.front().point, false));
        buf.pop_front();
      }
    }
    while (!buf.empty() && !stop_) {
      BLKRR_TRY(stage2(buf.front().r, buf.front().point, false));
      buf.pop_front();
    }
    window_done_ = false;
    if (first_pass_) {
      s_.source_counters = src.counters();
      for (auto& w : source_warnings(s_.source_counters)) s_.warnings.push_back(std::move(w));
    }
    ++s_.passes;
    return {};
  }

  // Period of one pass for --repeat/--until: its span plus one mean gap.
  int64_t period() const {
    int64_t span = pass_last_ - pass_first_;
    int64_t gap = pass_n_ > 1 ? span / static_cast<int64_t>(pass_n_ - 1) : 1000000;
    return std::max<int64_t>(pass_last_ + std::max<int64_t>(gap, 1), 1000000);
  }
  uint64_t pass_count() const { return pass_n_; }
  bool stopped() const { return stop_; }

  Status finish() {
    progress_.finish();
    if (map_) {
      FitReport f;
      f.options = *o_.fit;
      f.load_end_sector = map_->counters().max_end_sector;
      f.wrapped = map_->counters().wrapped;
      f.clamped = map_->counters().clamped;
      f.too_large = map_->counters().too_large;
      s_.fit = f;
    }
    if (measure_) return {};
    if (deriver_) {
      auto paths = deriver_->finish(o_.output, so_, s_.source_counters);
      if (!paths) return paths.error();
      s_.outputs = *paths;
      s_.derived = o_.derive;
      s_.snippet_ns = o_.snippet_ns;
      s_.out_of_order += deriver_->late();
      return {};
    }
    BLKRR_TRY(sink_->close(s_.source_counters));
    if (split_) s_.split = split_->report();
    return {};
  }

 private:
  Status open_split() {
    auto sink = open_volume_split(o_, so_, format_);
    if (!sink) return sink.error();
    split_ = sink->get();
    sink_ = std::move(*sink);
    s_.outputs = {split_->report().dir + "/"};
    return {};
  }

  void show_progress() {
    const double s = static_cast<double>(mono_ns() - started_ns_) / 1e9;
    const char* what = measure_ ? "finding the extent for --scale" : "converting";
    progress_.show(strfmt("convert: %s: %.2f M requests read, %.2f M written, pass %llu, %.0f s",
                          what, static_cast<double>(seen_) / 1e6, static_cast<double>(s_.out) / 1e6,
                          static_cast<unsigned long long>(s_.passes) + 1, s));
  }

  Status stage2(const Request& r, uint64_t point, bool sorted) {
    if (point < last_point_) ++s_.out_of_order;
    last_point_ = std::max(last_point_, point);
    if (!origin_) origin_ = absolute_ ? point : 0;
    if (point >= *origin_ && point - *origin_ > static_cast<uint64_t>(kMaxOutputNs))
      return Error(ErrorKind::kBadInput,
                   "a request starts more than 146 years after the first one (" +
                       std::to_string(point) + " ns vs " + std::to_string(*origin_) +
                       " ns): the input's times are corrupt");
    int64_t rel = static_cast<int64_t>(point - *origin_);
    if (point < *origin_) rel = 0;  // earlier than the first request: counted above
    if (o_.select.window) {
      if (rel < o_.select.window_start_ns) {
        if (first_pass_) ++s_.outside_window;
        return {};
      }
      const int64_t end = o_.select.window_start_ns + o_.select.window_len_ns;
      if (rel >= end) {
        if (first_pass_) ++s_.outside_window;
        // A sorted format may still be out of order (a hand-edited load):
        // read on for the reorder window before nothing later can be inside.
        if (sorted && rel - end >= o_.reorder_window_ns) window_done_ = s_.input_cut = true;
        return {};
      }
      rel -= o_.select.window_start_ns;
    }
    q_ = r;
    tr_.apply(q_);
    int64_t t = o_.timescale == 1.0
                    ? rel
                    : static_cast<int64_t>(std::llround(static_cast<double>(rel) * o_.timescale));
    t += shift_;
    if (t < 0 || t > kMaxOutputNs)
      return Error(
          ErrorKind::kUsage,
          "an output start time leaves the range 0 .. 2^62 ns (--timescale/--repeat too large)");
    if (o_.until_ns && t >= *o_.until_ns) {
      // As for --window: an unsorted input may still hold earlier requests.
      if (!sorted || t - *o_.until_ns >= o_.reorder_window_ns) stop_ = s_.input_cut = true;
      return {};
    }
    if (pass_n_ == 0) pass_first_ = t;
    pass_last_ = t;
    ++pass_n_;
    if (!format_expresses(format_, q_.op)) {
      ++s_.not_expressible[q_.op];
      return {};
    }
    if (map_ && q_.bytes > 0) {
      MappedExtent e;
      auto m = map_->map(q_.sector, (q_.bytes + 511u) / 512u, e, "");
      if (!m) return m.error();
      if (*m == DeviceMap::Outcome::kSkipped) return {};  // longer than the target: counted
      q_.sector = e.sector;
    }
    int64_t shift = static_cast<int64_t>(*origin_) + t - static_cast<int64_t>(point);
    if (measure_) {
      // --scale's first pass: only the extent below counts.
    } else if (deriver_) {
      BLKRR_TRY(deriver_->add(q_, t, shift));
    } else {
      OutRecord rec{&q_, t, shift};
      BLKRR_TRY(sink_->write(rec));
    }
    s_.first_ns = s_.out == 0 ? t : std::min(s_.first_ns, t);
    s_.last_ns = std::max(s_.last_ns, t);
    ++s_.out;
    ++s_.out_by_op[q_.op];
    s_.max_sector = std::max<uint64_t>(s_.max_sector, q_.sector + (q_.bytes + 511u) / 512u);
    return {};
  }

 public:
  bool absolute_ = false;

 private:
  const ConvertOptions& o_;
  ConvertSummary& s_;
  Transform tr_;
  OutputFormat format_ = OutputFormat::kLoad;
  SinkOptions so_;
  std::unique_ptr<RequestSink> sink_;
  SplitSink* split_ = nullptr;  // sink_ when --split-by volume
  std::optional<Deriver> deriver_;
  std::optional<DeviceMap> map_;
  std::optional<uint64_t> origin_;
  Request q_;
  int64_t shift_ = 0, pass_first_ = 0, pass_last_ = 0;
  uint64_t pass_n_ = 0, last_point_ = 0;
  bool first_pass_ = true, stop_ = false, window_done_ = false;
  bool measure_ = false;
  ProgressLine progress_;
  uint64_t seen_ = 0, started_ns_ = mono_ns();
};

// The inputs, parsed (and decompressed) ahead on a thread of their own while
// this one filters, formats and writes.
Result<std::unique_ptr<RequestSource>> open_prefetched(const ConvertOptions& o) {
  auto src = open_source(o.inputs, o.source);
  if (!src) return src.error();
  return prefetch_source(std::move(*src));
}

// Every pass of --repeat/--until through the pipeline, then its finish.
Status run_passes(Pipeline& p, const ConvertOptions& o, std::unique_ptr<RequestSource> src) {
  p.absolute_ = src->info().absolute_time;
  BLKRR_TRY(p.open_output(src->info()));
  BLKRR_TRY(p.run_pass(*src, 0));
  int64_t period = p.period();
  bool any = p.pass_count() > 0;
  for (uint64_t pass = 1; any && !p.stopped() && (pass < o.repeat || o.until_ns); ++pass) {
    auto next = open_prefetched(o);  // stream again: constant memory
    if (!next) return next.error();
    BLKRR_TRY(p.run_pass(**next, static_cast<int64_t>(pass) * period));
    if (p.pass_count() == 0) break;
  }
  return p.finish();
}

}  // namespace

Result<ConvertSummary> run_convert(const ConvertOptions& given) {
  ConvertOptions o = given;
  BLKRR_TRY(check_split_options(o));
  if (o.output.empty()) return Error(ErrorKind::kUsage, "no output given (-o FILE)");
  if (o.repeat == 0) return Error(ErrorKind::kUsage, "--repeat must be at least 1");
  if (!(o.timescale > 0)) return Error(ErrorKind::kUsage, "--timescale must be positive");
  if (o.derive && o.output == "-")
    return Error(ErrorKind::kUsage, "--derive writes N files; name them with -o");
  // Every output against every input, and writable, before any work.
  std::vector<OutputCheck> outs;
  if (o.derive) {
    for (uint32_t i = 0; i < std::min<uint32_t>(o.derive, 10000); ++i)
      outs.push_back({derived_path(o.output, i), "--derive"});
  } else if (!o.split_by_volume) {  // the split checks its files (split_sink.h)
    outs.push_back({o.output, "-o"});
  }
  BLKRR_TRY(check_outputs(outs, o.inputs, o.existing));
  ConvertSummary s;
  s.inputs = o.inputs;
  auto src = open_prefetched(o);
  if (!src) return src.error();
  s.input_format = std::string(input_format_name((*src)->info().format));
  BLKRR_TRY(take_dataset_info(o, (*src)->info(), s));
  // Selections on fields the input does not have would silently drop everything.
  uint32_t have = fields_for((*src)->info());
  const std::string fmt = s.input_format;
  if ((!o.select.pids.empty() || !o.select.comms.empty()) && !(have & kFieldProcess))
    return Error(ErrorKind::kUsage,
                 "--pid/--comm: a " + fmt + " input has no process ids or names");
  if (!o.select.cgroups.empty() && (*src)->info().format != InputFormat::kNative)
    return Error(ErrorKind::kUsage,
                 "--cgroup: only native traces carry cgroup ids, not a " + fmt + " input");
  if (o.point == StartPoint::kComplete && !(*src)->info().has_completion)
    return Error(ErrorKind::kUsage,
                 "--point complete: a " + fmt + " input has no completion times");
  Pipeline p(o, s);
  if (o.fit) {
    uint64_t end = 0;
    if (o.fit->mode == MapMode::kScale) {  // a first pass finds the load's extent
      ConvertSummary m;
      Pipeline measure(o, m, true);
      BLKRR_TRY(run_passes(measure, o, std::move(*src)));
      end = m.max_sector;
      if (end == 0)
        return Error(ErrorKind::kUsage, "--scale: the output has no request with a position");
      src = open_prefetched(o);
      if (!src) return src.error();
    }
    BLKRR_TRY(p.set_fit(*o.fit, end));
  }
  BLKRR_TRY(run_passes(p, o, std::move(*src)));
  return s;
}

}  // namespace blkrr
