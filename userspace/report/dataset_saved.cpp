// The saved form of a Dataset (DIR/data/LABEL.requests.csv.gz) that
// `blkrr report -o DIR --bins N` re-reports from; see dataset.h.
#include <charconv>
#include <cstdio>
#include <optional>

#include "converters/text_io.h"
#include "core/args.h"
#include "report/dataset.h"

namespace blkrr::report {

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

// A line before the column header into `d` (`header_done` at the column
// header): nullptr, or what is wrong with it.
const char* take_header_line(std::string_view line, Dataset& d, bool& header_done) {
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
    if (!n) return "bad other_requests";
    d.other_requests = *n;
  } else if (val("# fake=1")) {
    d.fake = true;
  } else if (auto v8 = val("# time_scale=")) {
    auto w = parse_double(*v8);
    if (!w || !(*w > 0)) return "bad time scale";
    d.time_scale = *w;
  } else if (auto v7 = val("# wraparound_factor=")) {
    auto w = parse_double(*v7);
    if (!w) return "bad wraparound factor";
    d.wraparound_factor = *w;
  } else if (auto v5 = val("# info=")) {
    d.info.push_back(*v5);
  } else if (auto v6 = val("# proc=")) {
    std::string_view f = *v6;
    ProcInfo p;
    if (!field(f, p.tgid) || !field(f, p.requests) || !field(f, p.bytes) ||
        !field(f, p.disk_time_ns))
      return "bad process line";
    p.comm = std::string(f);
    d.procs.push_back(p);
  } else if (line.substr(0, 5) == "t_ns,") {
    header_done = true;
  } else if (line.empty() || line[0] != '#') {
    return "missing column header";
  }
  return nullptr;
}

// A data row into `s` (of a dataset with `procs` processes); false if malformed.
bool take_row(std::string_view line, size_t procs, Sample& s) {
  char op = 0;
  unsigned flags = 0, proc = 0;
  std::string_view f = line;
  if (!field(f, s.t_ns) || !field(f, s.sector) || !field(f, s.sectors) || f.size() < 2)
    return false;
  op = f[0];
  f.remove_prefix(2);
  if ((op != 'R' && op != 'W') || !field(f, flags) || !field(f, proc) || !field(f, s.delay_ns) ||
      !field(f, s.latency_ns) || !f.empty() || flags > 0xff || proc > kNoProc ||
      (proc != kNoProc && proc >= procs))
    return false;
  s.op = op == 'W' ? kSampleWrite : kSampleRead;
  s.flags = static_cast<uint8_t>(flags);
  s.proc = static_cast<uint16_t>(proc);
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
    return Error(
        ErrorKind::kBadInput,
        in.where() + ": " + what + " in saved report data; re-run 'blkrr report' on the input");
  };
  while (true) {
    auto more = in.next(line);
    if (!more) return more.error();
    if (!*more) break;
    if (!header) {
      if (const char* what = take_header_line(line, d, header)) return bad(what);
      continue;
    }
    Sample s;
    if (!take_row(line, d.procs.size(), s)) return bad("malformed row");
    d.samples.push_back(s);
  }
  if (!header)
    return Error(ErrorKind::kBadInput, path + ": no data in saved report data (truncated?)");
  BLKRR_TRY(d.samples.status());
  apply_info_markers(d);
  return d;
}

}  // namespace blkrr::report
