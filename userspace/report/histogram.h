// Fixed-size histograms: memory does not grow with the number of values.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace blkrr::report {

// `bins` buckets with linear or logarithmic edges over [lo, hi]. Values
// outside the range are counted in `below` / `above`; hi itself falls into
// the last bucket.
class Histogram {
 public:
  static Histogram linear(double lo, double hi, size_t bins);
  static Histogram logarithmic(double lo, double hi, size_t bins);  // needs 0 < lo

  void add(double v, uint64_t n = 1);
  size_t bins() const { return counts_.size(); }
  double lower(size_t b) const { return edges_[b]; }
  double upper(size_t b) const { return edges_[b + 1]; }
  uint64_t count(size_t b) const { return counts_[b]; }
  uint64_t below() const { return below_; }
  uint64_t above() const { return above_; }
  uint64_t total() const { return total_; }

 private:
  Histogram() = default;
  std::vector<double> edges_;
  std::vector<uint64_t> counts_;
  bool log_ = false;
  double log_lo_ = 0, log_scale_ = 0;  // log2(lo), 1 / log2(hi / lo)
  uint64_t below_ = 0, above_ = 0, total_ = 0;
};

// Power-of-two buckets (the bitesize/seeksize view): bucket 0 holds 0,
// bucket b >= 1 holds values in [2^(b-1), 2^b).
struct Log2Histogram {
  std::array<uint64_t, 65> counts{};
  static size_t bucket(uint64_t v);
  static uint64_t bucket_low(size_t b) { return b == 0 ? 0 : 1ull << (b - 1); }
  void add(uint64_t v) { ++counts[bucket(v)]; }
  uint64_t total() const;
  size_t last_used() const;  // index of the highest non-empty bucket (0 if empty)
};

}  // namespace blkrr::report
