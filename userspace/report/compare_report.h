// The fidelity section (`--compare ORIGINAL REPLAY...`): how faithfully
// replays reproduced the original load, and with what uncertainty.
#pragma once

#include <vector>

#include "report/context.h"
#include "report/dataset.h"

namespace blkrr::report {

// Scalar metrics of one run used for the uncertainty table (original and replays).
struct RunMetrics {
  double iops = 0, mibs = 0, duration_s = 0;  // MiB/s
  std::optional<double> latency_mean_ms, latency_p50_ms, latency_p99_ms, inflight_mean;
  std::optional<double> issue_error_mean_ms, issue_error_p99_ms;
};
// `t`: the input's Timing (nullptr: only rate and duration).
RunMetrics run_metrics(const Dataset& d, const Timing* t);

// Arrival order -> RFC 4737 reordering of the set points: by actual issue
// time (what the replayer controls) and by completion time.
struct OrderFidelity {
  double issue_percent = 0, completion_percent = 0;
  uint64_t issue_reordered = 0, completion_reordered = 0, total = 0;
};
OrderFidelity order_fidelity(const Timing& replay);

Status add_compare(Context& ctx, const Dataset& original,
                   const std::vector<const Dataset*>& replays);

}  // namespace blkrr::report
