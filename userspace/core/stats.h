// Summary statistics used by replay summaries, reports and benchmarks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace blkrr {

struct Summary {
  uint64_t count = 0;
  double min = 0, max = 0, mean = 0, stddev = 0;  // stddev: sample (n-1)
  double p50 = 0, p75 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0;
};

// Percentile (0..100) of ascending `sorted` values, linear interpolation
// between the closest ranks (the common "type 7" definition). 0 when empty.
double percentile_sorted(const std::vector<double>& sorted, double p);
// Sorts `values` in place and summarises them.
Summary summarize(std::vector<double>& values);
nlohmann::json to_json(const Summary& s);

// Welford running mean/variance, for streams too long to keep.
class RunningStats {
 public:
  void add(double x);
  uint64_t count() const { return n_; }
  double mean() const { return mean_; }
  double stddev() const;  // sample standard deviation
  double min() const { return min_; }
  double max() const { return max_; }

 private:
  uint64_t n_ = 0;
  double mean_ = 0, m2_ = 0, min_ = 0, max_ = 0;
};

}  // namespace blkrr
