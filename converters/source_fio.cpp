// fio iologs (--write_iolog / --read_iolog) as a RequestSource.
//   v2: "fio version 2 iolog", then "FILE ACTION [OFFSET LENGTH]"; "FILE wait MS 0"
//       sets the time (ms since the start) of the requests that follow.
//   v3: "fio version 3 iolog", then "USEC FILE ACTION [OFFSET LENGTH]".
// Actions: read, write, trim (discard), sync/datasync (flush); add, open,
// close, unlink are file bookkeeping. Offsets and lengths are bytes.
#include <map>

#include "converters/source.h"
#include "converters/text_io.h"

namespace blkrr {

namespace {

class FioSource : public RequestSource {
 public:
  FioSource(LineReader in, int version, const SourceOptions& o)
      : in_(std::move(in)), version_(version), skip_bad_(o.skip_bad), file_(o.device) {
    info_.format = InputFormat::kFioIolog;
    info_.paths = {in_.path()};
  }

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
                            "a fio version " + std::to_string(version_) + " iolog line",
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
    std::string_view f[6];
    size_t n = split_whitespace(line, f, 6);
    if (n == 0) return nullptr;
    size_t i = 0;
    if (version_ == 3) {
      uint64_t us;
      if (!parse_u64_field(f[0], us)) return "bad timestamp";
      if (us > static_cast<uint64_t>(INT64_MAX) / 1000) return "timestamp out of range";
      now_ns_ = us * 1000;
      i = 1;
    }
    if (n < i + 2) return "too few fields";
    std::string_view file = f[i], act = f[i + 1];
    if (act == "add" || act == "open" || act == "close" || act == "unlink") return nullptr;
    if (n != i + 4) return "wrong number of fields";
    uint64_t off, len;
    if (!parse_u64_field(f[i + 2], off)) return "bad offset";
    if (!parse_u64_field(f[i + 3], len)) return "bad length";
    if (act == "wait") {
      if (version_ == 3) return "'wait' is not allowed in version 3 iologs";
      if (off > static_cast<uint64_t>(INT64_MAX) / 1000000) return "wait time out of range";
      now_ns_ = off * 1000000;  // v2: ms since the start of the job
      return nullptr;
    }
    Op op;
    if (act == "read")
      op = Op::kRead;
    else if (act == "write")
      op = Op::kWrite;
    else if (act == "trim")
      op = Op::kDiscard;
    else if (act == "sync" || act == "datasync")
      op = Op::kFlush;
    else
      return "unknown action";
    if (len > UINT32_MAX) return "length too large";
    // One target only: several files are refused unless one is chosen.
    if (!file_.empty()) {
      if (file != file_) return nullptr;
    } else if (first_file_.empty()) {
      first_file_ = std::string(file);
    } else if (file != first_file_) {
      fatal_ = "the iolog uses several files (" + first_file_ + ", " + std::string(file) +
               "); choose one with --device FILE";
      return kFatalLine;
    }
    out = Request{};
    out.issue_ns = now_ns_;
    out.sector = off / 512;
    out.bytes = static_cast<uint32_t>(len);
    out.op = op;
    if (const char* why = request_range_error(out)) return why;
    if (off % 512) ++counters_["offsets not 512-byte aligned (rounded down)"];
    return kRequest;
  }

  LineReader in_;
  int version_;
  bool skip_bad_;
  std::string file_, first_file_, fatal_;
  uint64_t now_ns_ = 0;
  Counters counters_;
};

}  // namespace

Result<std::unique_ptr<RequestSource>> open_fio_source(const std::string& path,
                                                       const SourceOptions& opts) {
  auto in = LineReader::open(path);
  if (!in) return in.error();
  std::string_view first;
  auto got = in->next(first);
  if (!got) return got.error();
  int version = 0;
  if (*got && trim(first) == "fio version 2 iolog") version = 2;
  if (*got && trim(first) == "fio version 3 iolog") version = 3;
  if (!version) {
    return Error(ErrorKind::kBadInput, path +
                                           ":1: not a fio iolog (expected 'fio version 2 iolog' or "
                                           "'fio version 3 iolog')");
  }
  std::unique_ptr<RequestSource> s = std::make_unique<FioSource>(std::move(*in), version, opts);
  return s;
}

}  // namespace blkrr
