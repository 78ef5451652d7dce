#include "core/disktime.h"

#include <algorithm>
#include <map>

namespace blkrr {

void DiskTimeTracker::issue(uint64_t t) {
  if (pending_ == 0) busy_start_ = t;  // idle -> busy
  ++pending_;
}

uint64_t DiskTimeTracker::complete(uint64_t t) {
  uint64_t from = std::max(last_complete_, busy_start_);
  uint64_t charge = t > from ? t - from : 0;
  last_complete_ = std::max(last_complete_, t);
  if (pending_ > 0) --pending_;  // never below zero (requests in flight at attach)
  return charge;
}

void DiskTimeTracker::drop_stale() {
  if (pending_ > 0) --pending_;
}

void compute_disk_times(std::vector<Request>& reqs) {
  // Events of every device, in time order; at equal times completions go
  // first so that back-to-back requests are not counted as overlapping.
  struct Ev {
    uint64_t t;
    bool is_complete;
    size_t idx;
  };
  std::vector<Ev> evs;
  evs.reserve(reqs.size() * 2);
  for (size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].disk_time_ns = 0;
    // A zero-length interval adds nothing to the busy time; leaving it out also
    // keeps its completion from being ordered before its own issue.
    if (!reqs[i].completed() || reqs[i].complete_ns <= reqs[i].issue_ns) continue;
    evs.push_back({reqs[i].issue_ns, false, i});
    evs.push_back({reqs[i].complete_ns, true, i});
  }
  std::sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) {
    if (a.t != b.t) return a.t < b.t;
    return a.is_complete && !b.is_complete;
  });
  std::map<DevT, DiskTimeTracker> trackers;
  for (const auto& e : evs) {
    auto& tr = trackers[reqs[e.idx].dev];
    if (e.is_complete)
      reqs[e.idx].disk_time_ns = tr.complete(e.t);
    else
      tr.issue(e.t);
  }
}

uint64_t union_length(std::vector<Interval> iv) {
  std::sort(iv.begin(), iv.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  uint64_t total = 0;
  bool open = false;
  uint64_t cs = 0, ce = 0;
  for (const auto& x : iv) {
    if (x.end <= x.start) continue;
    if (!open || x.start > ce) {
      if (open) total += ce - cs;
      cs = x.start;
      ce = x.end;
      open = true;
    } else {
      ce = std::max(ce, x.end);
    }
  }
  if (open) total += ce - cs;
  return total;
}

}  // namespace blkrr
