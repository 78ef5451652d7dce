// Offline validation: a replay result (or a load) against a trace of the
// device recorded separately (native .blkrr, blktrace capture, blkparse text).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "validate/align.h"
#include "validate/validation.h"
#include "validate/pairing.h"
#include "validate/replay_timing.h"

namespace blkrr::validate {

struct ReplayInput {
  std::vector<ReplayedRequest> requests;  // times after the replay's start instant
  bool is_replay_result = false;          // false: a load, only the intended start times
  ReplayTiming timing;                    // replay results: the recorded timing settings
  // Replay results without timing settings (blkreplay's): orig_start and
  // replay_delay of each request. In fullspeed replays every request is due
  // at 0, so replay_delay alone is the submit time; the alignment then tries
  // both time bases (see docs/validate.md).
  std::vector<int64_t> orig_start_ns, delay_ns;
  ReplayOrigin origin;  // where and when it ran (replay results of blkrr)
  // What reading met that every command warns about (source_warnings).
  std::vector<std::string> warnings;
  // The last submission or completion after the start instant.
  uint64_t span_ns() const;
};

// Reads a blkreplay replay result or load (gzip or plain). Replay results
// give submit = due time + replay_delay, the due time from the recorded
// timing settings (orig_start / speedup, 0 at full speed; orig_start without
// settings) and completion = submit + replay_duration; loads give submit =
// start and no completion. A file without requests is an error: there is
// nothing to validate.
Result<ReplayInput> read_replay_input(const std::string& path);

struct TraceInput {
  std::vector<Request> requests;
  Losses losses;
  std::string format;  // "native", "blktrace", ...
  // Native traces: trace time = wall-clock time (ns since the epoch) + this,
  // from the header's clock anchors (maps a replay's --start-at instant).
  std::optional<int64_t> realtime_to_trace_ns;
  std::vector<std::string> notes;
  std::vector<std::string> warnings;  // as for ReplayInput
  // Records equal to the one before them, held once (see read_trace_input).
  uint64_t identical_records = 0;
  TraceExtent extent;  // host, devices, wall-clock span (for check_pairing)
};

// Reads the trace of the device; `device` selects one device of a trace with
// several (empty: all). Loss counters come from a native trace's trailer. A
// record equal to the one before it (times, sector, size, operation, device,
// process) is held once and counted (identical_records, in the notes): a
// trace of one record repeated 64 M times takes the memory of one.
Result<TraceInput> read_trace_input(const std::vector<std::string>& paths,
                                    const std::string& device);

struct OfflineOptions {
  MatchOptions match;  // slack is widened by the alignment's spread
  AlignOptions align;
  std::optional<int64_t> offset_ns;  // force this offset instead of the vote
  uint64_t sector_offset = 0;        // added to replayed sectors (replay on a partition)
};

// Aligns the time bases, matches, and notes how the times were aligned.
Report validate_offline(ReplayInput replay, const TraceInput& trace, const OfflineOptions& o);

}  // namespace blkrr::validate
