// Putting a replay result's relative times on the clock of a trace recorded
// separately (offline validation). See docs/validate.md, "Time bases".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/request.h"
#include "validate/validation.h"

namespace blkrr::validate {

struct Alignment {
  enum class Mode {
    kOffset,  // trace time = replay time + offset (the normal case)
    kOrder,   // no offset fits: times cannot be mapped, pair by order and sector
    kNone,    // nothing to align (no replayed or no traced requests)
  };
  Mode mode = Mode::kNone;
  int64_t offset_ns = 0;   // kOrder: first submission put on the first traced issue
  uint64_t votes = 0;      // sampled requests agreeing with the offset
  uint64_t sampled = 0;    // sampled requests having a same-sector candidate in the trace
  uint64_t spread_ns = 0;  // width of the offset range most requests agree on
  std::string describe() const;
};

struct AlignOptions {
  size_t sample = 4096;  // first submitted requests used for the vote
  // Width of a request's offset interval when its completion time is unknown
  // (loads): the block layer issued it at most this long after its start time.
  uint64_t tolerance_ns = 2'000'000;
  uint64_t clock_error_ns = 20'000;  // timestamps of both sides may be off by this much
  size_t max_candidates = 64;        // requests whose sector recurs more often are not sampled
  double min_agreement = 0.2;        // fraction of the sample needed for kOffset
};

// `replayed` times are relative (replay result: due time + delay), `traced`
// are absolute (CLOCK_MONOTONIC of the recording host). kOffset when an
// offset wins the vote, else kOrder.
Alignment align_times(const std::vector<ReplayedRequest>& replayed,
                      const std::vector<Request>& traced, const AlignOptions& opts = {});
// The sampled requests whose offset interval contains `offset_ns` (an offset
// known otherwise, e.g. from --start-at): votes and sampled are set, mode is
// kOffset with spread 0.
Alignment votes_at(const std::vector<ReplayedRequest>& replayed, const std::vector<Request>& traced,
                   int64_t offset_ns, const AlignOptions& opts = {});
// Shifts the replayed times by the offset (kOffset and kOrder). Durations are
// never changed: replay latencies stay what the replayer measured.
void apply_alignment(const Alignment& a, std::vector<ReplayedRequest>& replayed);

}  // namespace blkrr::validate
