// The shared reader of the public multi-volume block-trace datasets
// (Alibaba cloud block traces, Tencent CBS, SNIA systor'17, Fujitsu K5cloud):
// comma-separated lines of one request each, a volume id on every line. Each
// format (converters/source_<format>.cpp) gives its layout and a parser of
// one line's fields; this reader does the rest the same way for all:
//  - plain or gzip files, and .tgz/.tar.gz archives read as a stream, every
//    member that is a trace file in archive order (converters/tar_stream.h);
//  - a header line is skipped, lines longer than kMaxDatasetLine and
//    malformed lines are errors naming file:line (or, with --skip-bad,
//    counted by reason);
//  - --device-id selects one volume; without it a second volume ends the
//    reading with an error naming both, unless the caller reads every volume
//    (convert --split-by volume);
//  - whole-second times are spread over their second (spread_second_ns).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "converters/source.h"

namespace blkrr {

// Longest line a dataset reader accepts (real lines are under 100 bytes).
constexpr size_t kMaxDatasetLine = 4096;
// At most this many requests of one second wait to be spread (64 bytes each: 16 MB).
constexpr size_t kMaxSpreadGroup = size_t{1} << 18;

// One line as a format's parser understood it.
struct DatasetRecord {
  uint64_t time_ns = 0;           // issue time; whole seconds for kWholeSeconds formats
  uint64_t latency_ns = kNoTime;  // response time, if the format has one
  uint64_t offset = 0;            // bytes
  uint64_t bytes = 0;
  uint64_t volume = 0;
  Op op = Op::kRead;
  // A well-formed line that is not a request (systor'17's empty IOType): it
  // is left out and counted under this name.
  const char* left_out = nullptr;
};

struct DatasetFormat {
  InputFormat format;
  const char* title;       // "Alibaba cloud block trace"
  const char* layout;      // the fields, for messages and the summary
  const char* header;      // a first line equal to this is skipped (nullptr: none)
  size_t fields;           // commas + 1 on every line
  const char* resolution;  // the time resolution, for the summary
  const char* assumed;     // what the reader assumes, for the summary
  bool whole_seconds;      // times are whole seconds: spread them
  bool has_completion;
  // Parses the fields of a line; nullptr if fine, else why it is malformed.
  const char* (*parse)(const std::string_view* f, DatasetRecord& out);
};

// Opens `path` (file, gzip file or .tgz archive) as a source of `fmt`.
Result<std::unique_ptr<RequestSource>> open_dataset_source(const std::string& path,
                                                           const SourceOptions& opts,
                                                           const DatasetFormat& fmt);

// The dataset format a data (or header) line is in, if it is one of them.
std::optional<InputFormat> detect_dataset_line(std::string_view line);

// The spreading rule of whole-second formats: the i-th of the n requests of
// second `sec` (i counted over every volume, in file order) is placed at
//   sec + (i + u) / n seconds,  u = splitmix64(seed, sec, i) / 2^64 in [0, 1)
// so the times keep the file's order, fill the second evenly, stay inside
// it, and are the same whatever volume is selected. Deterministic for a seed.
uint64_t spread_second_ns(uint64_t sec, uint64_t i, uint64_t n, uint64_t seed);

// ---- field parsers shared by the formats ----
// "R"/"W" (any case); false otherwise.
bool parse_rw_letter(std::string_view s, Op& op);
// A volume, device or LUN id (0 .. 0xfffff: it becomes the minor number).
bool parse_volume_id(std::string_view s, uint64_t& out);
// Non-negative decimal seconds below 2^62 ns.
bool parse_dataset_seconds(std::string_view s, uint64_t& ns);

}  // namespace blkrr
