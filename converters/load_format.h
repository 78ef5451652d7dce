// blkreplay's shared load format (*.load.gz) and its replay results.
//
//   free-text preamble (lines without ';')
//   start ; sector; length ; op ;  replay_delay=0 ; replay_duration=0
//         0.449518165 ;     37766917 ;   14 ; W ; 0.0 ; 0.0
//
// Start times are seconds with nine fractional digits, sectors and lengths
// are 512-byte units, op is R or W. Replay results use the header
// "orig_start ; sector; length ; op ;  replay_delay; replay_duration", mark
// pushed-back requests with lower-case r/w and carry INFO:/WARN:/ERROR:/
// VERIFY/SUMMARY: lines and a statistics tail. See docs/formats.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "converters/text_io.h"
#include "core/request.h"
#include "core/result.h"
#include "core/time_span.h"

namespace blkrr {

struct LoadRecord {          // one line of a blkreplay load or replay result
  int64_t start_ns = 0;      // 'start' (load) or 'orig_start' (replay) in ns
  uint64_t sector = 0;       // 512-byte units
  uint32_t sectors = 0;      // length in 512-byte sectors
  Op op = Op::kRead;         // kRead or kWrite
  bool pushed_back = false;  // lower-case r/w in replay results
  int64_t delay_ns = 0;      // replay_delay
  int64_t duration_ns = 0;   // replay_duration (latency)
  // Second letter of a blktrace-style op ("RA" = read-ahead, "WS" = sync
  // write), kept so that such lines round-trip unchanged; 0 if none.
  char op_suffix = 0;
};

enum class LoadKind { kLoad, kReplay };

struct LoadReadOptions {
  bool skip_bad = false;  // skip malformed lines (counted by reason) instead of failing
};

// Streams a gzip (or plain) text load or replay result; "-" is stdin.
class LoadReader {
 public:
  static Result<LoadReader> open(const std::string& path, LoadReadOptions opts = {});
  LoadReader(LoadReader&&) noexcept = default;
  LoadReader& operator=(LoadReader&&) noexcept = default;

  // Next request; false at the end. A malformed line is an Error naming
  // file:line (or, with skip_bad, is counted and skipped).
  Result<bool> next(LoadRecord& out);
  // Known once the header was seen (open() reads up to it).
  LoadKind kind() const { return kind_; }
  bool has_header() const { return has_header_; }
  // Free-text lines before the header.
  const std::vector<std::string>& preamble() const { return preamble_; }
  // INFO:/WARN:/ERROR:/VERIFY/SUMMARY: lines, the statistics tail and any
  // other text after the header (e.g. a repeated preamble), seen so far.
  const std::vector<std::string>& info_lines() const { return info_; }
  uint64_t line() const { return in_.line(); }
  const std::string& path() const { return in_.path(); }
  const LineReader& lines() const { return in_; }
  uint64_t skipped() const { return skipped_; }
  const std::map<std::string, uint64_t>& skip_reasons() const { return reasons_; }
  // Data lines whose times had a fraction width other than nine digits.
  uint64_t odd_fraction_lines() const { return odd_fraction_; }
  // Repeated header lines after the first (files glued together).
  uint64_t repeated_headers() const { return repeated_headers_; }
  // What the reading met, as every input's counters name it: skipped lines
  // and their reasons, a last line without a newline (converters/source.h).
  std::map<std::string, uint64_t> counters() const;

 private:
  explicit LoadReader(LineReader in) : in_(std::move(in)) {}
  // Parses a data line; nullptr on success, else the reason it is malformed.
  const char* parse_data(std::string_view line, LoadRecord& out);

  LineReader in_;
  LoadReadOptions opts_;
  LoadKind kind_ = LoadKind::kLoad;
  bool has_header_ = false;
  std::vector<std::string> preamble_, info_;
  size_t kept_bytes_ = 0;  // of preamble_ and info_, bounded
  // A data line met while looking for the header, returned by the first next().
  bool have_pending_ = false;
  LoadRecord pending_;
  uint64_t skipped_ = 0, odd_fraction_ = 0, repeated_headers_ = 0;
  std::map<std::string, uint64_t> reasons_;
  TimeSpanCheck span_;
};

// Writes a load or replay result that blkreplay and its scripts accept.
// Gzip when the path ends in ".gz"; "-" is stdout (plain).
class LoadWriter {
 public:
  static Result<LoadWriter> create(const std::string& path, LoadKind kind,
                                   const std::vector<std::string>& preamble, int gz_level = 6);
  LoadWriter(LoadWriter&&) noexcept = default;
  LoadWriter& operator=(LoadWriter&&) noexcept = default;

  // One data line, 9 fractional digits; loads always carry "0.0 ; 0.0".
  Status write(const LoadRecord& r) {
    format(r);
    return out_.maybe_flush();
  }
  // INFO:/SUMMARY:/VERIFY lines, the statistics tail (written verbatim).
  Status write_line(const std::string& text);
  Status close();
  uint64_t records() const { return records_; }
  const std::string& path() const { return out_.path(); }

 private:
  explicit LoadWriter(OutFile out, LoadKind kind) : out_(std::move(out)), kind_(kind) {}
  void format(const LoadRecord& r);

  OutFile out_;
  LoadKind kind_;
  uint64_t records_ = 0;
};

// One data line with its '\n' at p (room for kMaxLoadLine bytes); returns its end.
constexpr size_t kMaxLoadLine = 128;
char* format_load_line(char* p, const LoadRecord& r, LoadKind kind);

// The header line of each kind, exactly as blkreplay writes it.
const char* load_header(LoadKind kind);
// What a load starts with: the preamble lines (';' made ',') and the header.
std::string load_head(const std::vector<std::string>& preamble, LoadKind kind);

// Requests in the load model: start = issue time, bytes = sectors * 512.
Request load_to_request(const LoadRecord& r);
// Fails for operations a load cannot express (only reads and writes).
bool request_to_load(const Request& q, uint64_t start_ns, LoadRecord& out);

}  // namespace blkrr
