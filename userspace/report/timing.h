// What the dynamic, fidelity and summary sections need from an input's
// timing, computed once per input in bounded memory: latency and delay
// distributions (exact up to 1 M samples, then log-bucketed, see
// core/distribution.h), the in-flight profile, the longest stall, RFC 4737
// reordering and the latency outliers. Two sweeps over the samples in issue
// and completion order (sorted copies on disk when the input is large).
#pragma once

#include <array>
#include <cstdint>

#include "core/distribution.h"
#include "report/concurrency.h"
#include "report/dataset.h"
#include "report/fidelity.h"

namespace blkrr::report {

constexpr double kOutlierTimesP99 = 10;  // a latency above 10x the p99 is an outlier

struct Timing {
  // [0] all, [1] reads, [2] writes; milliseconds. delay_ms only for replays.
  std::array<Distribution, 3> latency_ms, delay_ms;
  InflightProfile profile;
  // The longest time during which requests were in flight and none completed.
  double stall_s = 0, stall_at_s = 0;
  uint64_t stall_inflight = 0;
  // The slowest request and the requests above kOutlierTimesP99 x the p99
  // (counted only when n supports a p99).
  double lat_max_ns = 0, lat_max_at_s = 0;
  uint64_t outliers = 0;
  // Set points in the order of actual issue and of completion (RFC 4737).
  Reordering by_issue, by_completion;
};

// `bucket_ns`: the in-flight profile's bucket (the plots' time bin).
Result<Timing> timing_of(const Dataset& d, uint64_t bucket_ns);

// Two-sample Kolmogorov-Smirnov distance of the latencies of two inputs,
// exact: a merge of their latency-sorted copies (0 when either has none).
Result<double> latency_ks(const Dataset& a, const Dataset& b);

}  // namespace blkrr::report
