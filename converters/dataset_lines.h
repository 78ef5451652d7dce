// The lines of a dataset input: a plain or gzip file, or every member of a
// .tgz/.tar.gz archive that is a trace file, in archive order, read as one
// stream (converters/tar_stream.h). Members that are not trace files (an
// AppleDouble "._x", README*, *.txt, *.md, *.md5, *.pdf) are skipped and
// counted. Line numbers count from 1 in each member; messages name
// "ARCHIVE[MEMBER]:LINE".
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "converters/tar_stream.h"
#include "converters/text_io.h"

namespace blkrr {

class DatasetLines {
 public:
  static Result<DatasetLines> open(const std::string& path);
  DatasetLines(DatasetLines&&) noexcept = default;
  DatasetLines& operator=(DatasetLines&&) noexcept = default;

  // Next line (across members); false at the end.
  Result<bool> next(std::string_view& line);
  // The reader of the current file or member, for messages (where()).
  const LineReader& reader() const { return *cur_; }
  // The input as given.
  const std::string& display() const { return display_; }
  // Adds the archive's counters (members read and skipped, last lines
  // without a newline) to c.
  void count(Counters& c) const;

 private:
  DatasetLines() = default;
  Result<bool> next_member();

  std::string display_;
  std::unique_ptr<TarGzReader> tar_;
  std::optional<LineReader> cur_;
  uint64_t members_ = 0, skipped_ = 0, unterminated_ = 0;
  bool done_ = false;
};

// Whether an archive member named `name` holds trace data (see above).
bool is_trace_member(const std::string& name);

}  // namespace blkrr
