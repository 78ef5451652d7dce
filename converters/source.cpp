#include "converters/source.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "converters/dataset_csv.h"
#include "converters/load_format.h"
#include "converters/tar_stream.h"
#include "converters/text_io.h"
#include "core/input_stream.h"
#include "core/time_span.h"

namespace blkrr {

RequestSource::~RequestSource() = default;

namespace {
struct FormatName {
  InputFormat f;
  std::string_view name;
};
constexpr FormatName kFormats[] = {
    {InputFormat::kAuto, "auto"},         {InputFormat::kNative, "native"},
    {InputFormat::kLoad, "load"},         {InputFormat::kBlktrace, "blktrace"},
    {InputFormat::kBlkparse, "blkparse"}, {InputFormat::kFioIolog, "fio"},
    {InputFormat::kMsrCsv, "msr"},        {InputFormat::kAlibaba, "alibaba"},
    {InputFormat::kTencent, "tencent"},   {InputFormat::kSystor, "systor17"},
    {InputFormat::kK5cloud, "k5cloud"},
};

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

// First 4 bytes of a blktrace event: magic 0x65617400 | version (little endian).
bool looks_like_blktrace(const std::string& path) {
  auto head = peek_input(path, 4);
  if (!head || head->size() != 4) return false;
  const auto* b = reinterpret_cast<const unsigned char*>(head->data());
  uint32_t magic = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  return (magic & 0xffffff00u) == 0x65617400u ||
         (__builtin_bswap32(magic) & 0xffffff00u) == 0x65617400u;
}

bool looks_like_msr(std::string_view l) {
  // Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
  size_t commas = 0;
  for (char c : l) commas += c == ',';
  if (commas != 6) return false;
  return l.find(",Read,") != std::string_view::npos ||
         l.find(",Write,") != std::string_view::npos || l.rfind("Timestamp,", 0) == 0;
}

bool looks_like_blkparse(std::string_view l) {
  // "  8,0    1        1     0.000000000  1234  Q   W 123 + 8 [fio]"
  std::string_view t = trim(l);
  size_t sp = t.find_first_of(" \t");
  if (sp == std::string_view::npos) return false;
  std::string_view dev = t.substr(0, sp);
  size_t comma = dev.find(',');
  if (comma == std::string_view::npos || comma == 0 || comma + 1 == dev.size()) return false;
  for (size_t i = 0; i < dev.size(); ++i)
    if (i != comma && (dev[i] < '0' || dev[i] > '9')) return false;
  return t.find('.') != std::string_view::npos;
}
}  // namespace

std::string_view input_format_name(InputFormat f) {
  for (const auto& n : kFormats)
    if (n.f == f) return n.name;
  return "?";
}

std::optional<InputFormat> parse_input_format(std::string_view s) {
  for (const auto& n : kFormats)
    if (n.name == s) return n.f;
  if (s == "blkrr") return InputFormat::kNative;
  if (s == "iolog") return InputFormat::kFioIolog;
  if (s == "csv") return InputFormat::kMsrCsv;
  return std::nullopt;
}

Result<InputFormat> detect_format(const std::string& path) {
  if (path != "-" && !file_exists(path)) return Error::system("cannot open " + path, ENOENT);
  // Pipes, FIFOs and "-" keep their first bytes for the reader after
  // detection (core/input_stream.h).
  auto head = peek_input(path, 8);
  if (!head) return head.error();
  if (is_native_trace(path)) return InputFormat::kNative;
  if (looks_like_blktrace(path)) return InputFormat::kBlktrace;
  if (looks_like_tar_gz(path)) return InputFormat::kTencent;  // hourly .tgz archives
  auto in = LineReader::open(path);
  if (!in) return in.error();
  std::string_view line;
  for (int i = 0; i < 200; ++i) {
    auto got = in->next(line);
    if (!got) return got.error();
    if (!*got) break;
    std::string_view t = trim(line);
    if (t.empty() || t.front() == '#') continue;  // comments tell nothing of the format
    if (t.rfind("fio version ", 0) == 0) return InputFormat::kFioIolog;
    if (t.find(';') != std::string_view::npos) return InputFormat::kLoad;
    if (looks_like_msr(t)) return InputFormat::kMsrCsv;
    if (auto d = detect_dataset_line(t)) return *d;
    if (looks_like_blkparse(t)) return InputFormat::kBlkparse;
  }
  return Error(
      ErrorKind::kBadInput,
      path +
          ": cannot tell the format (not a native trace, blktrace, blkparse text, fio iolog, "
          "MSR CSV, blkreplay load or a public dataset's CSV); name it with --from");
}

namespace {
// The recording id of a native trace that is a piece of a rotated recording, or "".
const std::string& recording_of(const RequestSource& s) {
  static const std::string none;
  const auto& h = s.info().trace_header;
  return h ? h->recording_id : none;
}

uint64_t piece_number(const RequestSource& s) {
  return s.info().trace_header ? s.info().trace_header->piece : 0;
}

// Pieces of one rotated recording given next to each other are read in the
// order of their sequence numbers (a shell's glob sorts them so already).
Status order_pieces(std::vector<std::unique_ptr<RequestSource>>& parts) {
  for (size_t i = 0; i < parts.size();) {
    size_t j = i + 1;
    const std::string& id = recording_of(*parts[i]);
    while (!id.empty() && j < parts.size() && recording_of(*parts[j]) == id) ++j;
    std::stable_sort(
        parts.begin() + static_cast<long>(i), parts.begin() + static_cast<long>(j),
        [](const auto& a, const auto& b) { return piece_number(*a) < piece_number(*b); });
    for (size_t k = i + 1; k < j; ++k)
      if (piece_number(*parts[k]) == piece_number(*parts[k - 1]))
        return Error(ErrorKind::kUsage,
                     parts[k]->info().paths.front() + " and " + parts[k - 1]->info().paths.front() +
                         " are the same piece " + std::to_string(piece_number(*parts[k])) +
                         " of recording " + id + "; give each once");
    i = j;
  }
  return {};
}

// Reads several sources one after the other. Inputs of different origin
// (loads to concatenate) are moved in time so that each follows the one
// before; the pieces of one rotated recording keep their times, and a gap
// between two of them (missing pieces, or a boundary that does not match)
// is counted, not hidden.
class ChainSource : public RequestSource {
 public:
  explicit ChainSource(std::vector<std::unique_ptr<RequestSource>> parts)
      : parts_(std::move(parts)) {
    info_ = parts_.front()->info();
    for (size_t i = 1; i < parts_.size(); ++i) {
      const auto& pi = parts_[i]->info();
      info_.paths.insert(info_.paths.end(), pi.paths.begin(), pi.paths.end());
      info_.sorted_by_issue =
          info_.sorted_by_issue && pi.sorted_by_issue && pi.format == info_.format;
    }
  }
  Result<bool> next(Request& out) override {
    while (cur_ < parts_.size()) {
      auto r = parts_[cur_]->next(out);
      if (!r) return r;
      if (!*r) {
        ++cur_;
        first_of_part_ = true;
        if (cur_ < parts_.size()) next_piece_ = same_recording(cur_ - 1, cur_);
        continue;
      }
      // An input that starts before the previous one ended is moved to
      // follow it (blkreplay's paste_together), so time never runs back;
      // the next piece of the same recording is not.
      if (first_of_part_) {
        first_of_part_ = false;
        if (!next_piece_) shift_ = out.issue_ns < end_ ? end_ - out.issue_ns : 0;
      }
      out.issue_ns += shift_;
      if (out.completed()) out.complete_ns += shift_;
      end_ = std::max(end_, out.issue_ns);
      return true;
    }
    return false;
  }
  Counters counters() const override {
    Counters sum = gaps_;
    for (const auto& p : parts_)
      for (const auto& [k, v] : p->counters())
        if (k != kPieceEnd) sum[k] += v;
    return sum;
  }

