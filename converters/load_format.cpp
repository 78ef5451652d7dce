#include "converters/load_format.h"

#include <cstring>

namespace blkrr {

namespace {
constexpr size_t kMaxPreambleLines = 100000;
constexpr size_t kMaxInfoLines = 1000000;
// Bytes of preamble and of INFO/text lines kept (each line may be 1 MiB).
constexpr size_t kMaxKeptBytes = 16u << 20;

bool starts_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}

bool is_header(std::string_view line, LoadKind& kind) {
  std::string_view t = trim(line);
  if (line.find(';') == std::string_view::npos) return false;
  if (starts_with(t, "orig_start")) {
    kind = LoadKind::kReplay;
    return true;
  }
  if (starts_with(t, "start")) {
    kind = LoadKind::kLoad;
    return true;
  }
  return false;
}

bool is_info_line(std::string_view line) {
  return starts_with(line, "INFO:") || starts_with(line, "WARN:") || starts_with(line, "ERROR:") ||
         starts_with(line, "VERIFY") || starts_with(line, "SUMMARY:") || starts_with(line, "FATAL");
}
}  // namespace

const char* load_header(LoadKind kind) {
  return kind == LoadKind::kLoad
             ? "start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0"
             : "orig_start ; sector; length ; op ;  replay_delay; replay_duration";
}

Result<LoadReader> LoadReader::open(const std::string& path, LoadReadOptions opts) {
  auto in = LineReader::open(path);
  if (!in) return in.error();
  LoadReader r(std::move(*in));
  r.opts_ = opts;
  // Read the preamble up to the header (or the first data line of a file
  // without a header).
  std::string_view line;
  for (;;) {
    auto got = r.in_.next(line);
    if (!got) return got.error();
    if (!*got) break;  // empty or preamble-only file: no requests
    if (is_header(line, r.kind_)) {
      r.has_header_ = true;
      break;
    }
    if (line.find(';') != std::string_view::npos) {
      const char* why = r.parse_data(line, r.pending_);
      if (!why) {
        r.have_pending_ = true;
        break;
      }
      if (!opts.skip_bad) {
        return Error(ErrorKind::kBadInput,
                     r.in_.where() + ": " + why +
                         " (not a blkreplay load? expected 'start ; sector; length ; op ; ...'; "
                         "--skip-bad skips such lines)");
      }
      ++r.skipped_;
      ++r.reasons_[why];
      continue;
    }
    r.kept_bytes_ += line.size();
    if (r.preamble_.size() >= kMaxPreambleLines || r.kept_bytes_ > kMaxKeptBytes) {
      return Error(
          ErrorKind::kBadInput,
          path + ": no load header in the first " + std::to_string(r.preamble_.size()) +
              " lines (16 MiB at most); not a blkreplay load (use --from to name the format)");
    }
    r.preamble_.emplace_back(line);
  }
  return r;
}

const char* LoadReader::parse_data(std::string_view line, LoadRecord& out) {
  std::string_view f[6];
  size_t n = 0, b = 0;
  for (;;) {
    const size_t e = line.find(';', b);
    if (e == std::string_view::npos) {
      f[n++] = line.substr(b);
      break;
    }
    if (n == 5)
      return "too many ';' fields (expected 4 to 6: start ; sector ; length ; op ; delay ; "
             "duration)";
    f[n++] = line.substr(b, e - b);
    b = e + 1;
  }
  if (n < 4)
    return "too few ';' fields (expected 4 to 6: start ; sector ; length ; op ; delay ; duration)";
  int fd = 9;
  if (!parse_seconds_ns(f[0], out.start_ns, &fd) || out.start_ns < 0)
    return "bad start time (expected seconds like 12.345678901)";
  if (fd != 9) ++odd_fraction_;
  if (!parse_u64_field(f[1], out.sector)) return "bad sector (expected a number)";
  uint64_t len = 0;
  if (!parse_u64_field(f[2], len)) return "bad length (expected a number of sectors)";
  if (len > (UINT32_MAX >> 9)) return "length too large (more than 4 GiB)";
  if (len == 0) return "length 0 (a request has at least one sector)";
  if (out.sector > (kMaxByteOffset >> 9) - len) return "sector + length beyond 2^63 bytes";
  out.sectors = static_cast<uint32_t>(len);
  std::string_view op = trim(f[3]);
  if (op.empty() || op.size() > 2) return "bad op (expected R or W)";
  switch (op[0]) {
    case 'R':
      out.op = Op::kRead;
      out.pushed_back = false;
      break;
    case 'W':
      out.op = Op::kWrite;
      out.pushed_back = false;
      break;
    case 'r':
      out.op = Op::kRead;
      out.pushed_back = true;
      break;
    case 'w':
      out.op = Op::kWrite;
      out.pushed_back = true;
      break;
    default:
      return "bad op (expected R or W)";
  }
  out.op_suffix = 0;
  if (op.size() == 2) {
    // blktrace rwbs modifiers: read-ahead, sync, meta, FUA.
    if (op[1] != 'A' && op[1] != 'S' && op[1] != 'M' && op[1] != 'F')
      return "bad op (expected R or W)";
    out.op_suffix = op[1];
  }
  out.delay_ns = 0;
  out.duration_ns = 0;
  if (n >= 5 && !parse_seconds_ns(f[4], out.delay_ns)) return "bad replay_delay (expected seconds)";
  if (n >= 6 && (!parse_seconds_ns(f[5], out.duration_ns) || out.duration_ns < 0))
    return "bad replay_duration (expected seconds)";
  return nullptr;
}

