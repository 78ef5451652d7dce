// Offline validation: a replay result (or a load) against a trace of the
// device recorded separately (native .blkrr, blktrace capture, blkparse text).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "validate/align.h"
#include "validate/model.h"

namespace blkrr::validate {

struct ReplayInput {
  std::vector<ReplayedRequest> requests;  // relative times (orig_start + delay)
  bool is_replay_result = false;          // false: a load, only the intended start times
  // Replay results: orig_start of each request. In fullspeed replays every
  // request is due at 0, so replay_delay alone is the submit time; the
  // alignment tries both time bases (see docs/validate.md).
  std::vector<int64_t> orig_start_ns;
};

// Reads a blkreplay replay result or load (gzip or plain). Replay results
// give submit = orig_start + replay_delay and completion = submit +
// replay_duration; loads give submit = start and no completion.
Result<ReplayInput> read_replay_input(const std::string& path);

struct TraceInput {
  std::vector<Request> requests;
  Losses losses;
  std::string format;  // "native", "blktrace", ...
  std::vector<std::string> notes;
};

// Reads the trace of the device; `device` selects one device of a trace with
// several (empty: all). Loss counters come from a native trace's trailer.
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
