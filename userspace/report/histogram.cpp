#include "report/histogram.h"
#include "report/plot.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace blkrr::report {

Histogram Histogram::linear(double lo, double hi, size_t bins) {
  Histogram h;
  bins = std::max<size_t>(bins, 1);
  if (!(hi > lo)) hi = lo + 1;
  h.edges_.resize(bins + 1);
  for (size_t i = 0; i <= bins; ++i)
    h.edges_[i] = lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(bins);
  h.edges_[bins] = hi;
  h.counts_.assign(bins, 0);
  return h;
}

Histogram Histogram::logarithmic(double lo, double hi, size_t bins) {
  Histogram h;
  bins = std::max<size_t>(bins, 1);
  if (!(lo > 0)) lo = 1e-9;
  if (!(hi > lo)) hi = lo * 10;
  h.log_ = true;
  h.edges_.resize(bins + 1);
  double l0 = std::log(lo), l1 = std::log(hi);
  for (size_t i = 0; i <= bins; ++i)
    h.edges_[i] = std::exp(l0 + (l1 - l0) * static_cast<double>(i) / static_cast<double>(bins));
  h.edges_[0] = lo;
  h.edges_[bins] = hi;
  h.counts_.assign(bins, 0);
  h.log_lo_ = fast_log2(lo);
  h.log_scale_ = hi > lo ? 1 / (fast_log2(hi) - h.log_lo_) : 0;
  return h;
}

void Histogram::add(double v, uint64_t n) {
  total_ += n;
  if (v < edges_.front()) {
    below_ += n;
    return;
  }
  if (v > edges_.back()) {
    above_ += n;
    return;
  }
  // Position by formula, then fix rounding against the stored edges.
  double lo = edges_.front(), hi = edges_.back();
  double frac = log_ ? (fast_log2(v) - log_lo_) * log_scale_ : (v - lo) / (hi - lo);
  auto b = static_cast<size_t>(
      std::clamp(frac * static_cast<double>(bins()), 0.0, static_cast<double>(bins() - 1)));
  while (b > 0 && v < edges_[b]) --b;
  while (b + 1 < bins() && v >= edges_[b + 1]) ++b;
  counts_[b] += n;
}

size_t Log2Histogram::bucket(uint64_t v) {
  return v == 0 ? 0 : std::bit_width(v);
}

uint64_t Log2Histogram::total() const {
  uint64_t t = 0;
  for (auto c : counts) t += c;
  return t;
}

size_t Log2Histogram::last_used() const {
  for (size_t b = counts.size(); b-- > 0;)
    if (counts[b]) return b;
  return 0;
}

}  // namespace blkrr::report
