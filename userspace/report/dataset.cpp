#include "report/dataset.h"
#include "core/io_guard.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "converters/load_format.h"
#include "converters/source.h"
#include "converters/text_io.h"
#include "core/args.h"
#include "core/stats.h"
#include "core/trace_format.h"
#include "core/rotation.h"
#include "report/provenance.h"

namespace blkrr::report {

const char* kind_name(DataKind k) {
  switch (k) {
    case DataKind::kLoad:
      return "load";
    case DataKind::kTrace:
      return "trace";
    case DataKind::kReplay:
      return "replay";
  }
  return "load";
}

const char* layer_name(LatencyLayer l) {
  switch (l) {
    case LatencyLayer::kBlock:
      return "block layer";
    case LatencyLayer::kUserSpace:
      return "user space";
    case LatencyLayer::kLoad:
      return "as stored in the load";
    case LatencyLayer::kNone:
      break;
  }
  return "none";
}

LatencyLayer Dataset::latency_layer() const {
  if (!has_latency()) return LatencyLayer::kNone;
  switch (kind) {
    case DataKind::kTrace:
      return LatencyLayer::kBlock;
    case DataKind::kReplay:
      return LatencyLayer::kUserSpace;
    case DataKind::kLoad:
      break;
  }
  return LatencyLayer::kLoad;
}

bool Dataset::has_delay() const {
  return kind == DataKind::kReplay;
}

Result<const SampleStore*> Dataset::sorted(SortKey key) const {
  const SampleBounds& b = samples.bounds();
  if ((key == SortKey::kSetPoint && b.t_sorted) || (key == SortKey::kIssue && b.issue_sorted) ||
      (key == SortKey::kCompletion && b.complete_sorted))
    return &samples;
  auto it = views_.find(key);
  if (it == views_.end()) {
    auto s = sorted_copy(samples, key);
    if (!s) return s.error().context("sorting the requests of " + path);
    it = views_.emplace(key, std::move(*s)).first;
  }
  return &it->second;
}

std::string label_from_path(const std::string& path) {
  std::string base =
      path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (const char* suf : {".gz", ".load", ".replay", ".blkrr", ".csv", ".txt", ".log"}) {
    size_t n = std::strlen(suf);
    if (base.size() > n && base.compare(base.size() - n, n, suf) == 0) base.resize(base.size() - n);
  }
  for (const char* suf : {".load", ".replay"}) {
    size_t n = std::strlen(suf);
    if (base.size() > n && base.compare(base.size() - n, n, suf) == 0) base.resize(base.size() - n);
  }
  std::string out;
  for (char c : base)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return out.empty() ? "input" : out;
}

namespace {

bool starts_with(const std::string& s, std::string_view p) {
  return s.compare(0, p.size(), p) == 0;
}

// The JSON object at the end of "SUMMARY: {...}" / "INFO: settings {...}".
nlohmann::json json_tail(const std::string& line) {
  size_t b = line.find('{');
  if (b == std::string::npos) return nlohmann::json();
  if (json_nesting_depth(std::string_view(line).substr(b)) > kMaxJsonDepth) return nlohmann::json();
  auto j = nlohmann::json::parse(line.begin() + static_cast<std::ptrdiff_t>(b), line.end(), nullptr,
                                 false);
  return j.is_object() ? j : nlohmann::json();
}

// Typed lookups that never throw on unexpected types.
bool jbool(const nlohmann::json& j, const char* key, bool def) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : def;
}
double jnum(const nlohmann::json& j, const char* key, double def) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : def;
}

// The block-layer latency that --validate measured, when it did.
std::optional<BlockLatency> block_latency_of(const nlohmann::json& validation) {
  auto l = validation.find("latency_ns");
  if (l == validation.end() || !l->is_object()) return std::nullopt;
  auto b = l->find("block");
  if (b == l->end() || !b->is_object() || jnum(*b, "count", 0) < 1) return std::nullopt;
  BlockLatency x;
  x.count = static_cast<uint64_t>(jnum(*b, "count", 0));
  x.p50 = jnum(*b, "p50", 0);
  x.p90 = jnum(*b, "p90", 0);
  x.p99 = jnum(*b, "p99", 0);
  x.p999 = jnum(*b, "p999", 0);
  x.mean = jnum(*b, "mean", 0);
  x.max = jnum(*b, "max", 0);
  return x;
}

