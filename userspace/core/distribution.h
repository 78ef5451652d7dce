// The statistics of one measured quantity (a latency, a delay, a size) over a
// stream of any length. Up to an exact limit (default 1 M samples) every
// sample is kept and the percentiles are exact; past it the samples are
// dropped and the percentiles come from a LogHistogram, within
// LogHistogram::kRelError (0.39 %) relative error. count, min, max, mean and
// stddev are exact either way. The Summary says which (exact, rel_error).
#pragma once

#include <cstdint>
#include <vector>

#include "core/log_histogram.h"
#include "core/stats.h"

namespace blkrr {

class Distribution {
 public:
  static constexpr uint64_t kDefaultExactLimit = 1'000'000;
  // The limit of Distributions constructed afterwards; UINT64_MAX keeps every
  // sample (the commands' --exact-percentiles), 0 always uses the histogram.
  static void set_default_exact_limit(uint64_t n);
  static uint64_t default_exact_limit();

  Distribution();
  explicit Distribution(uint64_t exact_limit) : limit_(exact_limit) {}

  void add(double v);
  void merge(const Distribution& o);
  uint64_t count() const { return hist_.count(); }
  bool exact() const { return !spilled_; }
  double percentile(double p) const;
  Summary summary() const;

 private:
  void spill();
  void sort() const;

  uint64_t limit_;
  bool spilled_ = false;
  mutable bool sorted_ = true;
  mutable std::vector<double> samples_;  // while exact
  LogHistogram hist_;
};

}  // namespace blkrr