std::map<std::string, uint64_t> LoadReader::counters() const {
  std::map<std::string, uint64_t> c;
  if (skipped_) c["lines_skipped"] = skipped_;
  for (const auto& [why, n] : reasons_) c["skipped: " + why] = n;
  count_unterminated(in_, c);
  return c;
}

Result<bool> LoadReader::next(LoadRecord& out) {
  if (have_pending_) {
    have_pending_ = false;
    out = pending_;
    span_.problem(out.start_ns);  // the first time seen: never a problem
    return true;
  }
  std::string_view line;
  for (;;) {
    auto got = in_.next(line);
    if (!got) return got.error();
    if (!*got) return false;
    // Fast path: a data line starts with blanks and a digit.
    size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    if (i < line.size() && line[i] >= '0' && line[i] <= '9' &&
        line.find(';', i) != std::string_view::npos) {
      const char* why = parse_data(line, out);
      if (!why) {
        if (std::string bad = span_.problem(out.start_ns); !bad.empty())
          return Error(ErrorKind::kBadInput, in_.where() + ": " + bad);
        return true;
      }
      if (!opts_.skip_bad) {
        return Error(ErrorKind::kBadInput,
                     in_.where() + ": " + why + "; --skip-bad skips malformed lines");
      }
      ++skipped_;
      ++reasons_[why];
      continue;
    }
    LoadKind k;
    if (is_header(line, k)) {
      if (!has_header_) {
        has_header_ = true;
        kind_ = k;
      } else {
        ++repeated_headers_;
      }
      continue;
    }
    if (is_info_line(line) || line.find(';') == std::string_view::npos) {
      if (info_.size() < kMaxInfoLines && kept_bytes_ + line.size() <= kMaxKeptBytes) {
        kept_bytes_ += line.size();
        info_.emplace_back(line);
      }
      continue;
    }
    // A line with ';' that is neither data nor a known text line.
    const char* why = parse_data(line, out);
    if (!why) return true;
    if (!opts_.skip_bad) {
      return Error(ErrorKind::kBadInput,
                   in_.where() + ": " + why + "; --skip-bad skips malformed lines");
    }
    ++skipped_;
    ++reasons_[why];
  }
}

Result<LoadWriter> LoadWriter::create(const std::string& path, LoadKind kind,
                                      const std::vector<std::string>& preamble, int gz_level) {
  auto out = OutFile::create(path, gz_level);
  if (!out) return out.error();
  LoadWriter w(std::move(*out), kind);
  w.out_.append(load_head(preamble, kind));
  return w;
}

std::string load_head(const std::vector<std::string>& preamble, LoadKind kind) {
  std::string text;
  for (const auto& l : preamble) {
    // A ';' would make readers take the line for data or a header.
    for (char c : l) text += c == ';' || c == '\n' ? ',' : c;
    text += '\n';
  }
  return text + load_header(kind) + "\n";
}

char* format_load_line(char* p, const LoadRecord& r, LoadKind kind) {
  p = fmt_sec9(p, r.start_ns, 17);
  p = put_str(p, " ; ");
  p = fmt_u64_w(p, r.sector, 12);
  p = put_str(p, " ; ");
  p = fmt_u64_w(p, r.sectors, 4);
  *p++ = ' ';
  *p++ = ';';
  char letter = r.op == Op::kWrite ? 'W' : 'R';
  if (kind == LoadKind::kReplay && r.pushed_back) letter = static_cast<char>(letter + 32);
  if (r.op_suffix) {
    *p++ = letter;
    *p++ = r.op_suffix;
  } else {
    *p++ = ' ';
    *p++ = letter;
  }
  if (kind == LoadKind::kLoad) return put_str(p, " ; 0.0 ; 0.0\n");
  p = put_str(p, " ; ");
  p = fmt_sec9(p, r.delay_ns, 13);
  p = put_str(p, " ; ");
  p = fmt_sec9(p, r.duration_ns, 13);
  *p++ = '\n';
  return p;
}

void LoadWriter::format(const LoadRecord& r) {
  out_.commit(format_load_line(out_.reserve(kMaxLoadLine), r, kind_));
  ++records_;
}

Status LoadWriter::write_line(const std::string& text) {
  out_.append(text);
  out_.append("\n");
  return out_.maybe_flush();
}

Status LoadWriter::close() {
  return out_.close();
}

Request load_to_request(const LoadRecord& r) {
  Request q;
  q.issue_ns = static_cast<uint64_t>(r.start_ns);
  q.sector = r.sector;
  q.bytes = r.sectors * 512u;
  q.op = r.op;
  if (r.op_suffix == 'A') q.flags |= kFlagReadahead;
  if (r.op_suffix == 'S') q.flags |= kFlagSync;
  if (r.op_suffix == 'M') q.flags |= kFlagMeta;
  if (r.duration_ns > 0) q.complete_ns = q.issue_ns + static_cast<uint64_t>(r.duration_ns);
  return q;
}

bool request_to_load(const Request& q, uint64_t start_ns, LoadRecord& out) {
  if (q.op != Op::kRead && q.op != Op::kWrite) return false;
  out.start_ns = static_cast<int64_t>(start_ns);
  out.sector = q.sector;
  out.sectors = (q.bytes + 511u) / 512u;
  out.op = q.op;
  out.pushed_back = false;
  out.delay_ns = 0;
  out.duration_ns = 0;
  out.op_suffix = (q.op == Op::kRead && (q.flags & kFlagReadahead)) ? 'A' : 0;
  return true;
}

}  // namespace blkrr
