// Members of a gzip-compressed tar archive (.tgz, .tar.gz) read as one
// stream: the gzip data is inflated and the 512-byte tar headers are parsed
// in memory, nothing is unpacked to disk. Understands POSIX ustar, GNU long
// names ('L') and base-256 sizes, and pax extended headers ('x': path and
// size). Used for the Tencent CBS traces, published as hourly .tgz archives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "converters/gz_stream.h"
#include "converters/text_io.h"
#include "core/result.h"

namespace blkrr {

class TarGzReader {
 public:
  // `path` as given ("-" is standard input); `display` names it in messages.
  static Result<std::unique_ptr<TarGzReader>> open(const std::string& path,
                                                   const std::string& display);

  // Skips what is left of the current member and moves to the next regular
  // file; false at the end of the archive. Errors name the archive and the
  // byte offset of a damaged header.
  Result<bool> next_member();
  const std::string& member_name() const { return name_; }
  uint64_t member_size() const { return size_; }
  // Up to cap bytes of the current member's data; 0 at its end.
  Result<size_t> read(char* dst, size_t cap);
  const std::string& display() const { return display_; }
  // Members that were not regular files (directories, links, ...).
  uint64_t other_members() const { return other_; }

  // The current member as a ByteStream; valid while this reader lives and
  // until next_member().
  std::unique_ptr<ByteStream> member_stream();

 private:
  TarGzReader(GzSource src, std::string display)
      : src_(std::move(src)), display_(std::move(display)) {}
  Status read_exact(char* dst, size_t n, const char* what);
  Status skip(uint64_t n);
  Result<std::string> read_meta(uint64_t size, const char* what);
  Status parse_pax(const std::string& text, std::string& path, uint64_t& size, bool& has_size);

  GzSource src_;
  std::string display_;
  std::string name_;
  uint64_t size_ = 0, left_ = 0, pad_ = 0;
  uint64_t offset_ = 0;  // of the archive (inflated), for messages
  uint64_t other_ = 0;
  bool end_ = false;
};

// True if `path` is gzip data whose first 512 inflated bytes are a tar
// header (ustar or GNU magic with a correct checksum).
bool looks_like_tar_gz(const std::string& path);

}  // namespace blkrr
