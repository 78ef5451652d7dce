// The one check of an input's time span that every reader applies.
#pragma once

#include <cstdint>
#include <string>

namespace blkrr {

// Times of one input more than 2^62 ns (146 years) from its first request's
// are corrupt. Every reader checks each request's time against the first one
// seen, so that every command stops at the same request with the same words.
class TimeSpanCheck {
 public:
  static constexpr uint64_t kMaxSpanNs = uint64_t{1} << 62;
  // Empty when `t_ns` is within the span, else why the input is corrupt.
  std::string problem(int64_t t_ns);

 private:
  bool have_first_ = false;
  int64_t first_ns_ = 0;
};

}  // namespace blkrr
