// The dynamic section of a report: how a device answered a replay (or, for
// native traces, the recorded load): latency, delay, throughput, in-flight.
#pragma once

#include <vector>

#include "report/context.h"
#include "report/dataset.h"

namespace blkrr::report {

// Per-request times on the dataset clock and the in-flight level at issue.
struct Timeline {
  std::vector<uint64_t> issue, complete;
  std::vector<uint32_t> inflight;
};
Timeline make_timeline(const Dataset& d);

Status add_dynamic(Context& ctx, const std::vector<const Dataset*>& data);

}  // namespace blkrr::report
