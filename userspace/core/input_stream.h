// Reading an input that may not be a regular file (a pipe, a FIFO, a
// character device such as /dev/zero, process substitution, "-" for standard
// input) without copying it anywhere first.
//
// Such an input can be read only once, in order. The first bytes read from it
// (at most kInputPeekLimit) are kept in memory, so that format detection and
// then the reader see the same bytes from the start; past that prefix the
// input streams straight to its one reader. A second reader that needs more
// than the prefix (a second pass: --scale, --repeat, a report's two passes)
// is refused with a message that says to save the input to a file first.
// Memory: at most kInputPeekLimit per input, whatever its length.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/fd.h"
#include "core/result.h"

namespace blkrr {

inline constexpr size_t kInputPeekLimit = size_t{4} << 20;

struct StreamInput;  // the shared state of one non-seekable input

// A sequential reader of an input, from its first byte.
class InputFile {
 public:
  // `given` is a path or "-" (standard input). Directories and block devices
  // are refused; a missing file is a kNotFound error.
  static Result<InputFile> open(const std::string& given);
  InputFile(InputFile&&) noexcept;
  InputFile& operator=(InputFile&&) noexcept;
  ~InputFile();

  // Up to cap bytes into dst; 0 at the end of the input.
  Result<size_t> read(char* dst, size_t cap);
  // The size of a regular file; nullopt for a stream.
  std::optional<uint64_t> size() const { return size_; }
  uint64_t position() const { return pos_; }
  // What to call it in messages: the path, or "standard input".
  const std::string& name() const { return name_; }

 private:
  InputFile() = default;
  Fd fd_;                                // a regular file
  std::shared_ptr<StreamInput> stream_;  // anything else
  std::optional<uint64_t> size_;
  uint64_t pos_ = 0;
  std::string name_;
};

// The input's first n bytes (fewer if it is shorter), leaving it unread for
// the next reader. n is at most kInputPeekLimit.
Result<std::string> peek_input(const std::string& given, size_t n);

// A FILE* reading the input from its start (fopen for a regular file).
Result<FilePtr> open_input_stdio(const std::string& given);

// True when `given` is read as a stream (not a regular file).
bool input_is_stream(const std::string& given);

// The name an input has in messages ("standard input" for "-").
std::string input_name(const std::string& given);

}  // namespace blkrr
