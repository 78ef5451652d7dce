// The scatter plots of the dynamic section, thinned to one point per
// 2.5x2.5-pixel cell; see dynamic_report.h.
#pragma once

#include <vector>

#include "report/context.h"
#include "report/dataset.h"

namespace blkrr::report {

// sonar, latency over set point / completion / index / in flight for `data`
// (inputs with latencies and a Timing in `ctx`); delay over set point and
// in flight, latency vs delay for `replays`.
Status scatter_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                     const std::vector<const Dataset*>& replays);

// The largest value of a bound over inputs, in seconds.
double max_over(const std::vector<const Dataset*>& data, uint64_t SampleBounds::*f);

}  // namespace blkrr::report
