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
#include "core/trace_format.h"
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

}  // namespace

void apply_info_markers(Dataset& d) {
  std::optional<double> wrap_text, wrap_json;
  for (const auto& l : d.info) {
    if (starts_with(l, "SUMMARY: {")) {  // blkrr replay's summary
      auto j = json_tail(l);
      if (j.is_object()) {
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

Status read_source(const std::string& path, Dataset& d) {
  SourceOptions so;
  auto src = open_source({path}, so);
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
  d.info = rs.info().preamble;
  if (const auto& h = rs.info().trace_header) d.info.push_back(trace_header_line(*h, t0));
  BLKRR_TRY(rebase(d, t0.value_or(0)));
  for (const auto& [k, v] : rs.counters()) d.info.push_back("INFO: " + k + "=" + std::to_string(v));
  return {};
}

}  // namespace

Result<Dataset> load_dataset(const std::string& path, const std::string& label) {
  Dataset d;
  d.path = path;
  d.label = label.empty() ? label_from_path(path) : label;
  auto fmt = detect_format(path);
  if (!fmt) return fmt.error();
  Status st = *fmt == InputFormat::kLoad ? read_load(path, d) : read_source(path, d);
  if (!st) return st.error();
  d.samples.seal();
  apply_info_markers(d);
  return d;
}

// ---- saved form ----

namespace {
std::string fmt_double(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}
}  // namespace

Status save_dataset(const Dataset& d, const std::string& path) {
  auto o = OutFile::create(path, 1);
  if (!o) return o.error();
  OutFile& out = *o;
  out.append("# blkrr report data v1\n# kind=" + std::string(kind_name(d.kind)) +
             "\n# label=" + d.label + "\n# path=" + d.path +
             "\n# other_requests=" + std::to_string(d.other_requests) + "\n");
  if (d.fake) out.append("# fake=1\n");
  if (d.time_scale != 1) out.append("# time_scale=" + fmt_double(d.time_scale) + "\n");
  if (d.wraparound_factor)
    out.append("# wraparound_factor=" + fmt_double(*d.wraparound_factor) + "\n");
  for (const auto& l : d.info) out.append("# info=" + l + "\n");
  for (const auto& p : d.procs)
    out.append("# proc=" + std::to_string(p.tgid) + "," + std::to_string(p.requests) + "," +
               std::to_string(p.bytes) + "," + std::to_string(p.disk_time_ns) + "," + p.comm +
               "\n");
  out.append("t_ns,sector,sectors,op,flags,proc,delay_ns,latency_ns\n");
  Status flushed;
  d.samples.for_each([&](const Sample& s) {
    if (!flushed) return;
    char* b = out.reserve(160);
    char* e = b + 160;
    auto put = [&](auto v, char sep) {
      b = std::to_chars(b, e, v).ptr;
      *b++ = sep;
    };
    put(s.t_ns, ',');
    put(s.sector, ',');
    put(s.sectors, ',');
    *b++ = s.write() ? 'W' : 'R';
    *b++ = ',';
    put(static_cast<unsigned>(s.flags), ',');
    put(static_cast<unsigned>(s.proc), ',');
    put(s.delay_ns, ',');
    put(s.latency_ns, '\n');
    out.commit(b);
    flushed = out.maybe_flush();
  });
  if (!flushed) return flushed.error();
  BLKRR_TRY(d.samples.status());
  return out.close();
}

namespace {

template <class T>
bool field(std::string_view& line, T& v) {
  size_t c = line.find(',');
  std::string_view f = line.substr(0, c);
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (ec != std::errc() || p != f.data() + f.size()) return false;
  line = c == std::string_view::npos ? std::string_view() : line.substr(c + 1);
  return true;
}

}  // namespace

Result<Dataset> load_saved_dataset(const std::string& path) {
  auto lr = LineReader::open(path);
  if (!lr) return lr.error();
  LineReader& in = *lr;
  Dataset d;
  std::string_view line;
  bool header = false;
  auto bad = [&](const char* what) {
    return Error(in.where() + ": " + what +
                 " in saved report data; re-run 'blkrr report' on the input");
  };
  while (true) {
    auto more = in.next(line);
    if (!more) return more.error();
    if (!*more) break;
    if (!header) {
      auto val = [&](std::string_view key) -> std::optional<std::string> {
        if (line.substr(0, key.size()) == key) return std::string(line.substr(key.size()));
        return std::nullopt;
      };
      if (auto v = val("# kind=")) {
        d.kind = *v == "replay"  ? DataKind::kReplay
                 : *v == "trace" ? DataKind::kTrace
                                 : DataKind::kLoad;
      } else if (auto v2 = val("# label=")) {
        d.label = *v2;
      } else if (auto v3 = val("# path=")) {
        d.path = *v3;
      } else if (auto v4 = val("# other_requests=")) {
        auto n = parse_u64(*v4);
        if (!n) return bad("bad other_requests");
        d.other_requests = *n;
      } else if (val("# fake=1")) {
        d.fake = true;
      } else if (auto v8 = val("# time_scale=")) {
        auto w = parse_double(*v8);
        if (!w || !(*w > 0)) return bad("bad time scale");
        d.time_scale = *w;
      } else if (auto v7 = val("# wraparound_factor=")) {
        auto w = parse_double(*v7);
        if (!w) return bad("bad wraparound factor");
        d.wraparound_factor = *w;
      } else if (auto v5 = val("# info=")) {
        d.info.push_back(*v5);
      } else if (auto v6 = val("# proc=")) {
        std::string_view f = *v6;
        ProcInfo p;
        if (!field(f, p.tgid) || !field(f, p.requests) || !field(f, p.bytes) ||
            !field(f, p.disk_time_ns))
          return bad("bad process line");
        p.comm = std::string(f);
        d.procs.push_back(p);
      } else if (line.substr(0, 5) == "t_ns,") {
        header = true;
      } else if (line.empty() || line[0] != '#') {
        return bad("missing column header");
      }
      continue;
    }
    Sample s;
    char op = 0;
    unsigned flags = 0, proc = 0;
    std::string_view f = line;
    if (!field(f, s.t_ns) || !field(f, s.sector) || !field(f, s.sectors) || f.size() < 2)
      return bad("malformed row");
    op = f[0];
    f.remove_prefix(2);
    if ((op != 'R' && op != 'W') || !field(f, flags) || !field(f, proc) || !field(f, s.delay_ns) ||
        !field(f, s.latency_ns) || !f.empty() || flags > 0xff || proc > kNoProc ||
        (proc != kNoProc && proc >= d.procs.size()))
      return bad("malformed row");
    s.op = op == 'W' ? kSampleWrite : kSampleRead;
    s.flags = static_cast<uint8_t>(flags);
    s.proc = static_cast<uint16_t>(proc);
    d.samples.push_back(s);
  }
  if (!header) return Error(path + ": no data in saved report data (truncated?)");
  BLKRR_TRY(d.samples.status());
  apply_info_markers(d);
  return d;
}

}  // namespace blkrr::report
