#include "converters/tar_stream.h"

#include <algorithm>
#include <cstring>

namespace blkrr {

namespace {
constexpr size_t kBlock = 512;
// Long names and pax headers are metadata: a few KiB in real archives.
constexpr uint64_t kMaxMeta = 1 << 20;
constexpr uint64_t kMaxMemberSize = uint64_t{1} << 62;

// A numeric header field: octal digits (space or NUL ended), or GNU's
// base-256 form (high bit of the first byte set) for sizes of 8 GiB and more.
bool header_number(const unsigned char* f, size_t n, uint64_t& out) {
  out = 0;
  if (f[0] & 0x80) {
    if (f[0] != 0x80) return false;  // negative or more than 2^56: not a size
    for (size_t i = 1; i < n; ++i) {
      if (out >> 56) return false;
      out = (out << 8) | f[i];
    }
    return true;
  }
  size_t i = 0;
  while (i < n && (f[i] == ' ' || f[i] == 0)) ++i;
  bool any = false;
  for (; i < n && f[i] >= '0' && f[i] <= '7'; ++i) {
    if (out >> 60) return false;
    out = out * 8 + (f[i] - '0');
    any = true;
  }
  for (; i < n; ++i)
    if (f[i] != ' ' && f[i] != 0) return false;
  return any;
}

bool checksum_ok(const unsigned char* h) {
  uint64_t want;
  if (!header_number(h + 148, 8, want)) return false;
  uint64_t sum = 0;
  int64_t ssum = 0;  // some old tars summed signed chars
  for (size_t i = 0; i < kBlock; ++i) {
    unsigned char c = (i >= 148 && i < 156) ? ' ' : h[i];
    sum += c;
    ssum += static_cast<signed char>(c);
  }
  return sum == want || static_cast<uint64_t>(ssum) == want;
}

bool all_zero(const unsigned char* h) {
  return std::all_of(h, h + kBlock, [](unsigned char c) { return c == 0; });
}

std::string field_string(const unsigned char* f, size_t n) {
  size_t len = 0;
  while (len < n && f[len]) ++len;
  return std::string(reinterpret_cast<const char*>(f), len);
}

// The bytes of one member, read from its archive.
class MemberStream : public ByteStream {
 public:
  explicit MemberStream(TarGzReader* tar) : tar_(tar) {}
  Result<size_t> read(char* dst, size_t cap) override { return tar_->read(dst, cap); }

 private:
  TarGzReader* tar_;
};
}  // namespace

Result<std::unique_ptr<TarGzReader>> TarGzReader::open(const std::string& path,
                                                       const std::string& display) {
  auto src = GzSource::open(path, display);
  if (!src) return src.error();
  if (!src->compressed())
    return Error(ErrorKind::kBadInput, display + ": not a gzip-compressed tar archive");
  return std::unique_ptr<TarGzReader>(new TarGzReader(std::move(*src), display));
}

Status TarGzReader::read_exact(char* dst, size_t n, const char* what) {
  size_t got = 0;
  while (got < n) {
    auto r = src_.read(dst + got, n - got);
    if (!r) return r.error();
    if (*r == 0)
      return Error(ErrorKind::kBadInput, display_ + ": the archive ends inside " + what +
                                             " at byte " + std::to_string(offset_ + got) +
                                             " (file cut off?)");
    got += *r;
  }
  offset_ += n;
  return {};
}

Status TarGzReader::skip(uint64_t n) {
  char buf[8192];
  while (n > 0) {
    size_t step = static_cast<size_t>(std::min<uint64_t>(n, sizeof buf));
    BLKRR_TRY(read_exact(buf, step, "a member's data"));
    n -= step;
  }
  return {};
}

Result<std::string> TarGzReader::read_meta(uint64_t size, const char* what) {
  if (size > kMaxMeta)
    return Error(ErrorKind::kBadInput, display_ + ": " + what + " of " + std::to_string(size) +
                                           " bytes at byte " + std::to_string(offset_) +
                                           " (more than 1 MiB: damaged archive?)");
  std::string s(size, '\0');
  BLKRR_TRY(read_exact(s.data(), s.size(), what));
  BLKRR_TRY(skip((kBlock - size % kBlock) % kBlock));
  return s;
}

// pax records "LEN key=value\n": path and size override the next header's.
Status TarGzReader::parse_pax(const std::string& text, std::string& path, uint64_t& size,
                              bool& has_size) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t sp = text.find(' ', pos);
    uint64_t len = 0;
    bool ok = sp != std::string::npos && sp > pos;
    for (size_t i = pos; ok && i < sp; ++i) {
      ok = text[i] >= '0' && text[i] <= '9' && len < kMaxMeta;
      len = len * 10 + static_cast<uint64_t>(text[i] - '0');
    }
    if (!ok || len <= sp - pos + 1 || pos + len > text.size() || text[pos + len - 1] != '\n')
      return Error(ErrorKind::kBadInput,
                   display_ + ": damaged pax header before byte " + std::to_string(offset_));
    std::string_view rec(text.data() + sp + 1, pos + len - 1 - (sp + 1));
    size_t eq = rec.find('=');
    if (eq != std::string_view::npos) {
      std::string_view key = rec.substr(0, eq), val = rec.substr(eq + 1);
      if (key == "path") path = std::string(val);
      if (key == "size") {
        has_size = parse_u64_field(val, size) && size <= kMaxMemberSize;
        if (!has_size)
          return Error(ErrorKind::kBadInput,
                       display_ + ": bad pax size before byte " + std::to_string(offset_));
      }
    }
    pos += len;
  }
  return {};
}

