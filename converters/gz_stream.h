// Streaming gzip for the converters' text files, with ISA-L's igzip: 2-4x
// zlib's inflate and ~2.3x its level-1 deflate here (docs/performance.md,
// "convert: compression library"). The files stay standard gzip (RFC 1952);
// levels 4-9 are written with zlib, whose ratios igzip does not reach.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/input_stream.h"
#include "core/result.h"

struct inflate_state;
struct isal_zstream;

namespace blkrr {

// Reads a gzip file (one or more members) or, when it does not start with
// the gzip magic, the plain file as it is; a pipe or "-" as a stream.
class GzSource {
 public:
  static Result<GzSource> open(const std::string& path, const std::string& display);
  GzSource(GzSource&&) noexcept;
  GzSource& operator=(GzSource&&) noexcept;
  ~GzSource();
  // Up to cap bytes into dst; 0 at the end. Errors name the file and say
  // whether it is damaged or cut off.
  Result<size_t> read(char* dst, size_t cap);
  bool compressed() const { return compressed_; }

 private:
  GzSource() = default;
  Status refill();
  Status check_trailer();
  Result<size_t> inflate_some(char* dst, size_t cap);

  std::optional<InputFile> file_;
  std::string name_;
  bool compressed_ = false, in_eof_ = false, done_ = false;
  uint64_t read_total_ = 0;  // bytes read from the file so far
  std::vector<uint8_t> in_;
  uint8_t* next_ = nullptr;  // the unread input in in_
  uint32_t avail_ = 0;
  std::unique_ptr<inflate_state> st_;  // gzip files only
};

// Writes a gzip stream to a file descriptor it does not own.
class GzSink {
 public:
  // level 1..9 (zlib's scale): 1-3 igzip, 4-9 zlib.
  static Result<GzSink> create(int fd, int level, const std::string& path);
  GzSink(GzSink&&) noexcept;
  GzSink& operator=(GzSink&&) noexcept;
  ~GzSink();
  Status write(const char* data, size_t len);
  Status finish();

 private:
  GzSink() = default;
  Status put(const uint8_t* p, size_t n);
  Status isal_step(const char* data, size_t len, bool last);
  Status zlib_step(const char* data, size_t len, bool last);

  int fd_ = -1;
  std::string path_;
  std::vector<uint8_t> out_, level_buf_;
  std::unique_ptr<isal_zstream> is_;
  std::unique_ptr<z_stream> zs_;
};

}  // namespace blkrr
