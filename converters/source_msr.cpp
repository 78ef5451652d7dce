// MSR Cambridge block traces (SNIA IOTTA) as a RequestSource:
//   Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
// Timestamp is a Windows filetime (100 ns ticks since 1601), ResponseTime is
// in 100 ns ticks, Offset and Size are bytes, Type is Read or Write.
#include "converters/source.h"
#include "converters/text_io.h"

namespace blkrr {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  return true;
}

class MsrSource : public RequestSource {
 public:
  MsrSource(LineReader in, const SourceOptions& o) : in_(std::move(in)), skip_bad_(o.skip_bad) {
    info_.format = InputFormat::kMsrCsv;
    info_.paths = {in_.path()};
    info_.absolute_time = true;
    info_.has_completion = true;
    // --device DISK or HOST:DISK
    std::string_view d = o.device;
    size_t c = d.rfind(':');
    if (c != std::string_view::npos) {
      host_ = std::string(d.substr(0, c));
      d = d.substr(c + 1);
    }
    if (!d.empty()) {
      uint64_t disk;
      if (parse_u64_field(d, disk))
        disk_ = disk;
      else
        bad_device_ = true;
    }
  }
  bool bad_device() const { return bad_device_; }

  Result<bool> next(Request& out) override {
    std::string_view line;
    for (;;) {
      auto got = in_.next(line);
      if (!got) return got.error();
      if (!*got) return false;
      const char* why = parse(line, out);
      if (why == kRequest) return true;
      if (!why) continue;
      if (why == kFatalLine) return fatal_line(in_, fatal_);
      BLKRR_TRY(reject_line(in_, why, skip_bad_,
                            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
                            counters_));
    }
  }
  Counters counters() const override {
    Counters c = counters_;
    count_unterminated(in_, c);
    return c;
  }

 private:
  static constexpr const char* kRequest = "";

  const char* parse(std::string_view line, Request& out) {
    if (trim(line).empty()) return nullptr;
    std::string_view f[8];
    size_t n = 0, b = 0;
    for (;;) {
      size_t e = line.find(',', b);
      if (n == 7) return "too many fields";
      f[n++] = line.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
      if (e == std::string_view::npos) break;
      b = e + 1;
    }
    if (n != 7) return "wrong number of fields";
    if (in_.line() == 1 && trim(f[0]) == "Timestamp") return nullptr;  // header
    uint64_t ts, disk, off, size, resp;
    if (!parse_u64_field(f[0], ts)) return "bad timestamp";
    if (ts > (UINT64_MAX - kMaxLatencyNs) / 100) return "timestamp too large";
    if (!parse_u64_field(f[2], disk) || disk > 0xfffff) return "bad disk number";
    if (!parse_u64_field(f[4], off)) return "bad offset";
    if (!parse_u64_field(f[5], size) || size > UINT32_MAX) return "bad size";
    if (!parse_u64_field(f[6], resp)) return "bad response time";
    if (resp > kMaxLatencyNs / 100) return "response time longer than a day";
    std::string_view type = trim(f[3]), host = trim(f[1]);
    Op op;
    if (iequals(type, "Read"))
      op = Op::kRead;
    else if (iequals(type, "Write"))
      op = Op::kWrite;
    else
      return "bad type (expected Read or Write)";
    if (disk_) {
      if (disk != *disk_ || (!host_.empty() && host != host_)) return nullptr;
    } else if (first_host_.empty() && !first_disk_) {
      first_host_ = std::string(host);
      first_disk_ = disk;
    } else if (disk != *first_disk_ || host != first_host_) {
      fatal_ = "the trace mixes devices " + first_host_ + ":" + std::to_string(*first_disk_) +
               " and " + std::string(host) + ":" + std::to_string(disk) +
               "; choose one with --device DISK or --device HOST:DISK";
      return kFatalLine;
    }
    out = Request{};
    out.issue_ns = ts * 100;
    out.complete_ns = out.issue_ns + resp * 100;
    out.sector = off / 512;
    out.bytes = static_cast<uint32_t>(size);
    out.op = op;
    out.dev = make_dev(0, static_cast<uint32_t>(disk));
    out.part = out.dev;
    if (const char* why = request_range_error(out)) return why;
    if (off % 512) ++counters_["offsets not 512-byte aligned (rounded down)"];
    return kRequest;
  }

  LineReader in_;
  bool skip_bad_;
  std::string host_, first_host_, fatal_;
  std::optional<uint64_t> disk_, first_disk_;
  bool bad_device_ = false;
  Counters counters_;
};

}  // namespace

Result<std::unique_ptr<RequestSource>> open_msr_source(const std::string& path,
                                                       const SourceOptions& opts) {
  auto in = LineReader::open(path);
  if (!in) return in.error();
  auto s = std::make_unique<MsrSource>(std::move(*in), opts);
  if (s->bad_device()) {
    return Error(
        ErrorKind::kUsage,
        "MSR input: --device must be a disk number or HOST:DISK, not '" + opts.device + "'");
  }
  std::unique_ptr<RequestSource> r = std::move(s);
  return r;
}

}  // namespace blkrr