 private:
  static constexpr const char* kPieceEnd = "capture: piece_end_ns";

  // Whether part b continues part a's recording; a gap between them is counted.
  bool same_recording(size_t a, size_t b) {
    const std::string& id = recording_of(*parts_[a]);
    if (id.empty() || recording_of(*parts_[b]) != id) return false;
    const std::string gap = "gap between rotated pieces: " + parts_[a]->info().paths.front() +
                            " and " + parts_[b]->info().paths.front();
    const uint64_t pa = piece_number(*parts_[a]), pb = piece_number(*parts_[b]);
    if (pb != pa + 1) gaps_[gap + " (pieces missing)"] = pb - pa - 1;
    Counters ca = parts_[a]->counters();
    auto end = ca.find(kPieceEnd);
    const uint64_t start = parts_[b]->info().trace_header->piece_start_ns;
    if (pb == pa + 1 && end != ca.end() && end->second != start)
      gaps_[gap + " (ns between the first's end and the second's start)"] =
          start > end->second ? start - end->second : end->second - start;
    if (pb == pa + 1 && end == ca.end()) gaps_[gap + " (the first did not end cleanly)"] = 1;
    return true;
  }

  std::vector<std::unique_ptr<RequestSource>> parts_;
  size_t cur_ = 0;
  bool first_of_part_ = true, next_piece_ = false;
  uint64_t shift_ = 0, end_ = 0;
  Counters gaps_;
};

// "NAME" -> NAME.blktrace.0, NAME.blktrace.1, ... when those exist.
std::vector<std::string> expand_blktrace_base(const std::string& in) {
  std::vector<std::string> out;
  for (int cpu = 0; cpu < 4096; ++cpu) {
    std::string p = in + ".blktrace." + std::to_string(cpu);
    if (!file_exists(p)) {
      if (cpu > 0 && out.empty()) break;
      if (!out.empty() && cpu > static_cast<int>(out.size()) + 64) break;
      continue;
    }
    out.push_back(p);
  }
  return out;
}
}  // namespace

namespace {

// Every format's requests through one check of their times (TimeSpanCheck).
class CheckedSource : public RequestSource {
 public:
  explicit CheckedSource(std::unique_ptr<RequestSource> in) : in_(std::move(in)) {
    info_ = in_->info();
  }
  Result<bool> next(Request& out) override {
    auto got = in_->next(out);
    if (!got || !*got) return got;
    ++n_;
    if (out.issue_ns > static_cast<uint64_t>(INT64_MAX)) return true;  // range-checked by readers
    if (std::string bad = span_.problem(static_cast<int64_t>(out.issue_ns)); !bad.empty())
      return Error(ErrorKind::kBadInput,
                   join(info_.paths, " ") + ": request " + std::to_string(n_) + ": " + bad);
    return true;
  }
  Counters counters() const override { return in_->counters(); }

