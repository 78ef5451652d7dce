// Native trace format, version 1. Layout (all integers little-endian):
//   "BLKRRTRC" u16 major u16 minor u32 header_len header_json u32 crc32(header_json)
//   chunks: "BLKC" u32 nrec u32 raw_len u32 comp_len u32 crc32(comp) comp[comp_len]
//           ("BLKB" in 1.0 files: the same without column elision)
//           "TRLR" u32 json_len u32 crc32(json) json            (last chunk)
// A block's raw payload is nrec fixed 84-byte records (record_codec.h),
// byte-shuffled so that zlib sees similar bytes together.
#include "core/trace_format.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <libdeflate.h>
#include <stdio_ext.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/input_stream.h"
#include "core/record_codec.h"
#include "core/trace_header_json.h"

namespace blkrr {
namespace {

constexpr char kMagic[8] = {'B', 'L', 'K', 'R', 'R', 'T', 'R', 'C'};
constexpr uint32_t kBlockMagic = 0x424b4c42;     // "BLKB": 1.0, shuffled records
constexpr uint32_t kColBlockMagic = 0x434b4c42;  // "BLKC": 1.1, shuffled + column elision
constexpr uint32_t kTrailerMagic = 0x524c5254;   // "TRLR"
constexpr uint32_t kMaxHeader = 64u << 20;
constexpr uint32_t kMaxBlockRecords = 1u << 20;

uint32_t crc(const void* p, size_t n) {
  return libdeflate_crc32(0, p, n);  // the same CRC-32 as zlib's, faster
}

void put32(std::vector<uint8_t>& v, uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
}
uint32_t get32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// A trace that is malformed: "'PATH'" followed by `what` (": corrupt block at offset N").
Error bad_trace(const std::string& path, const std::string& what) {
  return Error(ErrorKind::kBadInput, "'" + path + "'" + what);
}

std::string at_offset(uint64_t off) {
  return " at offset " + std::to_string(off);
}

}  // namespace

// ---------------------------------------------------------------- writer

Result<TraceWriter> TraceWriter::create(const std::string& path, const TraceHeader& header,
                                        Options opts) {
  TraceWriter w;
  w.path_ = path;
  w.opts_ = opts;
  if (w.opts_.records_per_block == 0 || w.opts_.records_per_block > kMaxBlockRecords)
    w.opts_.records_per_block = 8192;
  if (opts.atomic) {
    auto af = AtomicFile::create(path);
    if (!af) return af.error();
    w.file_.emplace(std::move(*af));
    int fd = w.file_->dup_fd();
    w.f_.reset(fd < 0 ? nullptr : ::fdopen(fd, "wb"));
    if (!w.f_ && fd >= 0) ::close(fd);
  } else if (path == "-") {  // standard output (record -o -)
    int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    w.f_.reset(fd < 0 ? nullptr : ::fdopen(fd, "wb"));
    if (!w.f_ && fd >= 0) ::close(fd);
  } else {
    w.f_.reset(std::fopen(path.c_str(), "wbx"));
    if (!w.f_ && errno == EEXIST) w.f_.reset(std::fopen(path.c_str(), "wb"));
  }
  if (!w.f_)
    return Error::system("cannot create trace '" + path + "'", errno,
                         "check the directory exists and is writable");
  std::string js = header_to_json(header).dump();
  std::vector<uint8_t> buf(kMagic, kMagic + 8);
  buf.push_back(kTraceVersionMajor & 0xff);
  buf.push_back(kTraceVersionMajor >> 8);
  buf.push_back(kTraceVersionMinor & 0xff);
  buf.push_back(kTraceVersionMinor >> 8);
  put32(buf, static_cast<uint32_t>(js.size()));
  buf.insert(buf.end(), js.begin(), js.end());
  put32(buf, crc(js.data(), js.size()));
  auto st = w.write_raw(buf.data(), buf.size());
  if (!st) return st.error();
  w.pending_.reserve(w.opts_.records_per_block);
  return w;
}

TraceWriter::~TraceWriter() {
  // Error paths that never reached close(): keep the records, omit the trailer
  // (a reader reports the recording as not ended cleanly). An atomic writer
  // removes its temporary file instead (AtomicFile's destructor).
  if (f_ && !closed_ && !file_) (void)flush();
}

// Writes n bytes and flushes them to the file: bytes_ counts them only when
// both succeeded. A failure (a full disk) marks the file for cut_back().
Status TraceWriter::write_raw(const void* p, size_t n) {
  if ((n && std::fwrite(p, 1, n, f_.get()) != n) || std::fflush(f_.get()) != 0) {
    int e = errno;
    cut_back_needed_ = true;
    return Error::system("writing trace '" + path_ + "'", e,
                         "everything up to the last complete block is kept");
  }
  bytes_ += n;
  return {};
}

// After a failed write: drops what the failed block left in the stdio buffer
// and in the file, so that the file ends at its last complete block again and
// the block can be written once more (after room was made). A pipe cannot go
// back: the failure stays.
Status TraceWriter::cut_back() {
  struct stat st;
  const int fd = ::fileno(f_.get());
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Error(ErrorKind::kIo,
                 "trace '" + path_ + "': a failed write to a pipe cannot be retried");
  __fpurge(f_.get());
  std::clearerr(f_.get());
  if (::ftruncate(fd, static_cast<off_t>(bytes_)) != 0 ||
      ::fseeko(f_.get(), static_cast<off_t>(bytes_), SEEK_SET) != 0)
    return Error::system("cutting trace '" + path_ + "' back to its last complete block", errno);
  cut_back_needed_ = false;
  written_back_ = std::min(written_back_, bytes_);
  return {};
}

Status TraceWriter::append(const Request& r) {
  if (closed_) return Error(ErrorKind::kInternal, "trace '" + path_ + "' is already closed");
  pending_.push_back(r);
  if (pending_.size() >= opts_.records_per_block) return flush();
  return {};
}

void DecompressorDeleter::operator()(void* d) const {
  libdeflate_free_decompressor(static_cast<libdeflate_decompressor*>(d));
}

void ZStreamDeleter::operator()(void* z) const {
  auto* zs = static_cast<z_stream*>(z);
  deflateEnd(zs);
  delete zs;
}

int TraceWriter::deflate_block(uint8_t* dst, unsigned long* dst_len,
                               const std::vector<uint8_t>& in) {
  if (!opts_.rle)
    return compress2(dst, dst_len, in.data(), static_cast<uLong>(in.size()), opts_.zlib_level);
  if (!zs_) {
    auto* zs = new z_stream{};
    if (int r = deflateInit2(zs, 1, Z_DEFLATED, 15, 8, Z_RLE); r != Z_OK) {
      delete zs;
      return r;
    }
    zs_.reset(zs);
  }
  auto* zs = static_cast<z_stream*>(zs_.get());
  if (int r = deflateReset(zs); r != Z_OK) return r;
  zs->next_in = const_cast<Bytef*>(in.data());
  zs->avail_in = static_cast<uInt>(in.size());
  zs->next_out = dst;
  zs->avail_out = static_cast<uInt>(*dst_len);
  int r = deflate(zs, Z_FINISH);
  if (r != Z_STREAM_END) return r == Z_OK ? Z_BUF_ERROR : r;
  *dst_len = zs->total_out;
  return Z_OK;
}

Status TraceWriter::flush() {
  if (!f_) return Error(ErrorKind::kInternal, "trace '" + path_ + "' is not open");
  if (cut_back_needed_) BLKRR_TRY(cut_back());
  if (pending_.empty()) {
    if (std::fflush(f_.get()) != 0) return Error::system("writing trace '" + path_ + "'", errno);
    return {};
  }
  encode_records(pending_, scratch_);
  const std::vector<uint8_t>* raw = &scratch_;
  if (opts_.column_elision) {
    pack_columns(scratch_, pending_.size(), columns_);
    raw = &columns_;
  }
  uLongf comp_len = compressBound(static_cast<uLong>(raw->size()));
  packed_.resize(20 + comp_len);
  int zr = deflate_block(packed_.data() + 20, &comp_len, *raw);
  if (zr != Z_OK)
    return Error(ErrorKind::kFailed,
                 "compressing a block of '" + path_ + "' failed (zlib " + std::to_string(zr) + ")");
  std::vector<uint8_t> hdr;
  put32(hdr, opts_.column_elision ? kColBlockMagic : kBlockMagic);
  put32(hdr, static_cast<uint32_t>(pending_.size()));
  put32(hdr, static_cast<uint32_t>(raw->size()));
  put32(hdr, static_cast<uint32_t>(comp_len));
  put32(hdr, crc(packed_.data() + 20, comp_len));
  std::memcpy(packed_.data(), hdr.data(), 20);
  auto st = write_raw(packed_.data(), 20 + comp_len);
  if (!st) return st;  // the records stay pending: flush() again retries
  records_ += pending_.size();
  pending_.clear();
  if (opts_.own_writeback && bytes_ > written_back_) {
    // Whole pages only; a pipe or another file without it says ESPIPE/EINVAL: nothing to do.
    const uint64_t from = written_back_ & ~uint64_t{4095}, to = bytes_ & ~uint64_t{4095};
    if (to > from && ::sync_file_range(::fileno(f_.get()), static_cast<off64_t>(from),
                                       static_cast<off64_t>(to - from), SYNC_FILE_RANGE_WRITE) == 0)
      written_back_ = to;
  }
  return {};
}

Status TraceWriter::close(const Counters& counters) {
  if (closed_) return {};
  auto st = flush();
  if (!st) return st;
  std::string js = nlohmann::json(counters).dump();
  std::vector<uint8_t> buf;
  put32(buf, kTrailerMagic);
  put32(buf, static_cast<uint32_t>(js.size()));
  put32(buf, crc(js.data(), js.size()));
  buf.insert(buf.end(), js.begin(), js.end());
  st = write_raw(buf.data(), buf.size());
  if (!st) return st;
  closed_ = true;
  FILE* f = f_.release();
  if (std::fclose(f) != 0) {
    if (file_) file_->abort();
    return Error::system("closing trace '" + path_ + "'", errno);
  }
  return file_ ? file_->commit() : Status{};
}

// ---------------------------------------------------------------- reader

std::string recording_id_of(const std::string& path) {
  // Regular files only: a pipe or standard input is read once, by its reader.
  struct stat st;
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  if (!is_native_trace(path)) return "";
  auto rd = TraceReader::open(path);
  return rd ? rd->header().recording_id : std::string();
}

bool is_native_trace(const std::string& path) {
  auto head = peek_input(path, 8);
  return head && head->size() == 8 && std::memcmp(head->data(), kMagic, 8) == 0;
}

Result<TraceReader> TraceReader::open(const std::string& given) {
  TraceReader r;
  const std::string& path = given;
  r.path_ = given;
  auto f = open_input_stdio(given);  // pipes and "-" streamed (core/input_stream.h)
  if (!f) return f.error().context("cannot open trace '" + path + "'");
  r.f_ = std::move(*f);
  if (!input_is_stream(given)) {
    std::fseek(r.f_.get(), 0, SEEK_END);
    r.file_size_ = static_cast<uint64_t>(std::ftell(r.f_.get()));
    std::fseek(r.f_.get(), 0, SEEK_SET);
  }
  uint8_t pre[16];
  if (std::fread(pre, 1, 16, r.f_.get()) != 16 || std::memcmp(pre, kMagic, 8) != 0)
    return bad_trace(path, " is not a blkrr trace (bad magic at offset 0)");
  uint16_t major = static_cast<uint16_t>(pre[8] | pre[9] << 8);
  uint16_t minor = static_cast<uint16_t>(pre[10] | pre[11] << 8);
  if (major > kTraceVersionMajor)
    return Error(ErrorKind::kUnsupported,
                 "'" + path + "' has trace format " + std::to_string(major) + "." +
                     std::to_string(minor) + ", newer than this blkrr reads (" +
                     std::to_string(kTraceVersionMajor) + ".x): upgrade blkrr");
  if (major < kTraceVersionMajor)
    return Error(ErrorKind::kUnsupported, "'" + path + "' has trace format " +
                                              std::to_string(major) + "." + std::to_string(minor) +
                                              ", too old for this blkrr (reads " +
                                              std::to_string(kTraceVersionMajor) + ".x)");
  uint32_t hlen = get32(pre + 12);
  if (hlen > kMaxHeader || 16 + uint64_t{hlen} + 4 > r.file_size_)
    return bad_trace(path, ": header at offset 16 is truncated or corrupt (length " +
                               std::to_string(hlen) + ", file size " +
                               std::to_string(r.file_size_) + ")");
  std::string js(hlen, '\0');
  uint8_t c4[4];
  if (std::fread(js.data(), 1, hlen, r.f_.get()) != hlen || std::fread(c4, 1, 4, r.f_.get()) != 4)
    return bad_trace(path, ": cannot read header at offset 16");
  if (crc(js.data(), js.size()) != get32(c4))
    return bad_trace(path, ": header at offset 16 is corrupt (checksum mismatch)");
  if (json_nesting_depth(js) > kMaxJsonDepth)
    return bad_trace(path, ": header at offset 16 is nested deeper than " +
                               std::to_string(kMaxJsonDepth) + " levels (not written by blkrr)");
  auto j = parse_json_unique_keys(js);
  if (!j) return bad_trace(path, ": header at offset 16 is " + j.error().message);
  auto h = header_from_json(*j);
  if (!h) return h.error().context("'" + path + "'");
  r.header_ = std::move(h.value());
  return r;
}

bool TraceReader::at_end() {
  int c = std::fgetc(f_.get());
  if (c == EOF) return true;
  std::ungetc(c, f_.get());
  return false;
}

Result<bool> TraceReader::cut_off(const std::string& what, uint64_t off) {
  warning_ = "'" + path_ + "' ends inside " + what + at_offset(off) +
             " (recording cut off?): read " + std::to_string(records_) +
             " records; counters unavailable";
  done_ = true;
  return false;
}

Result<bool> TraceReader::read_trailer(uint64_t off, const uint8_t* h) {
  uint32_t len = get32(h + 4);
  if (len > kMaxHeader)
    return bad_trace(
        path_, ": corrupt trailer" + at_offset(off) + " (length " + std::to_string(len) + ")");
  if (off + 12 + len > file_size_) return cut_off("the trailer", off);
  std::string js(len, '\0');
  if (std::fread(js.data(), 1, len, f_.get()) != len) return cut_off("the trailer", off);
  if (crc(js.data(), len) != get32(h + 8))
    return bad_trace(path_, ": corrupt trailer" + at_offset(off) + " (checksum mismatch)");
  if (json_nesting_depth(js) > kMaxJsonDepth)
    return bad_trace(path_, ": trailer" + at_offset(off) + " is nested too deeply");
  if (file_size_ == kUnknownSize ? !at_end() : off + 12 + len != file_size_)
    return bad_trace(
        path_, ": " +
                   (file_size_ == kUnknownSize
                        ? std::string("unknown data")
                        : std::to_string(file_size_ - off - 12 - len) + " bytes of unknown data") +
                   " after the trailer" + at_offset(off) + " (two files joined? corrupt)");
  auto c = trailer_counters(js);
  if (!c) return bad_trace(path_, ": trailer" + at_offset(off) + ": " + c.error().message);
  trailer_ = std::move(*c);
  done_ = true;
  return false;
}

Result<bool> TraceReader::read_block(uint64_t off, uint8_t* h, bool cols) {
  if (std::fread(h + 12, 1, 8, f_.get()) != 8) return cut_off("a block header", off);
  uint32_t nrec = get32(h + 4), raw_len = get32(h + 8), comp_len = get32(h + 12),
           want = get32(h + 16);
  const uint64_t full = uint64_t{nrec} * kRecordSize;
  if (nrec > kMaxBlockRecords || (!cols && raw_len != full) ||
      (cols && (raw_len < kColumnMaskBytes || raw_len > kColumnMaskBytes + full + kRecordSize)))
    return bad_trace(path_, ": corrupt block header" + at_offset(off) + " (" +
                                std::to_string(nrec) + " records, " + std::to_string(raw_len) +
                                " bytes)");
  // Deflate never grows data by an eighth: a longer block is corrupt (and a
  // stream, whose size is unknown, must not make us allocate 4 GiB).
  if (comp_len > raw_len + raw_len / 8 + 4096)
    return bad_trace(path_, ": corrupt block header" + at_offset(off) + " (" +
                                std::to_string(comp_len) + " compressed bytes for " +
                                std::to_string(raw_len) + ")");
  if (off + 20 + comp_len > file_size_) return cut_off("a block", off);
  comp_.resize(comp_len);
  if (std::fread(comp_.data(), 1, comp_len, f_.get()) != comp_len) return cut_off("a block", off);
  if (crc(comp_.data(), comp_len) != want)
    return bad_trace(path_, ": corrupt block" + at_offset(off) + " (checksum mismatch)");
  std::vector<uint8_t>& inflated = cols ? payload_ : raw_;
  inflated.resize(raw_len);
  if (!dec_) dec_.reset(libdeflate_alloc_decompressor());
  auto* dec = static_cast<libdeflate_decompressor*>(dec_.get());
  if (!dec || libdeflate_zlib_decompress(dec, comp_.data(), comp_len, inflated.data(), raw_len,
                                         nullptr) != LIBDEFLATE_SUCCESS)
    return bad_trace(path_, ": corrupt block" + at_offset(off) + " (does not decompress)");
  if (cols && !unpack_columns(payload_.data(), payload_.size(), nrec, raw_))
    return bad_trace(path_, ": corrupt block" + at_offset(off) +
                                " (column layout does not match its record count)");
  decode_records(raw_, nrec, block_);
  return true;
}

Result<bool> TraceReader::load_block() {
  block_.clear();
  pos_ = 0;
  while (block_.empty()) {
    if (done_) return false;
    auto off = static_cast<uint64_t>(std::ftell(f_.get()));
    if (off == file_size_ || at_end()) {
      warning_ = "'" + path_ + "' has no trailer (recording did not end cleanly): read " +
                 std::to_string(records_) + " records; counters unavailable";
      done_ = true;
      return false;
    }
    uint8_t h[20];
    size_t got = std::fread(h, 1, 12, f_.get());
    if (got < 12) return cut_off("a chunk header", off);
    uint32_t magic = get32(h);
    if (magic == kTrailerMagic) return read_trailer(off, h);
    if (magic != kBlockMagic && magic != kColBlockMagic)
      return bad_trace(
          path_, ": corrupt data" + at_offset(off) + " (unknown chunk; not a block or trailer)");
    auto r = read_block(off, h, magic == kColBlockMagic);
    if (!r || !*r) return r;
  }
  return true;
}

Result<bool> TraceReader::next(Request& out) {
  if (pos_ >= block_.size()) {
    auto r = load_block();
    if (!r) return r.error();
    if (!*r) return false;
  }
  out = block_[pos_++];
  ++records_;
  // Times beyond 2^63 are the range check's (request_range_error, skippable).
  if (out.issue_ns > static_cast<uint64_t>(INT64_MAX)) return true;
  if (std::string bad = span_.problem(static_cast<int64_t>(out.issue_ns)); !bad.empty())
    return bad_trace(path_, ": record " + std::to_string(records_) + ": " + bad);
  return true;
}

}  // namespace blkrr
