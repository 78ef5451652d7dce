// The dynamic section of a report: how a device answered a replay (or, for
// native traces, the recorded load): latency, delay, throughput, in-flight.
// Reads each input's Timing (computed once, see timing.h) from the Context.
#pragma once

#include <vector>

#include "report/context.h"
#include "report/dataset.h"

namespace blkrr::report {

// The time bin of the dynamic plots of `data` (at least 1 ms): the bucket of
// the in-flight profiles their Timings are computed with.
uint64_t dynamic_bucket_ns(const std::vector<const Dataset*>& data);

Status add_dynamic(Context& ctx, const std::vector<const Dataset*>& data);

}  // namespace blkrr::report
