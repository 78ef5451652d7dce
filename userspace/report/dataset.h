// One report input, read into compact Samples: a blkreplay load, a replay
// result, a native trace (with per-process accounting) or any other input
// format blkrr converts. The samples live in a SampleStore (bounded memory,
// the rest in a temporary file); every other request type is only counted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "report/sample.h"
#include "report/sample_store.h"

namespace blkrr::report {

enum class DataKind { kLoad, kTrace, kReplay };
const char* kind_name(DataKind k);  // "load", "trace", "replay"

struct ProcInfo {
  uint32_t tgid = 0;
  std::string comm;
  uint64_t requests = 0, bytes = 0, disk_time_ns = 0;
};

// Where an input's latencies were measured: in the block layer (native and
// blktrace traces: issue to the device until completion, and a replay's
// block-layer latency that `replay --validate` measured), in user space (a
// replay's submission to completion, including the kernel's path above the
// device), or as a load stored them (its source's measurement, unstated).
enum class LatencyLayer { kNone, kBlock, kUserSpace, kLoad };
const char* layer_name(LatencyLayer l);  // "block layer", "user space", "as stored in the load"

// A replay's block-layer latency as `replay --validate` summarised it in the
// result's SUMMARY line (validation.latency_ns.block), nanoseconds.
struct BlockLatency {
  uint64_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0, mean = 0, max = 0;
};

struct Dataset {
  std::string path;   // input file
  std::string label;  // short name used in plots and file names
  DataKind kind = DataKind::kLoad;
  SampleStore samples;            // in file order (replay results: completion order)
  std::vector<ProcInfo> procs;    // native traces; Sample::proc indexes it
  std::vector<std::string> info;  // preamble and INFO:/WARN:/SUMMARY: lines
  // What reading met that every command warns about (converters/source.h
  // source_warnings): a trace cut off, a last line without a newline.
  std::vector<std::string> warnings;
  uint64_t other_requests = 0;  // flushes, discards, ... (not in samples)
  bool fake = false;            // dry run or replay without O_DIRECT
  std::optional<double> wraparound_factor;
  // Replays run with --speedup F: set points are on the replay clock, i.e. the
  // original times divided by F.
  double time_scale = 1;
  // Replays: ended early (Ctrl-C, a signal, or a stop such as a failing
  // device), how many requests the load demanded, and what --validate said.
  bool interrupted = false;
  std::string stop_reason;
  std::optional<uint64_t> planned;
  std::string validation_verdict;  // "COMPLETE", "INCOMPLETE", ...; empty: not validated
  // blkrr replay results: the timing they were replayed with, as the spread
  // of repeated replays groups them ("dependency", "timestamp --order
  // per-process", "timestamp --speedup 2"); empty when the input does not say.
  std::string timing;
  // blkrr replay results: the span (first submission to last completion) the
  // replay measured (SUMMARY achieved.span_s). The result lines give each
  // request's set point and lateness, which for a dependency replay do not add
  // up to its submission time (docs/replay.md), so the span is the replay's own.
  std::optional<double> achieved_span_s;
  std::optional<BlockLatency> block_latency;

  // The layer of the per-request latencies in `samples`.
  LatencyLayer latency_layer() const;

  bool has_latency() const { return samples.bounds().latency_n > 0; }
  bool has_delay() const;
  // The samples ordered by `key`: the store itself when it is already in that
  // order, else a sorted copy made on first use and kept until drop_sorted().
  Result<const SampleStore*> sorted(SortKey key) const;
  void drop_sorted(SortKey key) const { views_.erase(key); }
  void drop_sorted() const { views_.clear(); }

 private:
  mutable std::map<SortKey, SampleStore> views_;
};

// Reads any input blkrr understands. `label` empty: derived from the file name.
Result<Dataset> load_dataset(const std::string& path, const std::string& label);
// The pieces of one rotated recording (core/rotation.h group_rotated_pieces)
// as one dataset, labelled by their stem.
Result<Dataset> load_dataset(const std::vector<std::string>& paths, const std::string& label);

// Scans the preamble/info lines for the FAKE marker and the wraparound factor.
void apply_info_markers(Dataset& d);

// The saved form (DIR/data/LABEL.requests.csv.gz): '#' lines with the kind,
// markers, info lines and processes, then one CSV row per sample. `--bins`
// re-reports from it without the original input.
Status save_dataset(const Dataset& d, const std::string& path);
Result<Dataset> load_saved_dataset(const std::string& path);

// A label made of [A-Za-z0-9._-] from a file name ("run1.replay.gz" -> "run1").
std::string label_from_path(const std::string& path);

}  // namespace blkrr::report
