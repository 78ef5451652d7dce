#include "replay/ordering.h"

#include <string>

namespace blkrr::replay {

Result<OrderMode> parse_order(std::string_view s) {
  if (s == "none") return OrderMode::kNone;
  if (s == "per-process") return OrderMode::kPerProcess;
  if (s == "global") return OrderMode::kGlobal;
  return Error(ErrorKind::kUsage,
               "unknown order '" + std::string(s) + "' (use none, per-process or global)");
}

std::string_view order_name(OrderMode m) {
  switch (m) {
    case OrderMode::kNone:
      return "none";
    case OrderMode::kPerProcess:
      return "per-process";
    case OrderMode::kGlobal:
      return "global";
  }
  return "?";
}

bool OrderTracker::may_start(uint32_t pid) const {
  switch (mode_) {
    case OrderMode::kNone:
      return true;
    case OrderMode::kGlobal:
      return in_flight_ == 0;
    case OrderMode::kPerProcess: {
      auto it = by_pid_.find(pid);
      return it == by_pid_.end() || it->second == 0;
    }
  }
  return true;
}

void OrderTracker::on_start(uint32_t pid) {
  ++in_flight_;
  if (mode_ == OrderMode::kPerProcess) ++by_pid_[pid];
}

void OrderTracker::on_complete(uint32_t pid) {
  if (in_flight_ > 0) --in_flight_;
  if (mode_ == OrderMode::kPerProcess) {
    auto it = by_pid_.find(pid);
    if (it != by_pid_.end() && --it->second == 0) by_pid_.erase(it);
  }
}

}  // namespace blkrr::replay
