// Replay fidelity statistics: distribution distances, reordering and the
// measurement uncertainty of repeated replays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace blkrr::report {

// Two-sample Kolmogorov-Smirnov distance sup|F_a(x) - F_b(x)| of two sorted
// samples. 0 when either is empty.
double ks_distance_sorted(const std::vector<double>& a, const std::vector<double>& b);
// The same for two distributions over the levels 0, 1, 2, ... given as
// weights (e.g. time spent at each concurrency level); normalised here.
double ks_distance_weights(const std::vector<double>& p, const std::vector<double>& q);

// RFC 4737 reordering: `seq` are the sequence numbers (here: set points) in
// arrival order; an arrival is reordered when its number is below the
// highest seen so far (equal numbers have no demanded order among each other).
struct Reordering {
  uint64_t total = 0, reordered = 0;
  double percent() const {
    return total ? 100.0 * static_cast<double>(reordered) / static_cast<double>(total) : 0;
  }
};
Reordering rfc4737_reordering(const std::vector<uint64_t>& seq);
// The same, one arrival at a time.
class ReorderCounter {
 public:
  void add(uint64_t seq) {
    ++r_.total;
    if (any_ && seq < highest_) {
      ++r_.reordered;
    } else {
      highest_ = seq;
      any_ = true;
    }
  }
  const Reordering& result() const { return r_; }

 private:
  Reordering r_;
  uint64_t highest_ = 0;
  bool any_ = false;
};

// Uncertainty of one metric measured by n repeated replays, following the
// within-lab reproducibility + bias approach (Nordtest TR 537 style):
//   mean, reproducibility s_R (sample stddev), relative s_R/|mean|,
//   bias = RMS of the relative errors (x_i - ref)/ref against the original,
//   combined u_c = sqrt((s_R/|mean|)^2 + bias^2) (relative), expanded U = 2 u_c.
// Without a reference value the bias is unknown and u_c is s_R alone; with a
// single replay s_R is unknown (0) and u_c is the bias alone.
struct Uncertainty {
  size_t n = 0;
  double mean = 0;
  double reproducibility = 0;      // s_R, unit of the metric
  double reproducibility_rel = 0;  // s_R / |mean|
  std::optional<double> bias_rel;  // RMS of relative errors
  double combined_rel = 0;
  double expanded_rel = 0;  // k = 2
};
Uncertainty uncertainty(const std::vector<double>& values, std::optional<double> reference);

}  // namespace blkrr::report
