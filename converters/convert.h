// The conversion pipeline behind `blkrr convert`:
//   source -> selection -> reorder by start time -> window -> transformations
//   -> timescale / repeat -> sink (or --derive's snippet dealer).
// Streams in constant memory (the reorder buffer holds --reorder-window of
// trace time; --derive spools to a temporary file, see derive.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "converters/filters.h"
#include "converters/fit.h"
#include "converters/sink.h"
#include "converters/source.h"
#include "converters/split_sink.h"
#include "core/io_guard.h"

namespace blkrr {

enum class StartPoint { kIssue, kComplete };

struct ConvertOptions {
  std::vector<std::string> inputs;
  SourceOptions source;
  std::string output;                     // "-" = stdout
  Existing existing = Existing::kRefuse;  // --overwrite: kReplace (core/io_guard.h)
  std::optional<OutputFormat> to;         // default: from the output name
  int gz_level = 1;                       // fast; --gzip-level 9 for archives
  StartPoint point = StartPoint::kIssue;  // native traces: which time is the start
  Selection select;
  Transform transform;
  double timescale = 1.0;                // multiply start times
  uint64_t repeat = 1;                   // passes over the input
  std::optional<int64_t> until_ns;       // repeat until this output time
  uint32_t derive = 0;                   // N derived loads (0 = off)
  int64_t snippet_ns = 300'000'000'000;  // snippet length for --derive
  int64_t reorder_window_ns = 10'000'000'000;
  // At most this many requests wait in the reorder buffer (~120 MB): equal or
  // stalled times must not hold the whole input in memory.
  size_t reorder_max_items = size_t{1} << 20;
  std::optional<FitOptions> fit;  // --wrap/--scale: positions fit a target size
  std::string fio_file;           // fio: target file name (--fio-file); empty: kFioPlaceholder
  std::string command_line;       // recorded in outputs
  bool progress = false;          // a progress line on stderr (a terminal, not --quiet)
  // --split-by volume: one load per volume of a dataset input in the
  // directory `output` (converters/split_sink.h), at most split_max_open
  // files open at once.
  bool split_by_volume = false;
  size_t split_max_open = 16;
  size_t split_buffer_bytes = 32 << 20;  // lines buffered over all volumes
};

struct ConvertSummary {
  std::string input_format, output_format;
  std::vector<std::string> inputs, outputs;
  std::map<Op, uint64_t> in_by_op, out_by_op, not_expressible;
  uint64_t in = 0, out = 0;
  uint64_t deselected = 0;  // --pid/--comm/--cgroup/--ops
  uint64_t outside_window = 0;
  uint64_t no_completion = 0;  // --point complete without a completion time
  uint64_t out_of_order = 0;   // later than the reorder window allowed
  bool reordered = false;      // the input went through the reorder buffer
  uint64_t reorder_full = 0;   // requests pushed out early by the buffer's count limit
  uint64_t passes = 0;
  bool input_cut = false;
  uint32_t derived = 0;               // --derive: number of outputs
  int64_t snippet_ns = 0;             // reading stopped at the end of --window / --until
  int64_t first_ns = 0, last_ns = 0;  // output start times
  uint64_t max_sector = 0;            // highest end sector written
  Counters source_counters;           // skipped lines, capture losses, ...
  std::optional<FitReport> fit;       // --wrap/--scale: how positions were mapped
  std::vector<std::string> warnings;  // printed on stderr even with --quiet
  std::optional<SplitReport> split;   // --split-by volume
  // Public datasets: the format's name, time resolution and assumptions.
  std::string dataset, time_resolution;
  std::vector<std::string> assumptions;

  // The human summary printed on stderr: the input's counters that are not
  // zero, or all of them (`verbose`, -v).
  std::string text(bool verbose = false) const;
};

Result<ConvertSummary> run_convert(const ConvertOptions& opts);

}  // namespace blkrr
