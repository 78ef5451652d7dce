// A log-bucketed histogram (in the style of HdrHistogram) for summaries of
// streams too long to keep: exact count, minimum, maximum, mean and standard
// deviation; percentiles within kRelError relative error. Memory depends on
// the range of the values (128 counters per power of two in use), not on
// their number.
#pragma once

#include <cstdint>
#include <vector>

#include "core/stats.h"

namespace blkrr {

class LogHistogram {
 public:
  // Sub-buckets per power of two. A bucket spans 1/kSub of its octave's
  // lower edge; its midpoint is within 1/(2 kSub) of every value in it.
  static constexpr int kSub = 128;
  static constexpr double kRelError = 1.0 / (2.0 * kSub);  // 0.39 %

  void add(double v);
  void merge(const LogHistogram& o);
  uint64_t count() const { return stats_.count(); }
  const RunningStats& stats() const { return stats_; }
  // The value of ascending rank r (0-based, r < count()): the midpoint of its
  // bucket, clamped to [min, max]. 0 when empty.
  double value_at_rank(uint64_t r) const;
  // Percentile (0..100) with percentile_sorted()'s definition (linear
  // interpolation between the closest ranks), from the buckets.
  double percentile(double p) const;
  // Bytes held by the counters (for tests and the documentation).
  size_t memory_bytes() const;

 private:
  // Counters of one sign, by bucket index (see bucket_of()), covering
  // [base, base + counts.size()).
  struct Side {
    int64_t base = 0;
    std::vector<uint64_t> counts;
    void add(int64_t idx, uint64_t n);
  };
  static int64_t bucket_of(double magnitude);
  static double midpoint(int64_t idx);
  double clamp(double v) const;

  Side pos_, neg_;  // neg_ holds magnitudes of negative values
  uint64_t zeros_ = 0;
  RunningStats stats_;
};

}  // namespace blkrr
