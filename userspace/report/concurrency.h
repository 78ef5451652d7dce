// Requests in flight: per request at its issue, and over time (time-weighted
// distribution of the in-flight level, and a bucketed profile for plotting).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace blkrr::report {

// For each request i: how many requests are in flight just after i was
// issued, i included: requests issued before or with i (in issue order, ties
// by index) minus requests completed strictly before issue[i].
std::vector<uint32_t> inflight_at_issue(const std::vector<uint64_t>& issue,
                                        const std::vector<uint64_t>& complete);

struct InflightBucket {
  uint64_t t_ns = 0;  // bucket start
  uint32_t max = 0;   // highest level reached in the bucket
  double avg = 0;     // time-weighted mean level in the bucket
};

struct InflightProfile {
  // time_at_level[k]: nanoseconds during which exactly k requests were in
  // flight, between the first issue and the last completion.
  std::vector<double> time_at_level;
  std::vector<InflightBucket> buckets;
  double mean = 0;
  uint32_t max = 0;
};
InflightProfile inflight_profile(const std::vector<uint64_t>& issue,
                                 const std::vector<uint64_t>& complete, uint64_t bucket_ns);

}  // namespace blkrr::report
