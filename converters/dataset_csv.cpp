#include "converters/dataset_csv.h"

#include <vector>

#include "converters/dataset_lines.h"
#include "converters/text_io.h"

namespace blkrr {

namespace {

constexpr const char* kRecord = "";
constexpr uint64_t kMaxNs = uint64_t{1} << 62;

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class DatasetSource : public RequestSource {
 public:
  DatasetSource(DatasetLines lines, const SourceOptions& o, const DatasetFormat& f,
                std::optional<uint64_t> want)
      : in_(std::move(lines)), o_(o), f_(f), want_(want) {
    info_.format = f.format;
    info_.paths = {in_.display()};
    info_.absolute_time = true;  // each output starts at its first request
    info_.has_completion = f.has_completion;
    info_.dataset = f.title;
    info_.time_resolution = f.resolution;
    info_.assumptions = {std::string("fields ") + f.layout + "; " + f.assumed};
    if (f.whole_seconds)
      info_.assumptions.push_back(
          "times were spread: the n requests of each whole second (over all volumes, in file "
          "order) got the times sec + (i + u)/n, u a seeded jitter in [0, 1) (--time-seed " +
          std::to_string(o.time_seed) + ")");
  }

  Result<bool> next(Request& out) override {
    DatasetRecord rec;
    for (;;) {
      auto got = f_.whole_seconds ? next_spread(rec) : next_record(rec);
      if (!got || !*got) return got;
      if (want_ && rec.volume != *want_) {
        ++counters_["requests of other volumes (not --device-id)"];
        continue;
      }
      if (!want_ && !o_.all_volumes) {
        if (!first_volume_) {
          first_volume_ = rec.volume;
        } else if (rec.volume != *first_volume_) {
          return Error(ErrorKind::kBadInput,
                       where(rec_line_) + ": the trace mixes volumes " +
                           std::to_string(*first_volume_) + " and " + std::to_string(rec.volume) +
                           "; choose one with --device-id ID, or write one load per volume "
                           "with --split-by volume");
        }
      }
      out = Request{};
      out.issue_ns = rec.time_ns;
      if (rec.latency_ns != kNoTime) out.complete_ns = rec.time_ns + rec.latency_ns;
      out.sector = rec.offset / 512;
      out.bytes = static_cast<uint32_t>(rec.bytes);
      out.op = rec.op;
      out.dev = out.part = make_dev(0, static_cast<uint32_t>(rec.volume));
      if (rec.offset % 512) ++counters_["offsets not 512-byte aligned (rounded down)"];
      return true;
    }
  }

  Counters counters() const override {
    Counters c = counters_;
    in_.count(c);
    return c;
  }

 private:
  std::string where(uint64_t line) const {
    return in_.reader().path() + ":" + std::to_string(line);
  }

  // The next line that is a request, parsed; false at the end.
  Result<bool> next_record(DatasetRecord& rec) {
    std::string_view line;
    for (;;) {
      auto got = in_.next(line);
      if (!got || !*got) return got;
      rec = DatasetRecord{};
      const char* why = parse_line(line, rec);
      if (why == kRecord) {
        rec_line_ = in_.reader().line();
        return true;
      }
      if (!why) continue;
      BLKRR_TRY(reject_line(in_.reader(), why, o_.skip_bad, f_.layout, counters_));
    }
  }

  const char* parse_line(std::string_view line, DatasetRecord& rec) {
    if (line.size() > kMaxDatasetLine) return "line longer than 4096 bytes";
    if (trim(line).empty()) return nullptr;
    if (f_.header && in_.reader().line() == 1 && trim(line) == f_.header) return nullptr;
    std::string_view f[8];
    const size_t n = split_at(line, ',', f, f_.fields);
    if (n > f_.fields) return "too many fields";
    if (n < f_.fields) return "too few fields";
    if (const char* why = f_.parse(f, rec)) return why;
    if (rec.left_out) {
      ++counters_[rec.left_out];
      return nullptr;
    }
    Request r;
    r.issue_ns = rec.time_ns;
    r.sector = rec.offset / 512;
    if (rec.bytes > kMaxRequestBytes) return "size larger than 4 GiB";
    r.bytes = static_cast<uint32_t>(rec.bytes);
    r.op = rec.op;
    if (rec.latency_ns != kNoTime) r.complete_ns = rec.time_ns + rec.latency_ns;
    if (const char* why = request_range_error(r)) return why;
    return kRecord;
  }

  // Whole-second formats: a second's requests are read ahead (at most
  // kMaxSpreadGroup), then handed out with their spread times.
  Result<bool> next_spread(DatasetRecord& rec) {
    if (pos_ == group_.size()) {
      group_.clear();
      lines_.clear();
      pos_ = 0;
      if (!have_ahead_) {
        auto got = next_record(ahead_);
        if (!got || !*got) return got;
        ahead_line_ = rec_line_;
      }
      have_ahead_ = false;
      const uint64_t sec = ahead_.time_ns;
      group_.push_back(ahead_);
      lines_.push_back(ahead_line_);
      for (;;) {
        if (group_.size() == kMaxSpreadGroup) {
          ++counters_["seconds over 262144 requests (spread in parts, times repeat)"];
          break;
        }
        auto got = next_record(ahead_);
        if (!got) return got.error();
        if (!*got) break;
        if (ahead_.time_ns != sec) {
          have_ahead_ = true;
          ahead_line_ = rec_line_;
          break;
        }
        group_.push_back(ahead_);
        lines_.push_back(rec_line_);
      }
      second_ = sec / 1000000000;
    }
    rec = group_[pos_];
    rec_line_ = lines_[pos_];
    rec.time_ns = spread_second_ns(second_, pos_, group_.size(), o_.time_seed);
    ++pos_;
    return true;
  }

  DatasetLines in_;
  SourceOptions o_;
  const DatasetFormat& f_;
  std::optional<uint64_t> want_, first_volume_;
  Counters counters_;
  uint64_t rec_line_ = 0;
  // whole-second spreading
  std::vector<DatasetRecord> group_;
  std::vector<uint64_t> lines_;
  size_t pos_ = 0;
  uint64_t second_ = 0, ahead_line_ = 0;
  DatasetRecord ahead_;
  bool have_ahead_ = false;
};

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool decimal(std::string_view s) {
  size_t dot = s.find('.');
  if (dot == std::string_view::npos) return all_digits(s);
  return all_digits(s.substr(0, dot)) && (dot + 1 == s.size() || all_digits(s.substr(dot + 1)));
}

bool rw(std::string_view s) {
  return s == "R" || s == "W";
}

}  // namespace

uint64_t spread_second_ns(uint64_t sec, uint64_t i, uint64_t n, uint64_t seed) {
  const uint64_t u = splitmix64(seed ^ splitmix64(sec ^ (i << 32) ^ (i >> 32)));
  // (i + u) / n of a second in ns: i * 1e9 plus u's top 30 bits as a
  // fraction of 1e9, over n.
  const uint64_t frac = ((u >> 34) * 1000000000u) >> 30;
  return sec * 1000000000u + (i * 1000000000u + frac) / n;
}

bool parse_rw_letter(std::string_view s, Op& op) {
  s = trim(s);
  if (s.size() != 1) return false;
  if ((s[0] | 0x20) == 'r') {
    op = Op::kRead;
    return true;
  }
  if ((s[0] | 0x20) == 'w') {
    op = Op::kWrite;
    return true;
  }
  return false;
}

bool parse_volume_id(std::string_view s, uint64_t& out) {
  return parse_u64_field(s, out) && out <= 0xfffff;
}

bool parse_dataset_seconds(std::string_view s, uint64_t& ns) {
  int64_t v;
  if (!parse_seconds_ns(s, v) || v < 0 || static_cast<uint64_t>(v) >= kMaxNs) return false;
  ns = static_cast<uint64_t>(v);
  return true;
}

std::optional<InputFormat> detect_dataset_line(std::string_view l) {
  std::string_view f[6];
  const size_t n = split_at(l, ',', f, 6);
  if (n > 6) return std::nullopt;
  for (size_t i = 0; i < n; ++i) f[i] = trim(f[i]);
  if (l == "Timestamp,Response,IOType,LUN,Offset,Size") return InputFormat::kSystor;
  if (l == "Timestamp,Offset,Size,IOType,VolumeID") return InputFormat::kTencent;
  if (n == 6 && decimal(f[0]) && (f[1].empty() || decimal(f[1])) && (f[2].empty() || rw(f[2])) &&
      all_digits(f[3]) && all_digits(f[4]) && all_digits(f[5]))
    return InputFormat::kSystor;
  if (n != 5) return std::nullopt;
  if (all_digits(f[0]) && rw(f[1]) && all_digits(f[2]) && all_digits(f[3]) && all_digits(f[4]))
    return InputFormat::kAlibaba;
  if (all_digits(f[0]) && decimal(f[1]) && rw(f[2]) && all_digits(f[3]) && all_digits(f[4]))
    return InputFormat::kK5cloud;
  // Unix seconds (9 or 10 digits), sectors, sectors, 0 or 1, volume.
  if (all_digits(f[0]) && f[0].size() >= 9 && f[0].size() <= 10 && all_digits(f[1]) &&
      all_digits(f[2]) && (f[3] == "0" || f[3] == "1") && all_digits(f[4]))
    return InputFormat::kTencent;
  return std::nullopt;
}

Result<std::unique_ptr<RequestSource>> open_dataset_source(const std::string& path,
                                                           const SourceOptions& opts,
                                                           const DatasetFormat& fmt) {
  std::optional<uint64_t> want;
  if (!opts.device_id.empty()) {
    uint64_t id;
    if (!parse_volume_id(opts.device_id, id))
      return Error(ErrorKind::kUsage,
                   "--device-id must be a volume number 0..1048575, not '" + opts.device_id + "'");
    want = id;
  }
  if (!opts.device.empty())
    return Error(
        ErrorKind::kUsage,
        std::string(fmt.title) +
            " input: select a volume with --device-id ID (--device names a Linux block device)");
  auto lines = DatasetLines::open(path);
  if (!lines) return lines.error();
  std::unique_ptr<RequestSource> s =
      std::make_unique<DatasetSource>(std::move(*lines), opts, fmt, want);
  return s;
}

}  // namespace blkrr
