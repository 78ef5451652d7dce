// blkparse's default text output as a RequestSource:
//   "  7,0    0        5     0.000020827 22290  D  WS 1509624 + 8 [fio]"
// device, cpu, sequence, seconds, pid, action, rwbs, then "sector + sectors"
// and the process name (or, for completions, the error) in brackets. The
// per-CPU and total statistics blkparse prints at the end, and lines whose
// first non-blank character is '#', are skipped.
#include <unordered_map>

#include "converters/blktrace.h"
#include "converters/source.h"
#include "converters/text_io.h"

namespace blkrr {

namespace {

// rwbs string ("FWFSM", "RA", "FN", "D") -> operation and flags.
bool parse_rwbs(std::string_view s, Op& op, uint16_t& flags) {
  flags = 0;
  size_t i = 0;
  if (s.size() >= 2 && s[0] == 'F' &&
      std::string_view("WRDNF").find(s[1]) != std::string_view::npos) {
    flags |= kFlagPreflush;
    i = 1;
  }
  if (i >= s.size()) return false;
  switch (s[i]) {
    case 'W':
      op = Op::kWrite;
      break;
    case 'R':
      op = Op::kRead;
      break;
    case 'D':
      op = Op::kDiscard;
      if (i + 1 < s.size() && s[i + 1] == 'E') {
        op = Op::kSecureErase;
        ++i;
      }
      break;
    case 'F':
      op = Op::kFlush;
      break;
    case 'N':
      op = (flags & kFlagPreflush) ? Op::kFlush : Op::kOther;
      break;
    default:
      return false;
  }
  if (op == Op::kFlush) flags &= static_cast<uint16_t>(~kFlagPreflush);
  for (++i; i < s.size(); ++i) {
    switch (s[i]) {
      case 'F':
        flags |= kFlagFua;
        break;
      case 'A':
        flags |= kFlagReadahead;
        break;
      case 'S':
        flags |= kFlagSync;
        break;
      case 'M':
        flags |= kFlagMeta;
        break;
      default:
        return false;
    }
  }
  return true;
}

// blkparse prints actions as one or two letters (Q, D, C, UT, ...).
bool is_action(std::string_view a) {
  if (a.empty() || a.size() > 2) return false;
  for (char c : a)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) return false;
  return true;
}

class BlkparseSource : public RequestSource {
 public:
  BlkparseSource(LineReader in, const SourceOptions& o, std::optional<DevT> dev)
      : in_(std::move(in)),
        action_(o.blktrace_action == 'Q' ? 'Q' : 'D'),
        skip_bad_(o.skip_bad),
        dev_(dev),
        pairer_(action_ == 'D') {
    info_.format = InputFormat::kBlkparse;
    info_.paths = {in_.path()};
    info_.absolute_time = true;
    info_.has_completion = action_ == 'D';
  }

  Result<bool> next(Request& out) override {
    for (;;) {
      if (pairer_.pop(out, eof_)) return true;
      if (eof_) return false;
      std::string_view line;
      auto got = in_.next(line);
      if (!got) return got.error();
      if (!*got) {
        eof_ = true;
        continue;
      }
      const char* why = handle(line);
      if (!why) continue;
      if (why == kFatalLine) return fatal_line(in_, fatal_);
      BLKRR_TRY(reject_line(in_, why, skip_bad_, "blkparse's default output", counters_));
    }
  }

  Counters counters() const override {
    Counters c = counters_;
    for (const auto& [k, v] : pairer_.counters()) c[k] += v;
    count_unterminated(in_, c);
    return c;
  }

