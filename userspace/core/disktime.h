// Brendan Gregg's adaptive disk I/O time. Per device: pending requests, the
// last completion time and the last idle->busy time. A completion is charged
// now - max(last completion, last idle->busy). Summed over the device's
// requests this is exactly the time the device had requests in flight (the
// union of their issue..completion intervals). Same rule as bpf/capture.bpf.c.
#pragma once

#include <cstdint>
#include <vector>

#include "core/request.h"

namespace blkrr {

class DiskTimeTracker {
 public:
  // A request was issued to the device at time t.
  void issue(uint64_t t);
  // A request completed at time t; returns the disk time charged to it.
  uint64_t complete(uint64_t t);
  // An in-flight request whose completion will never be seen was dropped.
  void drop_stale();
  uint64_t pending() const { return pending_; }

 private:
  uint64_t pending_ = 0;
  uint64_t last_complete_ = 0;
  uint64_t busy_start_ = 0;
};

// Recompute disk_time_ns of every record offline, per device (r.dev), from
// issue/completion times. Records without a completion get 0 and are left
// out of the device's pending count. Order of `reqs` is kept.
void compute_disk_times(std::vector<Request>& reqs);

// Independent check: total length of the union of [start, end) intervals.
struct Interval {
  uint64_t start, end;
};
uint64_t union_length(std::vector<Interval> intervals);

}  // namespace blkrr
