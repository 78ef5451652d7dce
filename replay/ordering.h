// Ordering policy: which earlier requests a request waits for before it may
// start, independent of its due time.
//   none         open loop: nothing
//   per-process  the previous request of the same original process (pid from
//                a native trace) must have completed
//   global       every earlier request must have completed
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "core/result.h"

namespace blkrr::replay {

enum class OrderMode { kNone, kPerProcess, kGlobal };

Result<OrderMode> parse_order(std::string_view s);  // none | per-process | global
std::string_view order_name(OrderMode m);

class OrderTracker {
 public:
  explicit OrderTracker(OrderMode m) : mode_(m) {}

  OrderMode mode() const { return mode_; }
  // May a request of process `pid` start now, as far as the requests already
  // started are concerned? (The replayer also keeps requests of one process
  // in their original order while they wait.)
  bool may_start(uint32_t pid) const;
  void on_start(uint32_t pid);
  void on_complete(uint32_t pid);
  uint64_t in_flight() const { return in_flight_; }

 private:
  OrderMode mode_;
  uint64_t in_flight_ = 0;
  std::unordered_map<uint32_t, uint32_t> by_pid_;  // in flight per process
};

}  // namespace blkrr::replay
