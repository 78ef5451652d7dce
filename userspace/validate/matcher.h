// The matching engine of the validator over whole inputs: which block-layer
// requests served which replayed requests, allowing splits and merges. Pure
// computation, no BPF: `blkrr validate` ends here; the live validator feeds
// the same engine as the records come (window_matcher.h).
#pragma once

#include <vector>

#include "core/request.h"
#include "validate/validation.h"

namespace blkrr::validate {

// Compares `replayed` with the block-layer requests `observed` (sectors on the
// whole disk, same clock) and fills the report. `losses` comes from the
// capture counters (losses_from_counters); the per-record parts (completions
// not seen, issue not seen) are counted here. Runs in O((n + m) log(n + m))
// time: the records wait in heaps ordered by time, then one sweep.
Report match_requests(const std::vector<ReplayedRequest>& replayed,
                      const std::vector<Request>& observed, const Losses& losses,
                      const MatchOptions& opts);

}  // namespace blkrr::validate
