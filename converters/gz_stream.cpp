#include "converters/gz_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <isa-l/igzip_lib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/input_stream.h"

namespace blkrr {

namespace {
constexpr size_t kInChunk = 1 << 18;
constexpr size_t kOutChunk = 1 << 18;

bool gzip_magic(const uint8_t* p, size_t n) {
  return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}
}  // namespace

GzSource::GzSource(GzSource&& o) noexcept {
  *this = std::move(o);
}
GzSource& GzSource::operator=(GzSource&& o) noexcept {
  if (this == &o) return *this;
  file_ = std::move(o.file_);
  name_ = std::move(o.name_);
  compressed_ = o.compressed_;
  in_eof_ = o.in_eof_;
  done_ = o.done_;
  read_total_ = o.read_total_;
  next_ = o.next_;  // points into in_: the heap buffer moves along
  avail_ = o.avail_;
  in_ = std::move(o.in_);
  st_ = std::move(o.st_);
  return *this;
}
GzSource::~GzSource() = default;

Result<GzSource> GzSource::open(const std::string& path, const std::string& display) {
  GzSource s;
  s.name_ = display;
  auto file = InputFile::open(path);    // pipes and "-" streamed (core/input_stream.h)
  if (!file && file.error().sys_errno)  // named as the caller names it
    return Error::system("cannot open " + display, file.error().sys_errno,
                         "check the path and permissions");
  if (!file) return file.error();
  s.file_.emplace(std::move(*file));
  // No larger than the file: a small input gets a small buffer (the fuzz
  // harnesses open one per input).
  size_t chunk = kInChunk;
  if (auto size = s.file_->size(); size && *size < chunk)
    chunk = std::max<size_t>(static_cast<size_t>(*size), 1 << 12);
  s.in_.resize(chunk);
  BLKRR_TRY(s.refill());
  s.compressed_ = gzip_magic(s.next_, s.avail_);
  if (s.compressed_) {  // 85 KB of state: only for gzip files
    s.st_ = std::make_unique<inflate_state>();
    isal_inflate_init(s.st_.get());
    s.st_->crc_flag = ISAL_GZIP;
  }
  return s;
}

// Keeps the unread input and reads more behind it.
Status GzSource::refill() {
  size_t keep = avail_;
  if (keep) std::memmove(in_.data(), next_, keep);
  while (!in_eof_ && keep < in_.size()) {
    auto n = file_->read(reinterpret_cast<char*>(in_.data()) + keep, in_.size() - keep);
    if (!n) return n.error().context("reading " + name_);
    if (*n == 0) in_eof_ = true;
    keep += *n;
    read_total_ += *n;
    break;
  }
  next_ = in_.data();
  avail_ = static_cast<uint32_t>(keep);
  return {};
}

Result<size_t> GzSource::read(char* dst, size_t cap) {
  if (done_ || cap == 0) return size_t{0};
  if (compressed_) return inflate_some(dst, cap);
  if (avail_ == 0) BLKRR_TRY(refill());
  size_t n = std::min<size_t>(cap, avail_);
  std::memcpy(dst, next_, n);
  next_ += n;
  avail_ -= static_cast<uint32_t>(n);
  if (n == 0) done_ = true;
  return n;
}

// After the last member only zero bytes (padding) may follow: anything else
// is a damaged file or a bad join, whose data would otherwise be lost unseen.
Status GzSource::check_trailer() {
  for (;;) {
    for (uint32_t i = 0; i < avail_; ++i) {
      if (next_[i] == 0) continue;
      uint64_t at = read_total_ - avail_ + i;
      return Error(ErrorKind::kBadInput,
                   name_ + ": data that is not gzip after the last gzip member, at byte " +
                       std::to_string(at) +
                       " (damaged file, or files joined badly); check it with 'gzip -t'");
    }
    next_ += avail_;
    avail_ = 0;
    if (in_eof_) return {};
    BLKRR_TRY(refill());
  }
}

Result<size_t> GzSource::inflate_some(char* dst, size_t cap) {
  for (;;) {
    if (avail_ == 0 && !in_eof_) BLKRR_TRY(refill());
    st_->next_in = next_;
    st_->avail_in = avail_;
    st_->next_out = reinterpret_cast<uint8_t*>(dst);
    st_->avail_out = static_cast<uint32_t>(std::min<size_t>(cap, UINT32_MAX));
    int rc = isal_inflate(st_.get());
    next_ = st_->next_in;
    avail_ = st_->avail_in;
    if (rc < 0)
      return Error(ErrorKind::kBadInput, name_ + ": damaged gzip data (igzip error " +
                                             std::to_string(rc) +
                                             "); check the file with 'gzip -t'");
    size_t produced = cap - st_->avail_out;
    if (st_->block_state == ISAL_BLOCK_FINISH) {
      // End of a member: another may follow (concatenated gzip files).
      if (avail_ < 2 && !in_eof_) BLKRR_TRY(refill());
      if (gzip_magic(next_, avail_)) {
        isal_inflate_reset(st_.get());
        st_->crc_flag = ISAL_GZIP;
      } else {
        BLKRR_TRY(check_trailer());
        done_ = true;
      }
    } else if (produced == 0 && avail_ == 0 && in_eof_) {
      return Error(ErrorKind::kBadInput, name_ + ": the gzip stream is truncated (file cut off?)");
    }
    if (produced > 0 || done_) return produced;
  }
}

// ---------------------------------------------------------------------------

GzSink::GzSink(GzSink&&) noexcept = default;
GzSink& GzSink::operator=(GzSink&&) noexcept = default;
GzSink::~GzSink() {
  if (zs_) deflateEnd(zs_.get());
}

Result<GzSink> GzSink::create(int fd, int level, const std::string& path) {
  GzSink s;
  s.fd_ = fd;
  s.path_ = path;
  s.out_.resize(kOutChunk);
  if (level < 1 || level > 9) level = 6;
  if (level <= 3) {
    s.is_ = std::make_unique<isal_zstream>();
    isal_deflate_init(s.is_.get());
    s.is_->gzip_flag = IGZIP_GZIP;
    s.is_->level = static_cast<uint32_t>(level);
    s.level_buf_.resize(level == 1   ? ISAL_DEF_LVL1_DEFAULT
                        : level == 2 ? ISAL_DEF_LVL2_DEFAULT
                                     : ISAL_DEF_LVL3_DEFAULT);
    s.is_->level_buf = s.level_buf_.data();
    s.is_->level_buf_size = static_cast<uint32_t>(s.level_buf_.size());
    return s;
  }
  s.zs_ = std::make_unique<z_stream>();
  if (deflateInit2(s.zs_.get(), level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    s.zs_.reset();
    return Error(ErrorKind::kFailed, "cannot start gzip output to " + path + " (zlib init failed)");
  }
  return s;
}

Status GzSink::put(const uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Error::system("cannot write " + path_, errno, "disk full?");
    p += w;
    n -= static_cast<size_t>(w);
  }
  return {};
}

Status GzSink::isal_step(const char* data, size_t len, bool last) {
  is_->next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(data));
  is_->avail_in = static_cast<uint32_t>(len);
  is_->end_of_stream = last ? 1 : 0;
  do {
    is_->next_out = out_.data();
    is_->avail_out = static_cast<uint32_t>(out_.size());
    if (int rc = isal_deflate(is_.get()); rc != COMP_OK)
      return Error(ErrorKind::kFailed,
                   "compressing " + path_ + " failed (igzip error " + std::to_string(rc) + ")");
    BLKRR_TRY(put(out_.data(), out_.size() - is_->avail_out));
  } while (is_->avail_in > 0 || (last && is_->internal_state.state != ZSTATE_END));
  return {};
}

Status GzSink::zlib_step(const char* data, size_t len, bool last) {
  zs_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  zs_->avail_in = static_cast<uInt>(len);
  int rc = Z_OK;
  do {
    zs_->next_out = out_.data();
    zs_->avail_out = static_cast<uInt>(out_.size());
    rc = deflate(zs_.get(), last ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR)
      return Error(ErrorKind::kFailed,
                   "compressing " + path_ + " failed (zlib error " + std::to_string(rc) + ")");
    BLKRR_TRY(put(out_.data(), out_.size() - zs_->avail_out));
  } while (zs_->avail_in > 0 || zs_->avail_out == 0 || (last && rc != Z_STREAM_END));
  return {};
}

Status GzSink::write(const char* data, size_t len) {
  if (len == 0) return {};
  return is_ ? isal_step(data, len, false) : zlib_step(data, len, false);
}

Status GzSink::finish() {
  return is_ ? isal_step(nullptr, 0, true) : zlib_step(nullptr, 0, true);
}

}  // namespace blkrr
