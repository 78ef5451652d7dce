// Fast line-oriented text I/O for the converters: a buffered reader of gzip
// or plain text (zlib detects which), a buffered writer that gzips when the
// file name ends in ".gz", and hand-written number formatting/parsing for the
// hot loops (no iostreams, no printf per record).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "converters/gz_stream.h"
#include "core/io_guard.h"
#include "core/result.h"
#include "core/trace_format.h"

namespace blkrr {

// A source of bytes that is not a file of its own, such as one member of a
// tar archive read as a stream (converters/tar_stream.h).
class ByteStream {
 public:
  virtual ~ByteStream() = default;
  // Up to cap bytes into dst; 0 at the end.
  virtual Result<size_t> read(char* dst, size_t cap) = 0;
};

// Reads lines from a gzip-compressed or plain file ("-" is standard input).
// A large compressed file is inflated on a second thread a few chunks ahead
// of the parsing (bounded: kInflateAhead chunks of 256 KiB).
class LineReader {
 public:
  static Result<LineReader> open(const std::string& path);
  // Lines of a byte stream; `display` names it in messages. A last line
  // without '\n' is counted (unterminated()), as for a plain file.
  static LineReader over(std::string display, std::unique_ptr<ByteStream> stream);
  LineReader(LineReader&&) noexcept;
  LineReader& operator=(LineReader&&) noexcept;
  ~LineReader();

  // Next line without its '\n' (a trailing '\r' is removed too). The view is
  // valid until the next call. false at the end of the file; an Error for a
  // damaged or truncated gzip stream or a line longer than 1 MiB.
  Result<bool> next(std::string_view& line);
  uint64_t line() const { return line_; }  // number of the line last returned
  const std::string& path() const { return path_; }
  // "file:line: " prefix for messages about the current line.
  std::string where() const { return path_ + ":" + std::to_string(line_); }
  // The last line returned had no '\n': a plain file written by hand, or
  // one cut off (a compressed file without it is an error instead).
  bool unterminated() const { return unterminated_; }

 private:
  struct Inflater;  // the inflating thread and its queue
  LineReader();
  Status fill();
  Result<size_t> read_more(char* dst, size_t cap);

  std::string path_;
  bool compressed_ = false;
  std::optional<GzSource> src_;  // read here, or by inflater_ when there is one
  std::unique_ptr<Inflater> inflater_;
  std::unique_ptr<ByteStream> stream_;  // read here when given (over())
  std::vector<char> buf_;
  size_t pos_ = 0, end_ = 0;
  bool eof_ = false, unterminated_ = false;
  uint64_t line_ = 0;
};

// Counts a last line without '\n' in `c`, so that the summary shows it.
inline void count_unterminated(const LineReader& in, Counters& c) {
  if (in.unterminated()) c["last line without a newline (file cut off?)"] = 1;
}

// True if the path names gzip output (ends in ".gz").
bool is_gz_path(const std::string& path);

// Buffered output to a plain file, a gzip file (name ends in ".gz") or
// standard output ("-"). Gzip output is compressed by a second thread while
// the caller fills the next buffer. Written atomically (AtomicFile): the
// file appears under its name only after close() succeeded; destroyed
// without close(), or when close() fails, nothing is left behind.
class OutFile {
 public:
  // gz_level: level 1..9 (zlib's scale; 1-3 written by igzip) for ".gz" files (ignored otherwise).
  static Result<OutFile> create(const std::string& path, int gz_level = 6);
  OutFile(OutFile&& o) noexcept;
  OutFile& operator=(OutFile&& o) noexcept;
  ~OutFile();

  // Room for at least n more bytes; write there, then commit(end).
  char* reserve(size_t n) {
    if (buf_.size() - len_ < n) grow(n);
    return buf_.data() + len_;
  }
  void commit(const char* end) { len_ = static_cast<size_t>(end - buf_.data()); }
  void append(std::string_view s);
  // Writes the buffer out when it is more than half full. Call once per record.
  Status maybe_flush() { return len_ >= kFlushAt ? flush() : Status{}; }
  Status flush();
  Status close();  // idempotent
  const std::string& path() const { return path_; }
  uint64_t bytes_written() const { return written_; }

 private:
  static constexpr size_t kFlushAt = 1 << 19;
  struct Deflater;  // the compressing thread and its queue
  OutFile();
  void grow(size_t n);
  void discard();  // stop without publishing the output

  std::string path_;
  std::optional<AtomicFile> file_;
  std::unique_ptr<Deflater> gz_;
  int fd_ = -1;
  bool closed_ = false;
  std::vector<char> buf_;
  size_t len_ = 0;
  uint64_t written_ = 0;
};

// Copies s to p and returns the end (for the formatting hot loops).
inline char* put_str(char* p, std::string_view s) {
  for (char c : s) *p++ = c;
  return p;
}

// ---- number formatting (p must have room for 24 more bytes) ----
char* fmt_u64(char* p, uint64_t v);
char* fmt_i64(char* p, int64_t v);
// Right-aligned in `width` columns (like printf "%Nllu").
char* fmt_u64_w(char* p, uint64_t v, int width);
// Seconds with nine fractional digits from nanoseconds, right-aligned in
// `width` columns (like printf "%W.9f" of ns/1e9, exact).
char* fmt_sec9(char* p, int64_t ns, int width);
// Microseconds with three fractional digits ("12.345"), exact.
char* fmt_usec3(char* p, uint64_t ns);

// The strings of v with sep between them.
std::string join(const std::vector<std::string>& v, const char* sep);

// ---- strict parsing of fields (whitespace around the field is trimmed) ----
inline std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}
bool parse_u64_field(std::string_view s, uint64_t& out);
bool parse_i64_field(std::string_view s, int64_t& out);
// Decimal seconds ("12.5", "3", "0.000000001", "-1.25") to nanoseconds;
// digits beyond the ninth are truncated. frac_digits reports the width seen.
bool parse_seconds_ns(std::string_view s, int64_t& out_ns, int* frac_digits = nullptr);

// Splits `l` at spaces and tabs into at most `max` fields; returns how many.
size_t split_whitespace(std::string_view l, std::string_view* out, size_t max);
// Splits `l` at every `sep` into at most `max` fields (kept untrimmed);
// returns how many, or max + 1 when there are more.
size_t split_at(std::string_view l, char sep, std::string_view* out, size_t max);

// The verdict on a malformed line a text reader could not use; `why` is the
// reason. Returns an Error naming file:line and what was `expected`, unless
// --skip-bad lets the line be skipped: then it is counted ("lines_skipped",
// "skipped: <why>").
Status reject_line(const LineReader& in, const char* why, bool skip_bad, std::string_view expected,
                   Counters& counters);

// A line parser returns kFatalLine (and keeps the message) for a line that is
// well formed but ends the reading whatever --skip-bad says, such as a second
// device in a one-device reader; fatal_line() makes the error of it.
inline constexpr const char* kFatalLine = "(fatal)";
Error fatal_line(const LineReader& in, const std::string& message);

}  // namespace blkrr
