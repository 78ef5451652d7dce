// blktrace binary captures as a RequestSource (per-CPU files merged by time).
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <queue>
#include <unordered_map>

#include "converters/blktrace.h"
#include "converters/source.h"
#include "core/args.h"
#include "core/device.h"
#include "core/input_stream.h"

namespace blkrr {

namespace blktrace {

namespace {
uint32_t rd32(const unsigned char* p, bool swap) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return swap ? __builtin_bswap32(v) : v;
}
uint64_t rd64(const unsigned char* p, bool swap) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return swap ? __builtin_bswap64(v) : v;
}
uint16_t rd16(const unsigned char* p, bool swap) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return swap ? __builtin_bswap16(v) : v;
}
}  // namespace

Event decode(const unsigned char* p, bool swap) {
  Event e;
  e.magic = rd32(p, swap);
  e.sequence = rd32(p + 4, swap);
  e.time = rd64(p + 8, swap);
  e.sector = rd64(p + 16, swap);
  e.bytes = rd32(p + 24, swap);
  e.action = rd32(p + 28, swap);
  e.pid = rd32(p + 32, swap);
  e.device = rd32(p + 36, swap);
  e.cpu = rd32(p + 40, swap);
  e.error = rd16(p + 44, swap);
  e.pdu_len = rd16(p + 46, swap);
  return e;
}

void op_and_flags(const Event& e, Op& op, uint16_t& flags) {
  uint32_t c = e.cat();
  flags = 0;
  if (c & kCatDiscard) {
    op = Op::kDiscard;
  } else if ((c & kCatFlush) && e.bytes == 0) {
    op = Op::kFlush;
  } else if (c & kCatWrite) {
    op = Op::kWrite;
    if (c & kCatFlush) flags |= kFlagPreflush;
  } else if (c & kCatPc) {
    op = Op::kOther;
  } else {
    op = Op::kRead;
  }
  if (c & kCatSync) flags |= kFlagSync;
  if (c & kCatMeta) flags |= kFlagMeta;
  if (c & kCatFua) flags |= kFlagFua;
  if (c & kCatAhead) flags |= kFlagReadahead;
}

}  // namespace blktrace

namespace {

using blktrace::Event;

// One per-CPU file, read through a large buffer.
class CpuFile {
 public:
  static Result<CpuFile> open(const std::string& path) {
    CpuFile f;
    f.path_ = path;
    auto in = open_input_stdio(path);  // directories refused, pipes streamed
    if (!in) return in.error();
    f.f_ = std::move(*in);
    // 1 MiB, or less for a smaller file (fill() grows it for a long event).
    struct stat st;
    size_t want = 1 << 20;
    if (::fstat(::fileno(f.f_.get()), &st) == 0 && st.st_size >= 0)
      want = std::clamp<size_t>(static_cast<size_t>(st.st_size), 1 << 16, want);
    f.buf_.resize(want);
    return f;
  }
  // Reads the next event into cur(); false at a clean end of file.
  Result<bool> advance() {
    if (!fill(blktrace::kEventSize)) {
      if (read_error_) return Error::system("cannot read " + path_, read_error_);
      if (end_ == pos_) return false;
      return Error(ErrorKind::kBadInput,
                   path_ + ": truncated event at byte offset " + std::to_string(offset_) +
                       " (file cut short?); --skip-bad keeps the events before it");
    }
    if (!checked_) {
      uint32_t m = blktrace::decode(buf_.data() + pos_, false).magic;
      swap_ = (m & 0xffffff00u) != blktrace::kMagic;
      checked_ = true;
    }
    cur_ = blktrace::decode(buf_.data() + pos_, swap_);
    if ((cur_.magic & 0xffffff00u) != blktrace::kMagic) {
      return Error(ErrorKind::kBadInput, path_ + ": bad magic 0x" + hex(cur_.magic) +
                                             " at byte offset " + std::to_string(offset_) +
                                             " (not a blktrace file, or corrupt)");
    }
    if ((cur_.magic & 0xff) != blktrace::kVersion) {
      return Error(ErrorKind::kUnsupported,
                   path_ + ": blktrace version " + std::to_string(cur_.magic & 0xff) +
                       " at byte offset " + std::to_string(offset_) +
                       " (this reader knows version " + std::to_string(blktrace::kVersion) + ")");
    }
    size_t total = blktrace::kEventSize + cur_.pdu_len;
    if (!fill(total)) {
      return Error(ErrorKind::kBadInput,
                   path_ + ": truncated event payload at byte offset " + std::to_string(offset_) +
                       " (file cut short?); --skip-bad keeps the events before it");
    }
    // fill() may have moved or grown the buffer: take the address after it.
    const unsigned char* p = buf_.data() + pos_;
    pdu_.assign(reinterpret_cast<const char*>(p) + blktrace::kEventSize, cur_.pdu_len);
    if (pos_ + total > end_) return Error(ErrorKind::kInternal, path_ + ": internal buffer error");
    pos_ += total;
    cur_offset_ = offset_;
    offset_ += total;
    return true;
  }
  const Event& cur() const { return cur_; }
  const std::string& pdu() const { return pdu_; }
  const std::string& path() const { return path_; }
  uint64_t offset() const { return cur_offset_; }  // where cur() starts in the file