// blkrr replay's SUMMARY: interrupted or stopped early, the demanded
// requests, the validation's verdict and block-layer latency.
void replay_summary_markers(const nlohmann::json& j, Dataset& d) {
  if (jbool(j, "interrupted", false)) d.interrupted = true;
  auto q = j.find("requests");
  if (q != j.end() && q->is_object()) {
    if (jnum(*q, "planned", -1) >= 0) d.planned = static_cast<uint64_t>(jnum(*q, "planned", 0));
    auto f = q->find("failures");
    if (f != q->end() && f->is_object()) {
      auto r = f->find("stop_reason");
      if (r != f->end() && r->is_string()) d.stop_reason = r->get<std::string>();
    }
  }
  auto a = j.find("achieved");
  if (a != j.end() && a->is_object() && jnum(*a, "span_s", 0) > 0)
    d.achieved_span_s = jnum(*a, "span_s", 0);
  auto v = j.find("validation");
  if (v == j.end() || !v->is_object()) return;
  auto verdict = v->find("verdict");
  if (verdict != v->end() && verdict->is_string()) {  // "complete": COMPLETE, as validate prints it
    d.validation_verdict = verdict->get<std::string>();
    for (char& c : d.validation_verdict)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  d.block_latency = block_latency_of(*v);
}

// A replay's timing from its settings: the mode, then what changes it.
std::string timing_of(const nlohmann::json& settings) {
  auto str = [&settings](const char* key) {
    auto it = settings.find(key);
    return it != settings.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string t = str("timing");
  if (t.empty()) return t;
  const std::string order = str("order");
  if (!order.empty() && order != "none") t += " --order " + order;
  const double speedup = jnum(settings, "speedup", 1.0);
  if (speedup != 1.0) t += " --speedup " + fmt_significant(speedup, 6);
  return t;
}

}  // namespace

void apply_info_markers(Dataset& d) {
  std::optional<double> wrap_text, wrap_json;
  for (const auto& l : d.info) {
    if (starts_with(l, "SUMMARY: {")) {  // blkrr replay's summary
      auto j = json_tail(l);
      if (j.is_object()) {
        replay_summary_markers(j, d);
        if (jbool(j, "fake", false)) d.fake = true;
        auto m = j.find("mapping");
        if (m != j.end() && m->is_object() && jnum(*m, "wraparound_factor", -1) >= 0)
          wrap_json = jnum(*m, "wraparound_factor", 0);
      }
      continue;
    }
    if (starts_with(l, "INFO: settings {")) {  // blkrr replay's settings
      auto j = json_tail(l);
      if (j.is_object() &&
          (jbool(j, "dry_run", false) || jbool(j, "fake_io", false) || !jbool(j, "direct", true)))
        d.fake = true;
      if (j.is_object()) d.timing = timing_of(j);
      continue;
    }
    if (starts_with(l, "INFO: command")) continue;  // file names are no markers
    std::string low = l;
    std::transform(low.begin(), low.end(), low.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (l.find("FAKE") != std::string::npos) d.fake = true;
    for (const char* m : {"dry_run=1", "dry_run = 1", "use_o_direct=0", "use_o_direct = 0"})
      if (low.find(m) != std::string::npos) d.fake = true;
    auto w = low.find("wraparound");
    if (w != std::string::npos) {
      size_t p = low.find_first_of("0123456789", w);
      if (p != std::string::npos) {
        double v = 0;
        auto [e, ec] = std::from_chars(low.data() + p, low.data() + low.size(), v);
        if (ec == std::errc()) wrap_text = v;
      }
    }
  }
  if (wrap_json)
    d.wraparound_factor = wrap_json;
  else if (wrap_text)
    d.wraparound_factor = wrap_text;
}

namespace {

// Set points are stored as read (the int64 start in t_ns) and shifted here,
// once the earliest is known, so that it is 0.
Status rebase(Dataset& d, int64_t t0) {
  if (t0 == 0 || d.samples.empty()) return {};
  return d.samples.rewrite(
      [t0](Sample& s) { s.t_ns = static_cast<uint64_t>(static_cast<int64_t>(s.t_ns) - t0); });
}

// blkrr replay with --start/--speedup: a request was due at
// (orig_start - start) / speedup on the replay clock; delays refer to that.
// False when the result has no such settings (or starts before --start).
Result<bool> replay_clock(Dataset& d, int64_t t0) {
  for (const auto& l : d.info) {
    if (d.kind != DataKind::kReplay || !starts_with(l, "INFO: settings {")) continue;
    auto j = json_tail(l);
    if (!j.is_object()) return false;
    double speedup = jnum(j, "speedup", 1.0), start_s = jnum(j, "start_s", 0.0);
    if (!(speedup > 0) || static_cast<double>(t0) < start_s * 1e9) return false;
    BLKRR_TRY(d.samples.rewrite([&](Sample& s) {
      s.t_ns = static_cast<uint64_t>(std::llround(
          (static_cast<double>(static_cast<int64_t>(s.t_ns)) - start_s * 1e9) / speedup));
    }));
    d.time_scale = speedup;
    return true;
  }
  return false;
}

Status read_load(const std::string& path, Dataset& d) {
  auto r = LoadReader::open(path);
  if (!r) return r.error();
  LoadReader& rd = *r;
  d.kind = rd.kind() == LoadKind::kReplay ? DataKind::kReplay : DataKind::kLoad;
  int64_t t0 = std::numeric_limits<int64_t>::max();
  LoadRecord rec;
  while (true) {
    auto more = rd.next(rec);
    if (!more) return more.error();
    if (!*more) break;
    Sample s;
    s.sector = rec.sector;
    s.sectors = rec.sectors;
    s.op = rec.op == Op::kWrite ? kSampleWrite : kSampleRead;
    if (d.kind == DataKind::kReplay) {
      s.flags |= kSampleHasDelay | kSampleHasLatency;
      if (rec.pushed_back) s.flags |= kSamplePushedBack;
      s.delay_ns = rec.delay_ns;
      s.latency_ns = rec.duration_ns > 0 ? static_cast<uint64_t>(rec.duration_ns) : 0;
    } else if (rec.duration_ns > 0) {
      // A load that kept its original latencies.
      s.flags |= kSampleHasLatency;
      s.latency_ns = static_cast<uint64_t>(rec.duration_ns);
    }
    s.t_ns = static_cast<uint64_t>(rec.start_ns);
    t0 = std::min(t0, rec.start_ns);
    d.samples.push_back(s);
  }
  BLKRR_TRY(d.samples.status());
  d.warnings = source_warnings(rd.counters());
  d.info = rd.preamble();
  d.info.insert(d.info.end(), rd.info_lines().begin(), rd.info_lines().end());
  auto scaled = replay_clock(d, t0);
  if (!scaled) return scaled.error();
  return *scaled ? Status() : rebase(d, t0);
}

// The trace header's context as an "INFO: trace {...}" line (kept in the
// saved form, read by provenance_of).
std::string trace_header_line(const TraceHeader& h, std::optional<int64_t> t0) {
  std::string dev;
  double bytes = 0;
  for (const auto& x : h.devices) {
    dev += (dev.empty() ? "" : "+") + x.name;
    bytes += static_cast<double>(x.size_bytes);
    if (!x.model.empty() && h.devices.size() == 1) dev += " (" + x.model + ")";
  }
  double start_unix = 0;
  if (h.real_anchor_ns && t0) {
    start_unix = (static_cast<double>(h.real_anchor_ns) +
                  static_cast<double>(*t0 - static_cast<int64_t>(h.mono_anchor_ns))) /
                 1e9;
  }
  return trace_info_line(h.host, h.kernel_release, h.tool_version, dev, bytes, start_unix);
}

Status read_source(const std::vector<std::string>& paths, Dataset& d) {
  SourceOptions so;
  auto src = open_source(paths, so);
  if (!src) return src.error();
  RequestSource& rs = **src;
  d.kind = DataKind::kTrace;
  std::map<uint32_t, uint16_t> proc_of;
  std::optional<int64_t> t0;
  Request q;
  while (true) {
    auto more = rs.next(q);
    if (!more) return more.error();
    if (!*more) break;
    if (q.op != Op::kRead && q.op != Op::kWrite) {
      ++d.other_requests;
      continue;
    }
    Sample s;
    s.sector = q.sector;
    s.sectors = q.sectors();
    s.op = q.op == Op::kWrite ? kSampleWrite : kSampleRead;
    if (q.completed() && q.complete_ns >= q.issue_ns) {
      s.flags |= kSampleHasLatency;
      s.latency_ns = q.latency_ns();
    }
    if (q.tgid != 0 || q.comm[0] != 0) {
      auto [it, fresh] = proc_of.try_emplace(q.tgid, kNoProc);
      if (fresh && d.procs.size() < kNoProc) {
        it->second = static_cast<uint16_t>(d.procs.size());
        d.procs.push_back({q.tgid, std::string(q.comm_view()), 0, 0, 0});
      }
      s.proc = it->second;
      if (s.proc != kNoProc) {
        auto& p = d.procs[s.proc];
        ++p.requests;
        p.bytes += q.bytes;
        p.disk_time_ns += q.disk_time_ns;
      }
    }
    s.t_ns = q.issue_ns;
    t0 = std::min(t0.value_or(INT64_MAX), static_cast<int64_t>(q.issue_ns));
    d.samples.push_back(s);
  }
  BLKRR_TRY(d.samples.status());
  d.warnings = rs.warnings();
  d.info = rs.info().preamble;
  if (const auto& h = rs.info().trace_header) d.info.push_back(trace_header_line(*h, t0));
  BLKRR_TRY(rebase(d, t0.value_or(0)));
  for (const auto& [k, v] : rs.counters()) d.info.push_back("INFO: " + k + "=" + std::to_string(v));
  return {};
}

}  // namespace

Result<Dataset> load_dataset(const std::string& path, const std::string& label) {
  return load_dataset(std::vector<std::string>{path}, label);
}

Result<Dataset> load_dataset(const std::vector<std::string>& paths, const std::string& label) {
  if (paths.empty()) return Error(ErrorKind::kUsage, "no input given");
  const std::string& path = paths.front();
  Dataset d;
  d.path = path;
  // The pieces of a rotated recording: one dataset, labelled by their stem.
  const std::string stem = paths.size() > 1 ? piece_stem(path) : std::string();
  d.label = !label.empty() ? label : label_from_path(stem.empty() ? path : stem);
  auto fmt = detect_format(path);
  if (!fmt) return fmt.error();
  Status st = *fmt == InputFormat::kLoad ? read_load(path, d) : read_source(paths, d);
  if (!st) return st.error();
  d.samples.seal();
  apply_info_markers(d);
  return d;
}

}  // namespace blkrr::report
