// Output formats of `blkrr convert`: blkreplay load (default), fio iolog v3,
// CSV and JSON lines with every field the input has, native .blkrr.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/request.h"
#include "core/result.h"
#include "core/trace_format.h"

namespace blkrr {

enum class OutputFormat { kLoad, kFio, kCsv, kJson, kNative };

// The file an iolog names when no --fio-file was given: no real device.
inline constexpr std::string_view kFioPlaceholder = "/dev/sdX";

std::string_view output_format_name(OutputFormat f);
std::optional<OutputFormat> parse_output_format(std::string_view s);
// From the file name: *.blkrr native, *.iolog fio, *.csv CSV, *.json/*.jsonl
// JSON lines, anything else a blkreplay load.
OutputFormat output_format_for_path(const std::string& path);
// The extension of a file name that names no output format (".parquet" of
// "x.parquet", also under .gz), or "": the name says its format (the above,
// *.load, *.replay, *.txt) or has no extension; output_format_for_path()
// makes such a file a blkreplay load, which a user should be told.
std::string unknown_output_extension(const std::string& path);
// Whether the format can carry the operation (loads: reads and writes; fio:
// also flush and discard; CSV, JSON and native: everything).
bool format_expresses(OutputFormat f, Op op);

// Which optional fields the input carries (CSV/JSON columns).
enum Field : uint32_t {
  kFieldLatency = 1u << 0,   // completion time / latency
  kFieldProcess = 1u << 1,   // pid, tgid, comm
  kFieldDevice = 1u << 2,    // dev, part
  kFieldFlags = 1u << 3,     // request flags (sync, meta, fua, ...)
  kFieldDiskTime = 1u << 4,  // adaptive disk time (native traces)
  kFieldCgroup = 1u << 5,
  kFieldError = 1u << 6,
  kFieldRecord = 1u << 7,  // record flags and absolute clock times (native)
};

struct SinkOptions {
  OutputFormat format = OutputFormat::kLoad;
  int gz_level = 6;                       // for *.gz outputs
  std::vector<std::string> preamble;      // load: notice lines before the header
  std::string fio_file{kFioPlaceholder};  // fio: the file every request goes to
  uint32_t fields = 0;                    // CSV/JSON: Field bits
  TraceHeader header;                     // native: header of the new trace
};

// One request on its way out: `start_ns` is its start time in the output
// (rebased, transformed); `shift_ns` is how far the transformations moved it,
// so formats with absolute clock times (native) move issue and completion alike.
struct OutRecord {
  const Request* r = nullptr;
  int64_t start_ns = 0;
  int64_t shift_ns = 0;
};

class RequestSink {
 public:
  virtual ~RequestSink();
  // Requests whose operation the format cannot express are not passed to
  // write(); the converter counts them.
  virtual bool expresses(Op op) const = 0;
  virtual Status write(const OutRecord& rec) = 0;
  // counters: the source's (native: written into the trailer).
  virtual Status close(const Counters& counters) = 0;
};

Result<std::unique_ptr<RequestSink>> open_sink(const std::string& path, const SinkOptions& opts);
// CSV and JSON lines (converters/sink_text.cpp), used by open_sink.
Result<std::unique_ptr<RequestSink>> open_text_sink(const std::string& path,
                                                    const SinkOptions& opts);

}  // namespace blkrr