 private:
  CpuFile() = default;
  static std::string hex(uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "%08x", v);
    return b;
  }
  // Makes at least n bytes available at pos_; false at end of file.
  bool fill(size_t n) {
    if (end_ - pos_ >= n) return true;
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
    if (buf_.size() < n) buf_.resize(n);
    end_ += std::fread(buf_.data() + end_, 1, buf_.size() - end_, f_.get());
    if (std::ferror(f_.get())) read_error_ = errno ? errno : EIO;
    return end_ - pos_ >= n;
  }

  std::string path_;
  FilePtr f_;
  std::vector<unsigned char> buf_;
  size_t pos_ = 0, end_ = 0;
  uint64_t offset_ = 0, cur_offset_ = 0;
  bool checked_ = false, swap_ = false;
  int read_error_ = 0;
  Event cur_;
  std::string pdu_;
};

class BlktraceSource : public RequestSource {
 public:
  BlktraceSource(std::vector<CpuFile> files, const SourceOptions& o, std::optional<DevT> dev)
      : files_(std::move(files)),
        action_(o.blktrace_action == 'Q' ? blktrace::kQueue : blktrace::kIssue),
        skip_bad_(o.skip_bad),
        dev_(dev),
        pairer_(action_ == blktrace::kIssue) {
    info_.format = InputFormat::kBlktrace;
    for (const auto& f : files_) info_.paths.push_back(f.path());
    info_.absolute_time = true;
    info_.sorted_by_issue = true;
    info_.has_completion = action_ == blktrace::kIssue;
  }

  Status start() {
    for (size_t i = 0; i < files_.size(); ++i) BLKRR_TRY(push(i));
    return {};
  }

  Result<bool> next(Request& out) override {
    for (;;) {
      if (pairer_.pop(out, heap_.empty())) return true;
      if (heap_.empty()) return false;
      auto [t, idx] = heap_.top();
      heap_.pop();
      CpuFile& f = files_[idx];
      Status st = handle(f.cur(), f.pdu(), f.path(), f.offset());
      if (!st) return st.error();
      BLKRR_TRY(push(idx));
    }
  }

  Counters counters() const override {
    Counters c = counters_;
    for (const auto& [k, v] : pairer_.counters()) c[k] += v;
    return c;
  }

 private:
  Status push(size_t idx) {
    auto got = files_[idx].advance();
    if (!got) {
      if (!skip_bad_) return got.error();
      ++counters_["lines_skipped"];
      ++counters_["skipped: " + got.error().message];
      return {};
    }
    if (*got) heap_.push({files_[idx].cur().time, idx});
    return {};
  }

