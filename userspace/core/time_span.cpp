#include "core/time_span.h"

namespace blkrr {

std::string TimeSpanCheck::problem(int64_t t_ns) {
  if (!have_first_) {
    have_first_ = true;
    first_ns_ = t_ns;
    return {};
  }
  const bool later = t_ns >= first_ns_;
  const uint64_t gap = later ? static_cast<uint64_t>(t_ns) - static_cast<uint64_t>(first_ns_)
                             : static_cast<uint64_t>(first_ns_) - static_cast<uint64_t>(t_ns);
  if (gap <= kMaxSpanNs) return {};
  return "a request starts more than 146 years " + std::string(later ? "after" : "before") +
         " the first one (" + std::to_string(t_ns) + " ns vs " + std::to_string(first_ns_) +
         " ns): the input's times are corrupt";
}

}  // namespace blkrr
