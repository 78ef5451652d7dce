// Per-interval deltas from the cumulative in-kernel counters. The kernel
// keeps a process's counters after it exits, so the difference of two
// snapshots still shows processes that exited during the interval.
#pragma once

#include <map>
#include <vector>

#include "capture/capture.h"  // AggEntry, DeviceBusy (plain structs, header only)
#include "core/trace_format.h"

namespace blkrr::live {

struct AggKeyLess {
  bool operator()(const AggKey& a, const AggKey& b) const;
};

// Feed cumulative snapshots; each call returns what changed since the
// previous one (the first call: everything since the counters started).
// A counter that went backwards (entry evicted and created again in the
// kernel) counts from zero. The deltas carry the entry's uid and ppid.
class AggDelta {
 public:
  std::vector<AggEntry> update(const std::vector<AggEntry>& cumulative);
  // The entries of these keys were removed from the kernel map after the
  // last update counted their final values: if one is created again, its
  // counters start from zero.
  void forget(const std::vector<AggKey>& keys);
  // Keys known from the last update (minus the forgotten ones).
  size_t size() const { return prev_.size(); }

 private:
  std::map<AggKey, AggValue, AggKeyLess> prev_;
};

class BusyDelta {
 public:
  // Deltas of busy_ns and requests; `pending` is the current value.
  std::vector<DeviceBusy> update(const std::vector<DeviceBusy>& cumulative);

 private:
  std::map<DevT, DeviceBusy> prev_;
};

// Counters (drops, lost completions...) that grew, by how much.
class CounterDelta {
 public:
  Counters update(const Counters& cumulative);

 private:
  Counters prev_;
};

}  // namespace blkrr::live
