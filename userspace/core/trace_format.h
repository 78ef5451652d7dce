// The native blkrr trace (.blkrr): magic + version, a JSON header, zlib
// blocks of fixed-layout records (each with length and CRC), a JSON trailer
// with the capture counters. See docs/trace-format.md.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/fd.h"
#include "core/io_guard.h"
#include "core/request.h"
#include "core/result.h"
#include "core/time_span.h"

namespace blkrr {

constexpr uint16_t kTraceVersionMajor = 1;
// 1.1: blocks with column elision (BLKC); 1.0 files (BLKB blocks) still read.
constexpr uint16_t kTraceVersionMinor = 1;

struct TraceHeader {
  std::string host;
  std::string kernel_release;
  std::string tool_version;
  std::string command_line;
  uint64_t mono_anchor_ns = 0;  // CLOCK_MONOTONIC at the same instant as...
  uint64_t real_anchor_ns = 0;  // ...CLOCK_REALTIME (ns since the epoch)
  std::vector<DeviceInfo> devices;
  std::map<std::string, std::string> settings;  // filters and options in force
  // A piece of a rotated recording (record --rotate): the recording's id,
  // shared by all its pieces (empty: not a piece), the piece's sequence
  // number (the one in its name) and the CLOCK_MONOTONIC boundary from which
  // on its requests were issued (the piece before holds those issued earlier).
  std::string recording_id;
  uint64_t piece = 0;
  uint64_t piece_start_ns = 0;
};

// Named counters (drops, lost completions, ...). Stored in the trailer.
using Counters = std::map<std::string, uint64_t>;

struct DecompressorDeleter {  // libdeflate_decompressor
  void operator()(void* d) const;
};
struct ZStreamDeleter {
  void operator()(void* z) const;
};

class TraceWriter {
 public:
  struct Options {
    uint32_t records_per_block = 8192;
    int zlib_level = 6;
    // Column elision (record_codec.h, BLKC blocks). false writes the 1.0
    // block form (BLKB), kept for tests of old files.
    bool column_elision = true;
    // zlib's run-length strategy (Z_RLE): a standard zlib stream, about 40 %
    // less compression CPU than level 1 on recorded blocks for ~3 % more
    // bytes (docs/performance.md, record). zlib_level is then ignored.
    bool rle = false;
    // Write under a temporary name and rename on close() (io_guard.h), so a
    // failed conversion leaves nothing (convert's native output). Off by
    // default: a killed recording keeps every block written so far under its
    // own name, without the trailer.
    bool atomic = false;
    // After each block: start writing it back from this thread
    // (sync_file_range, not waiting for the disk), so that the disk requests
    // that write a trace are created by the process writing it, not by the
    // kernel's flusher later (record leaves its own requests out).
    bool own_writeback = false;
  };
  // "-" writes to standard output (a duplicate of it, closed by close()).
  static Result<TraceWriter> create(const std::string& path, const TraceHeader& header,
                                    Options opts);
  static Result<TraceWriter> create(const std::string& path, const TraceHeader& header) {
    return create(path, header, Options{});
  }
  TraceWriter(TraceWriter&&) noexcept = default;
  TraceWriter& operator=(TraceWriter&&) noexcept = default;
  ~TraceWriter();

  Status append(const Request& r);
  // Compress and write the pending records as one block and fflush(), so that
  // a killed process keeps everything up to here. A failed write (a full
  // disk) keeps the records pending and the file's complete blocks: the next
  // flush() or close() first cuts the file back to its last complete block,
  // then writes again (so a caller that made room can retry).
  Status flush();
  // Flush, write the trailer with `counters` and close. Idempotent; after a
  // failure it can be called again.
  Status close(const Counters& counters);

  // Records in the blocks written so far (pending ones not yet).
  uint64_t records_written() const { return records_; }
  uint64_t bytes_written() const { return bytes_; }
  // Appended records not yet in a block.
  size_t pending_records() const { return pending_.size(); }
  const std::string& path() const { return path_; }

 private:
  TraceWriter() = default;
  Status write_raw(const void* p, size_t n);
  Status cut_back();
  // zlib-compress `in` into dst (capacity *dst_len): a zlib status.
  int deflate_block(uint8_t* dst, unsigned long* dst_len, const std::vector<uint8_t>& in);

  std::string path_;
  FilePtr f_;
  std::optional<AtomicFile> file_;  // Options::atomic
  Options opts_;
  std::vector<Request> pending_;
  std::vector<uint8_t> scratch_, columns_, packed_;
  std::unique_ptr<void, ZStreamDeleter> zs_;  // z_stream, reused for every block
  uint64_t records_ = 0, bytes_ = 0, written_back_ = 0;
  bool closed_ = false;
  bool cut_back_needed_ = false;  // a write failed: cut_back() before the next
};

class TraceReader {
 public:
  static Result<TraceReader> open(const std::string& path);
  TraceReader(TraceReader&&) noexcept = default;
  TraceReader& operator=(TraceReader&&) noexcept = default;

  const TraceHeader& header() const { return header_; }
  // Next record; false at the end of the records. A truncated tail (crash,
  // kill -9, full disk) ends the records with warning() set; a corrupt block
  // is an Error naming its offset, and so is a record issued more than 146
  // years from the first (TimeSpanCheck).
  Result<bool> next(Request& out);
  // Present once next() has returned false, if the file was closed properly.
  const std::optional<Counters>& trailer() const { return trailer_; }
  const std::string& warning() const { return warning_; }
  uint64_t records_read() const { return records_; }
  const std::string& path() const { return path_; }

 private:
  TraceReader() = default;
  Result<bool> load_block();
  // The pieces of load_block() at file offset `off`, after the chunk's first
  // 12 bytes `h`: false at the end of the records.
  Result<bool> read_trailer(uint64_t off, const uint8_t* h);
  Result<bool> read_block(uint64_t off, uint8_t* h, bool cols);  // h has room for 20 bytes
  Result<bool> cut_off(const std::string& what, uint64_t off);   // a warning, then the end

  std::string path_;
  FilePtr f_;
  static constexpr uint64_t kUnknownSize = ~uint64_t{0};  // a pipe or "-"
  uint64_t file_size_ = kUnknownSize;
  bool at_end();  // nothing more to read (peeks one byte)
  TraceHeader header_;
  std::vector<Request> block_;
  size_t pos_ = 0;
  std::vector<uint8_t> comp_, payload_, raw_;
  // libdeflate: whole blocks of known size, 2-4x zlib's inflate (docs/performance.md).
  std::unique_ptr<void, DecompressorDeleter> dec_;
  std::optional<Counters> trailer_;
  std::string warning_;
  uint64_t records_ = 0;
  bool done_ = false;
  TimeSpanCheck span_;  // issue times 146 years apart are an error
};

// Quick check used by format auto-detection.
bool is_native_trace(const std::string& path);

// The recording id in the header of a native trace that is a piece of a
// rotated recording; "" for any other file (or one that cannot be read),
// and without reading it for anything but a regular file.
std::string recording_id_of(const std::string& path);

}  // namespace blkrr