Result<bool> TarGzReader::next_member() {
  BLKRR_TRY(skip(left_ + pad_));
  left_ = pad_ = 0;
  std::string long_name;
  uint64_t pax_size = 0;
  bool has_pax_size = false;
  while (!end_) {
    unsigned char h[kBlock];
    auto got = src_.read(reinterpret_cast<char*>(h), 1);
    if (!got) return got.error();
    if (*got == 0) break;  // no end blocks: tolerated, as GNU tar does
    ++offset_;
    BLKRR_TRY(read_exact(reinterpret_cast<char*>(h) + 1, kBlock - 1, "a member header"));
    if (all_zero(h)) {
      end_ = true;
      break;
    }
    const uint64_t at = offset_ - kBlock;
    uint64_t size = 0;
    if (!checksum_ok(h) || !header_number(h + 124, 12, size) || size > kMaxMemberSize)
      return Error(ErrorKind::kBadInput, display_ + ": damaged tar header at byte " +
                                             std::to_string(at) + " (not a tar archive?)");
    const char type = static_cast<char>(h[156]);
    if (type == 'L') {
      auto n = read_meta(size, "a long member name");
      if (!n) return n.error();
      long_name = field_string(reinterpret_cast<const unsigned char*>(n->data()), n->size());
      continue;
    }
    if (type == 'x' || type == 'g') {
      auto text = read_meta(size, "a pax header");
      if (!text) return text.error();
      if (type == 'x') BLKRR_TRY(parse_pax(*text, long_name, pax_size, has_pax_size));
      continue;
    }
    if (has_pax_size) size = pax_size;
    std::string name = long_name.empty() ? field_string(h, 100) : long_name;
    if (long_name.empty() && std::memcmp(h + 257, "ustar\0", 6) == 0 && h[345])
      name = field_string(h + 345, 155) + "/" + name;
    long_name.clear();
    has_pax_size = false;
    const uint64_t pad = (kBlock - size % kBlock) % kBlock;
    if (type == '0' || type == '\0' || type == '7') {
      name_ = name;
      size_ = left_ = size;
      pad_ = pad;
      return true;
    }
    ++other_;  // directory, link, device: no trace data
    BLKRR_TRY(skip(size + pad));
  }
  name_.clear();
  size_ = 0;
  return false;
}

Result<size_t> TarGzReader::read(char* dst, size_t cap) {
  size_t n = static_cast<size_t>(std::min<uint64_t>(cap, left_));
  if (n == 0) return size_t{0};
  BLKRR_TRY(read_exact(dst, n, ("member " + name_).c_str()));
  left_ -= n;
  return n;
}

std::unique_ptr<ByteStream> TarGzReader::member_stream() {
  return std::make_unique<MemberStream>(this);
}

bool looks_like_tar_gz(const std::string& path) {
  // A pipe keeps what this reads for the reader after it (core/input_stream.h).
  auto src = GzSource::open(path, path);
  if (!src || !src->compressed()) return false;
  unsigned char h[kBlock];
  size_t got = 0;
  while (got < kBlock) {
    auto r = src->read(reinterpret_cast<char*>(h) + got, kBlock - got);
    if (!r || *r == 0) return false;
    got += *r;
  }
  return std::memcmp(h + 257, "ustar", 5) == 0 && checksum_ok(h);
}

}  // namespace blkrr