 private:
  // nullptr: fine; kFatalLine: fatal_ ends the reading; else the reason the
  // line is malformed.
  const char* handle(std::string_view line) {
    std::string_view f[12];
    size_t n = split_whitespace(line, f, 12);
    if (n == 0) return nullptr;
    if (f[0].front() == '#') {  // comments and headers (blkparse -f, published traces)
      ++counters_["comment lines skipped"];
      return nullptr;
    }
    size_t comma = f[0].find(',');
    uint64_t ma = 0, mi = 0;
    if (comma == std::string_view::npos || !parse_u64_field(f[0].substr(0, comma), ma) ||
        !parse_u64_field(f[0].substr(comma + 1), mi)) {
      // The statistics blkparse prints at the end.
      if (f[0].rfind("CPU", 0) == 0 || f[0] == "Total" || f[0] == "Input") summary_ = true;
      if (summary_) return nullptr;
      return "not an event line";
    }
    if (n < 7) return "too few fields";
    if (ma > 0xfff || mi > 0xfffff)
      return "device number out of range (major <= 4095, minor <= 1048575)";
    uint64_t cpu, seq;
    if (!parse_u64_field(f[1], cpu) || !parse_u64_field(f[2], seq))
      return "bad cpu or sequence column (shifted columns?)";
    std::string_view act = f[5];
    if (!is_action(act)) return "bad action column (shifted columns?)";
    if (act.size() != 1 || (act[0] != action_ && act[0] != 'C' && act[0] != 'R')) return nullptr;
    int64_t t;
    uint64_t pid;
    if (!parse_seconds_ns(f[3], t) || t < 0) return "bad time";
    if (!parse_u64_field(f[4], pid)) return "bad pid";
    Op op;
    uint16_t flags;
    if (!parse_rwbs(f[6], op, flags)) return "bad rwbs";
    uint64_t sector = 0, sectors = 0;
    size_t rest = 7;
    if (const char* why = parse_extent(f, n, sector, sectors, rest)) return why;
    if (sectors > (UINT32_MAX >> 9)) return "length too large";
    if ((flags & kFlagPreflush) && sectors == 0) {
      // Kernels before 4.8 sent a flush as an empty write with a preflush ("FWS 0 + 0").
      op = Op::kFlush;
      flags &= static_cast<uint16_t>(~kFlagPreflush);
    }
    DevT dev = make_dev(static_cast<uint32_t>(ma), static_cast<uint32_t>(mi));
    if (dev_) {
      if (dev != *dev_) return nullptr;
    } else if (!first_dev_) {
      first_dev_ = dev;
    } else if (*first_dev_ != dev) {
      fatal_ = "the input mixes devices " + dev_to_string(*first_dev_) + " and " +
               dev_to_string(dev) + "; choose one with --device MAJ:MIN";
      return kFatalLine;
    }
    pairer_.set_now(static_cast<uint64_t>(t));
    std::string_view bracket = rest < n ? f[rest] : std::string_view{};
    if (act[0] == 'C' || act[0] == 'R') {
      end_event(act[0], dev, sector, static_cast<uint64_t>(t), bracket);
      return nullptr;
    }
    Request r;
    r.issue_ns = static_cast<uint64_t>(t);
    r.sector = sector;
    r.bytes = static_cast<uint32_t>(sectors * 512);
    r.dev = dev;
    r.part = dev;
    r.pid = static_cast<uint32_t>(pid);
    r.tgid = r.pid;
    r.op = op;
    r.flags = flags;
    if (const char* why = request_range_error(r)) return why;
    set_comm(r, bracket, line);
    pairer_.issue(r);
    return nullptr;
  }

  // "SECTOR + COUNT" or "SECTOR" after the rwbs field; `rest` becomes the
  // index of the field after them. nullptr, or why they are malformed.
  static const char* parse_extent(const std::string_view* f, size_t n, uint64_t& sector,
                                  uint64_t& sectors, size_t& rest) {
    if (n >= 10 && f[8] == "+") {
      if (!parse_u64_field(f[7], sector) || !parse_u64_field(f[9], sectors)) return "bad sector";
      rest = 10;
    } else if (n >= 8 && f[7][0] != '[') {
      if (!parse_u64_field(f[7], sector)) return "bad sector";
      rest = 8;
    }
    return nullptr;
  }

  // A completion (C, its error in brackets) or a requeue (R) of a request.
  void end_event(char act, DevT dev, uint64_t sector, uint64_t t, std::string_view bracket) {
    if (act == 'R') {
      pairer_.requeue(dev, sector);
      return;
    }
    int64_t err = 0;
    if (bracket.size() > 2) parse_i64_field(bracket.substr(1, bracket.size() - 2), err);
    pairer_.complete(dev, sector, t,
                     err > 0 ? -static_cast<int32_t>(err) : static_cast<int32_t>(err));
  }

  // The task name in brackets; it may contain blanks: everything up to the
  // line's last ']'.
  static void set_comm(Request& r, std::string_view bracket, std::string_view line) {
    if (bracket.size() <= 2 || bracket.front() != '[') return;
    size_t b = static_cast<size_t>(bracket.data() - line.data()) + 1;
    size_t e = line.rfind(']');
    std::string_view name = e != std::string_view::npos && e > b ? line.substr(b, e - b) : "";
    if (name != "(null)") r.set_comm(name);
  }

  LineReader in_;
  char action_;
  bool skip_bad_;
  std::optional<DevT> dev_, first_dev_;
  blktrace::Pairer pairer_;
  bool eof_ = false, summary_ = false;
  std::string fatal_;
  Counters counters_;
};

}  // namespace

Result<std::unique_ptr<RequestSource>> open_blkparse_source(const std::string& path,
                                                            const SourceOptions& opts) {
  if (opts.blktrace_action != 'Q' && opts.blktrace_action != 'D')
    return Error(ErrorKind::kUsage, "--action must be Q or D");
  std::optional<DevT> dev;
  if (!opts.device.empty()) {
    dev = parse_majmin(opts.device);
    if (!dev)
      return Error(ErrorKind::kUsage, "blkparse input: give --device as MAJ:MIN (e.g. 8:16)");
  }
  auto in = LineReader::open(path);
  if (!in) return in.error();
  std::unique_ptr<RequestSource> s = std::make_unique<BlkparseSource>(std::move(*in), opts, dev);
  return s;
}

}  // namespace blkrr
