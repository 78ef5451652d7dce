#include "converters/sink.h"

#include <cstring>

#include "converters/load_format.h"
#include "converters/text_io.h"

namespace blkrr {

RequestSink::~RequestSink() = default;

namespace {
struct Name {
  OutputFormat f;
  std::string_view name;
};
constexpr Name kNames[] = {{OutputFormat::kLoad, "load"},
                           {OutputFormat::kFio, "fio"},
                           {OutputFormat::kCsv, "csv"},
                           {OutputFormat::kJson, "json"},
                           {OutputFormat::kNative, "native"}};

bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

// ---- blkreplay load ----
class LoadSink : public RequestSink {
 public:
  explicit LoadSink(LoadWriter w) : w_(std::move(w)) {}
  bool expresses(Op op) const override { return format_expresses(OutputFormat::kLoad, op); }
  Status write(const OutRecord& rec) override {
    request_to_load(*rec.r, 0, lr_);
    lr_.start_ns = rec.start_ns;
    return w_.write(lr_);
  }
  Status close(const Counters&) override { return w_.close(); }

 private:
  LoadWriter w_;
  LoadRecord lr_;
};

// ---- fio iolog v3 ----
class FioSink : public RequestSink {
 public:
  FioSink(OutFile out, std::string file) : out_(std::move(out)), file_(std::move(file)) {
    out_.append("fio version 3 iolog\n0 " + file_ + " add\n0 " + file_ + " open\n");
  }
  bool expresses(Op op) const override { return format_expresses(OutputFormat::kFio, op); }
  Status write(const OutRecord& rec) override {
    const Request& r = *rec.r;
    uint64_t us = rec.start_ns > 0 ? static_cast<uint64_t>(rec.start_ns) / 1000 : 0;
    last_us_ = std::max(last_us_, us);
    char* p = out_.reserve(file_.size() + 80);
    p = fmt_u64(p, us);
    *p++ = ' ';
    p = put_str(p, file_);
    const char* act = r.op == Op::kRead    ? " read "
                      : r.op == Op::kWrite ? " write "
                      : r.op == Op::kFlush ? " sync "
                                           : " trim ";
    p = put_str(p, act);
    if (r.op == Op::kFlush) {
      p = put_str(p, "0 0");
    } else {
      p = fmt_u64(p, r.sector * 512);
      *p++ = ' ';
      p = fmt_u64(p, r.bytes);
    }
    *p++ = '\n';
    out_.commit(p);
    return out_.maybe_flush();
  }
  Status close(const Counters&) override {
    out_.append(std::to_string(last_us_) + " " + file_ + " close\n");
    return out_.close();
  }

 private:
  OutFile out_;
  std::string file_;
  uint64_t last_us_ = 0;
};

// ---- native .blkrr ----
class NativeSink : public RequestSink {
 public:
  explicit NativeSink(TraceWriter w) : w_(std::move(w)) {}
  bool expresses(Op) const override { return true; }
  Status write(const OutRecord& rec) override {
    r_ = *rec.r;
    r_.issue_ns = static_cast<uint64_t>(static_cast<int64_t>(r_.issue_ns) + rec.shift_ns);
    if (r_.completed())
      r_.complete_ns = static_cast<uint64_t>(static_cast<int64_t>(r_.complete_ns) + rec.shift_ns);
    return w_.append(r_);
  }
  Status close(const Counters& c) override { return w_.close(c); }

 private:
  TraceWriter w_;
  Request r_;
};
}  // namespace

std::string_view output_format_name(OutputFormat f) {
  for (const auto& n : kNames)
    if (n.f == f) return n.name;
  return "?";
}

bool format_expresses(OutputFormat f, Op op) {
  switch (f) {
    case OutputFormat::kLoad:
      return op == Op::kRead || op == Op::kWrite;
    case OutputFormat::kFio:
      return op == Op::kRead || op == Op::kWrite || op == Op::kFlush || op == Op::kDiscard;
    default:
      return true;
  }
}

std::optional<OutputFormat> parse_output_format(std::string_view s) {
  for (const auto& n : kNames)
    if (n.name == s) return n.f;
  if (s == "blkrr") return OutputFormat::kNative;
  if (s == "iolog") return OutputFormat::kFio;
  if (s == "jsonl") return OutputFormat::kJson;
  return std::nullopt;
}

OutputFormat output_format_for_path(const std::string& path) {
  std::string p = ends_with(path, ".gz") ? path.substr(0, path.size() - 3) : path;
  if (ends_with(p, ".blkrr")) return OutputFormat::kNative;
  if (ends_with(p, ".iolog")) return OutputFormat::kFio;
  if (ends_with(p, ".csv")) return OutputFormat::kCsv;
  if (ends_with(p, ".json") || ends_with(p, ".jsonl")) return OutputFormat::kJson;
  return OutputFormat::kLoad;
}

std::string unknown_output_extension(const std::string& path) {
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (ends_with(base, ".gz")) base.resize(base.size() - 3);
  size_t dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0) return "";
  std::string ext = base.substr(dot);
  for (const char* known :
       {".blkrr", ".iolog", ".csv", ".json", ".jsonl", ".load", ".replay", ".txt"})
    if (ext == known) return "";
  return ext;
}

Result<std::unique_ptr<RequestSink>> open_sink(const std::string& path, const SinkOptions& opts) {
  std::unique_ptr<RequestSink> s;
  switch (opts.format) {
    case OutputFormat::kLoad: {
      auto w = LoadWriter::create(path, LoadKind::kLoad, opts.preamble, opts.gz_level);
      if (!w) return w.error();
      s = std::make_unique<LoadSink>(std::move(*w));
      break;
    }
    case OutputFormat::kFio: {
      auto out = OutFile::create(path, opts.gz_level);
      if (!out) return out.error();
      if (opts.fio_file.find_first_of(" \t\n") != std::string::npos)
        return Error(ErrorKind::kUsage,
                     "the fio file name must not contain blanks: '" + opts.fio_file + "'");
      s = std::make_unique<FioSink>(std::move(*out), opts.fio_file);
      break;
    }
    case OutputFormat::kNative: {
      if (path == "-")
        return Error(ErrorKind::kUsage, "native traces cannot go to standard output; name a file");
      TraceWriter::Options wo;
      wo.atomic = true;  // a failed conversion leaves no partial trace
      auto w = TraceWriter::create(path, opts.header, wo);
      if (!w) return w.error();
      s = std::make_unique<NativeSink>(std::move(*w));
      break;
    }
    case OutputFormat::kCsv:
    case OutputFormat::kJson:
      return open_text_sink(path, opts);
  }
  return s;
}

}  // namespace blkrr
