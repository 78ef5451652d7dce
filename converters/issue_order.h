// A request stream in issue order. Native traces are written in completion
// order; this puts them back in issue order within a window of trace time and
// a bounded number of requests (memory stays bounded whatever the input).
// Inputs already sorted by issue time pass through.
#pragma once

#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "converters/source.h"

namespace blkrr {

class IssueOrder {
 public:
  static constexpr size_t kMaxItems = size_t{1} << 20;

  // `window_ns`: how far out of issue order the input may be.
  explicit IssueOrder(RequestSource& src, uint64_t window_ns = 10'000'000'000ull);

  // The next request in issue order; false at the end. A request that came
  // later than the window allowed is given the previous request's issue time
  // (counted in out_of_order()).
  Result<bool> next(Request& out);
  uint64_t read() const { return read_; }
  uint64_t out_of_order() const { return out_of_order_; }

 private:
  struct Later {
    bool operator()(const std::pair<uint64_t, Request>& a,
                    const std::pair<uint64_t, Request>& b) const {
      if (a.second.issue_ns != b.second.issue_ns) return a.second.issue_ns > b.second.issue_ns;
      return a.first > b.first;
    }
  };

  RequestSource& src_;
  bool reorder_;
  uint64_t window_ns_;
  bool src_done_ = false;
  uint64_t read_ = 0, out_of_order_ = 0;
  uint64_t arrivals_ = 0, max_issue_ = 0, last_emitted_ = 0;
  std::priority_queue<std::pair<uint64_t, Request>, std::vector<std::pair<uint64_t, Request>>,
                      Later>
      heap_;
};

}  // namespace blkrr