  Status handle(const Event& e, const std::string& pdu, const std::string& path, uint64_t off) {
    pairer_.set_now(e.time);
    uint16_t act = e.act();
    if (e.cat() & blktrace::kCatNotify) {
      if (act == blktrace::kNotifyProcess && !pdu.empty()) {
        if (comm_.size() >= kMaxComms) comm_.clear();  // bounded: pids are reused anyway
        comm_[e.pid] = std::string(pdu.c_str(), strnlen(pdu.data(), pdu.size()));
      }
      return {};
    }
    if (act != action_ && act != blktrace::kComplete && act != blktrace::kRequeue) return {};
    if (dev_) {
      if (e.device != *dev_) return {};
    } else if (!first_dev_) {
      first_dev_ = e.device;
    } else if (*first_dev_ != e.device) {
      return Error(ErrorKind::kBadInput,
                   path + ": byte offset " + std::to_string(off) + ": the capture mixes devices " +
                       dev_to_string(*first_dev_) + " and " + dev_to_string(e.device) +
                       "; choose one with --device MAJ:MIN");
    }
    if (act == blktrace::kComplete) {
      pairer_.complete(e.device, e.sector, e.time, -static_cast<int32_t>(e.error));
      return {};
    }
    if (act == blktrace::kRequeue) {
      pairer_.requeue(e.device, e.sector);
      return {};
    }
    Request r;
    r.issue_ns = e.time;
    r.sector = e.sector;
    r.bytes = e.bytes;
    r.dev = e.device;
    r.part = e.device;
    r.pid = e.pid;
    r.tgid = e.pid;
    blktrace::op_and_flags(e, r.op, r.flags);
    if (r.op == Op::kOther) ++counters_["passthrough (pc) requests"];
    if (const char* why = request_range_error(r)) {
      if (!skip_bad_)
        return Error(ErrorKind::kBadInput, path + ": byte offset " + std::to_string(off) + ": " +
                                               why + " (sector " + std::to_string(r.sector) + ", " +
                                               std::to_string(r.bytes) +
                                               " bytes); --skip-bad skips such events");
      ++counters_["lines_skipped"];
      ++counters_[std::string("skipped: ") + why];
      return {};
    }
    auto c = comm_.find(e.pid);
    if (c != comm_.end()) r.set_comm(c->second);
    pairer_.issue(r);
    return {};
  }

  std::vector<CpuFile> files_;
  uint16_t action_;
  bool skip_bad_;
  std::optional<DevT> dev_, first_dev_;
  using HeapItem = std::pair<uint64_t, size_t>;
  std::priority_queue<HeapItem, std::vector<HeapItem>, std::greater<HeapItem>> heap_;
  blktrace::Pairer pairer_;
  static constexpr size_t kMaxComms = 1u << 16;
  std::unordered_map<uint32_t, std::string> comm_;
  Counters counters_;
};

}  // namespace

Result<std::unique_ptr<RequestSource>> open_blktrace_source(const std::vector<std::string>& paths,
                                                            const SourceOptions& opts) {
  if (opts.blktrace_action != 'Q' && opts.blktrace_action != 'D')
    return Error(ErrorKind::kUsage, "--action must be Q or D");
  std::optional<DevT> dev;
  if (!opts.device.empty()) dev = parse_majmin(opts.device);
  if (!opts.device.empty() && !dev) {
    auto sel = resolve_device(opts.device);
    if (!sel) {
      return Error(ErrorKind::kUsage, "blktrace input: cannot resolve --device " + opts.device +
                                          " (give it as MAJ:MIN, e.g. 8:16)");
    }
    dev = sel->part ? sel->part->dev : sel->disk;
  }
  std::vector<CpuFile> files;
  for (const auto& p : paths) {
    auto f = CpuFile::open(p);
    if (!f) return f.error();
    files.push_back(std::move(*f));
  }
  auto src = std::make_unique<BlktraceSource>(std::move(files), opts, dev);
  BLKRR_TRY(src->start());
  std::unique_ptr<RequestSource> s = std::move(src);
  return s;
}

}  // namespace blkrr