 private:
  std::unique_ptr<RequestSource> in_;
  TimeSpanCheck span_;
  uint64_t n_ = 0;
};

Result<std::unique_ptr<RequestSource>> open_unchecked(const std::vector<std::string>& inputs,
                                                      const SourceOptions& opts);

}  // namespace

std::vector<std::string> RequestSource::warnings() const {
  return source_warnings(counters());
}

namespace {
constexpr std::string_view kTruncated = "truncated trace (";
constexpr std::string_view kUnterminated = "last line without a newline";
constexpr std::string_view kGap = "gap between rotated pieces";
bool starts(const std::string& k, std::string_view p) {
  return k.rfind(p, 0) == 0;
}
}  // namespace

bool is_warning_counter(const std::string& key) {
  return starts(key, kTruncated) || starts(key, kUnterminated) || starts(key, kGap);
}

uint64_t rotated_piece_gaps(const Counters& c) {
  uint64_t n = 0;
  for (const auto& [k, v] : c)
    if (starts(k, kGap)) n += v;
  return n;
}

std::vector<std::string> source_warnings(const Counters& c) {
  std::vector<std::string> w;
  for (const auto& [k, v] : c) {
    if (v == 0 || !is_warning_counter(k)) continue;
    if (starts(k, kTruncated))
      w.push_back(k.substr(kTruncated.size(), k.size() - kTruncated.size() - 1));
    else if (starts(k, kUnterminated))
      w.push_back("the " + k);
    else
      w.push_back(k + ": " + std::to_string(v));
  }
  return w;
}

Result<std::unique_ptr<RequestSource>> open_source(const std::vector<std::string>& inputs,
                                                   const SourceOptions& opts) {
  auto src = open_unchecked(inputs, opts);
  if (!src) return src.error();
  std::unique_ptr<RequestSource> checked = std::make_unique<CheckedSource>(std::move(*src));
  return checked;
}

namespace {

Result<std::unique_ptr<RequestSource>> open_unchecked(const std::vector<std::string>& inputs,
                                                      const SourceOptions& opts) {
  if (inputs.empty()) return Error(ErrorKind::kUsage, "no input given");
  if (opts.repeat != 1) return open_repeated_source(inputs, opts);
  std::vector<std::string> blktrace_paths;
  std::vector<std::unique_ptr<RequestSource>> parts;
  for (const auto& in : inputs) {
    InputFormat f = opts.format;
    std::vector<std::string> expanded;
    if (in != "-" && !file_exists(in)) {
      expanded = expand_blktrace_base(in);
      if (expanded.empty())
        return Error(ErrorKind::kNotFound,
                     "cannot open " + in + ": no such file (nor " + in.c_str() + ".blktrace.0)");
      f = InputFormat::kBlktrace;
    } else if (f == InputFormat::kAuto) {
      auto d = detect_format(in);
      if (!d) return d.error();
      f = *d;
    }
    if (f == InputFormat::kBlktrace) {
      if (expanded.empty()) expanded.push_back(in);
      blktrace_paths.insert(blktrace_paths.end(), expanded.begin(), expanded.end());
      continue;
    }
    Result<std::unique_ptr<RequestSource>> src = Error(ErrorKind::kInternal, "");
    switch (f) {
      case InputFormat::kNative:
        src = open_native_source(in, opts);
        break;
      case InputFormat::kLoad:
        src = open_load_source(in, opts);
        break;
      case InputFormat::kBlkparse:
        src = open_blkparse_source(in, opts);
        break;
      case InputFormat::kFioIolog:
        src = open_fio_source(in, opts);
        break;
      case InputFormat::kMsrCsv:
        src = open_msr_source(in, opts);
        break;
      case InputFormat::kAlibaba:
        src = open_alibaba_source(in, opts);
        break;
      case InputFormat::kTencent:
        src = open_tencent_source(in, opts);
        break;
      case InputFormat::kSystor:
        src = open_systor_source(in, opts);
        break;
      case InputFormat::kK5cloud:
        src = open_k5cloud_source(in, opts);
        break;
      default:
        return Error(ErrorKind::kInternal, in + ": unknown input format");
    }
    if (!src) return src.error();
    parts.push_back(std::move(*src));
  }
  if (!blktrace_paths.empty()) {
    if (!parts.empty())
      return Error(ErrorKind::kUsage,
                   "blktrace inputs cannot be mixed with inputs of other formats");
    return open_blktrace_source(blktrace_paths, opts);
  }
  if (parts.size() == 1) return std::move(parts.front());
  BLKRR_TRY(order_pieces(parts));
  std::unique_ptr<RequestSource> chain = std::make_unique<ChainSource>(std::move(parts));
  return chain;
}

}  // namespace

// ---------------------------------------------------------------------------
// blkreplay loads and replay results.

namespace {
class LoadSource : public RequestSource {
 public:
  explicit LoadSource(LoadReader r) : r_(std::move(r)) {
    info_.format = InputFormat::kLoad;
    info_.paths = {r_.path()};
    info_.preamble = r_.preamble();
    info_.has_completion = r_.kind() == LoadKind::kReplay;
    // Replay results are in completion order.
    info_.sorted_by_issue = r_.kind() == LoadKind::kLoad;
  }
  Result<bool> next(Request& out) override {
    auto got = r_.next(rec_);
    if (!got || !*got) return got;
    out = load_to_request(rec_);
    return true;
  }
  Counters counters() const override { return r_.counters(); }

 private:
  LoadReader r_;
  LoadRecord rec_;
};
}  // namespace

Result<std::unique_ptr<RequestSource>> open_load_source(const std::string& path,
                                                        const SourceOptions& opts) {
  if (!opts.device.empty())
    return Error(ErrorKind::kUsage,
                 path + ": a blkreplay load has no devices; --device does not apply");
  LoadReadOptions lo;
  lo.skip_bad = opts.skip_bad;
  auto r = LoadReader::open(path, lo);
  if (!r) return r.error();
  std::unique_ptr<RequestSource> s = std::make_unique<LoadSource>(std::move(*r));
  return s;
}

}  // namespace blkrr
