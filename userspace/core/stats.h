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
  // How the percentiles were computed: exactly from every sample, or from a
  // log-bucketed histogram within rel_error relative error (core/distribution.h).
  bool exact = true;
  double rel_error = 0;
};

// Percentile (0..100) of ascending `sorted` values, linear interpolation
// between the closest ranks (the common "type 7" definition). 0 when empty.
double percentile_sorted(const std::vector<double>& sorted, double p);
// Sorts `values` in place and summarises them.
Summary summarize(std::vector<double>& values);
// {count, min, mean, p50, p75, p90, p95, p99, p999, max, stddev, percentiles,
// percentile_rel_error} (docs/json.md).
nlohmann::json to_json(const Summary& s);
// The same for durations measured in units of `ns_per_unit` nanoseconds (1000
// for microseconds): every value an integer number of nanoseconds, for keys
// named *_ns.
nlohmann::json to_json_ns(const Summary& s, double ns_per_unit);

// Whether n samples support the p-th percentile (0..100): the tail beyond it
// must hold at least one whole sample, n >= 1 / (1 - p/100). So the median
// needs 2 samples, p95 20, p99 100, p99.9 1000. The one rule every table,
// summary and report of blkrr applies before it prints a percentile.
bool percentile_supported(uint64_t n, double p);
// `v` with `digits` significant digits ("0.00123", "12.3", "1.23e+06").
std::string fmt_significant(double v, int digits = 3);
// A percentile cell: fmt_significant(v) when n supports p, else "-".
std::string fmt_percentile(double v, uint64_t n, double p);

// Welford running mean/variance, for streams too long to keep.
class RunningStats {
 public:
  void add(double x);
  uint64_t count() const { return n_; }
  double mean() const { return mean_; }
  double stddev() const;  // sample standard deviation
  double min() const { return min_; }
  double max() const { return max_; }
  // Combines two streams' statistics (Chan et al.'s pairwise update).
  void merge(const RunningStats& o);

 private:
  uint64_t n_ = 0;
  double mean_ = 0, m2_ = 0, min_ = 0, max_ = 0;
};

}  // namespace blkrr
