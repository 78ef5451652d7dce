// The generic input layer: every trace or load format as a stream of core
// Requests, with format auto-detection. Used by `blkrr convert` and by the
// replay engine to read loads and native traces.
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

enum class InputFormat {
  kAuto,
  kNative,
  kLoad,
  kBlktrace,
  kBlkparse,
  kFioIolog,
  kMsrCsv,
  kAlibaba,  // the public multi-volume datasets (converters/dataset_csv.h)
  kTencent,
  kSystor,
  kK5cloud,
};

std::string_view input_format_name(InputFormat f);  // "native", "load", "blktrace", ...
std::optional<InputFormat> parse_input_format(std::string_view s);
// Looks at the content (not the name) of `path`.
Result<InputFormat> detect_format(const std::string& path);

struct SourceOptions {
  InputFormat format = InputFormat::kAuto;  // --from
  bool skip_bad = false;                    // skip malformed lines, counted by reason
  char blktrace_action = 'D';               // blktrace: 'Q' (queued) or 'D' (issued)
  // Device to keep ("sda", "/dev/sda", "8:0", a partition; MSR: disk number).
  // Empty: all. MSR and blktrace inputs with several devices need one.
  std::string device;
  // Passes over the inputs (replay --repeat): each pass follows the previous
  // one by a mean gap; the files are read again, never stored.
  uint64_t repeat = 1;
  // Multi-volume datasets (Alibaba, Tencent, systor'17, K5cloud): the one
  // volume to keep (--device-id), or every volume (all_volumes, for convert
  // --split-by volume); with neither, a second volume is an error.
  std::string device_id;
  bool all_volumes = false;
  // Seed of the rule that spreads whole-second times (Tencent).
  uint64_t time_seed = 1;
};

// What a source knows about its input, available after open.
struct SourceInfo {
  InputFormat format = InputFormat::kLoad;
  std::vector<std::string> paths;
  // Timestamps are absolute clock readings (native, blktrace, blkparse, MSR),
  // not times relative to the start of the load (loads, fio iologs).
  bool absolute_time = false;
  // Requests arrive sorted by issue time (false for native traces, which are
  // written in completion order).
  bool sorted_by_issue = true;
  // The input carries completion times / latencies (native, MSR, replay results).
  bool has_completion = false;
  // Free text before the header of a load (its notice), kept on conversion.
  std::vector<std::string> preamble;
  // Header of a native trace.
  std::optional<TraceHeader> trace_header;
  // Public datasets: what the input is, its time resolution and what the
  // reader assumed (the convert summary prints them).
  std::string dataset, time_resolution;
  std::vector<std::string> assumptions;
};

class RequestSource {
 public:
  virtual ~RequestSource();
  // Next request; false at the end. Errors name file and line (or offset).
  virtual Result<bool> next(Request& out) = 0;
  // Counters so far: "lines_skipped", "skipped: <reason>", and for native
  // traces the capture trailer (lost requests etc.) once at the end.
  virtual Counters counters() const { return {}; }
  const SourceInfo& info() const { return info_; }
  // The counters that every command prints as a warning once the input is
  // read (source_warnings), so that no reader of it is silent about them.
  std::vector<std::string> warnings() const;

 protected:
  SourceInfo info_;
};

// The counters of an input that every command warns about, as the lines it
// prints ("blkrr CMD: warning: LINE"): a native trace cut off (no trailer,
// a block cut), a text input whose last line has no newline, a gap between
// rotated pieces. Skipped lines (--skip-bad) are in convert's summary.
std::vector<std::string> source_warnings(const Counters& c);
// Whether a counter is one of those (a summary lists it once, as a warning).
bool is_warning_counter(const std::string& key);
// The gaps between rotated pieces an input's counters report (0: none).
uint64_t rotated_piece_gaps(const Counters& c);

// Opens one or several inputs as one stream. Several blktrace per-CPU files
// (or a blktrace base name "NAME" for NAME.blktrace.N) are merged by time;
// inputs of other formats are read one after the other, an input that starts
// before the previous one ended being moved to follow it. The pieces of one
// rotated recording (native traces with the same recording id, record
// --rotate) keep their times: they are read in sequence order, and a gap
// between two of them is counted ("gap between rotated pieces: ...").
// Every request's issue time is checked against the first one's
// (TimeSpanCheck, core/request.h): an input whose times are 146 years apart
// is an error in every command that reads it.
Result<std::unique_ptr<RequestSource>> open_source(const std::vector<std::string>& inputs,
                                                   const SourceOptions& opts);

// open_source() with opts.repeat > 1 (converters/source_repeat.cpp).
Result<std::unique_ptr<RequestSource>> open_repeated_source(const std::vector<std::string>& inputs,
                                                            const SourceOptions& opts);

// Per-format openers (converters/source_*.cpp), used by open_source.
Result<std::unique_ptr<RequestSource>> open_load_source(const std::string& path,
                                                        const SourceOptions& opts);
Result<std::unique_ptr<RequestSource>> open_native_source(const std::string& path,
                                                          const SourceOptions& opts);
Result<std::unique_ptr<RequestSource>> open_blktrace_source(const std::vector<std::string>& paths,
                                                            const SourceOptions& opts);
Result<std::unique_ptr<RequestSource>> open_blkparse_source(const std::string& path,
                                                            const SourceOptions& opts);
Result<std::unique_ptr<RequestSource>> open_fio_source(const std::string& path,
                                                       const SourceOptions& opts);
Result<std::unique_ptr<RequestSource>> open_msr_source(const std::string& path,
                                                       const SourceOptions& opts);
Result<std::unique_ptr<RequestSource>> open_alibaba_source(const std::string& path,
                                                           const SourceOptions& opts);
Result<std::unique_ptr<RequestSource>> open_tencent_source(const std::string& path,
                                                           const SourceOptions& opts);
Result<std::unique_ptr<RequestSource>> open_systor_source(const std::string& path,
                                                          const SourceOptions& opts);
Result<std::unique_ptr<RequestSource>> open_k5cloud_source(const std::string& path,
                                                           const SourceOptions& opts);

}  // namespace blkrr
