#include "core/log_histogram.h"

#include <algorithm>
#include <cmath>

namespace blkrr {

void LogHistogram::Side::add(int64_t idx, uint64_t n) {
  if (counts.empty()) {
    base = idx;
    counts.assign(1, 0);
  } else if (idx < base) {
    counts.insert(counts.begin(), static_cast<size_t>(base - idx), 0);
    base = idx;
  } else if (idx >= base + static_cast<int64_t>(counts.size())) {
    counts.resize(static_cast<size_t>(idx - base + 1), 0);
  }
  counts[static_cast<size_t>(idx - base)] += n;
}

// frexp: magnitude = m * 2^e with m in [0.5, 1); the octave is split into
// kSub equal buckets.
int64_t LogHistogram::bucket_of(double magnitude) {
  int e = 0;
  const double m = std::frexp(magnitude, &e);
  auto sub = static_cast<int64_t>((m * 2.0 - 1.0) * kSub);
  sub = std::clamp<int64_t>(sub, 0, kSub - 1);
  return static_cast<int64_t>(e) * kSub + sub;
}

double LogHistogram::midpoint(int64_t idx) {
  const int64_t e = idx >= 0 ? idx / kSub : -((-idx + kSub - 1) / kSub);
  const int64_t sub = idx - e * kSub;
  const double m = 0.5 + (static_cast<double>(sub) + 0.5) / (2.0 * kSub);
  return std::ldexp(m, static_cast<int>(e));
}

double LogHistogram::clamp(double v) const {
  return std::clamp(v, stats_.min(), stats_.max());
}

void LogHistogram::add(double v) {
  if (std::isnan(v)) return;
  stats_.add(v);
  if (v == 0)
    ++zeros_;
  else if (v > 0)
    pos_.add(bucket_of(v), 1);
  else
    neg_.add(bucket_of(-v), 1);
}

void LogHistogram::merge(const LogHistogram& o) {
  for (size_t i = 0; i < o.pos_.counts.size(); ++i)
    if (o.pos_.counts[i]) pos_.add(o.pos_.base + static_cast<int64_t>(i), o.pos_.counts[i]);
  for (size_t i = 0; i < o.neg_.counts.size(); ++i)
    if (o.neg_.counts[i]) neg_.add(o.neg_.base + static_cast<int64_t>(i), o.neg_.counts[i]);
  zeros_ += o.zeros_;
  stats_.merge(o.stats_);
}

double LogHistogram::value_at_rank(uint64_t r) const {
  if (count() == 0) return 0;
  if (r == 0) return stats_.min();
  if (r + 1 >= count()) return stats_.max();
  uint64_t seen = 0;
  // Ascending: negative values by falling magnitude, zeros, positive values.
  for (size_t i = neg_.counts.size(); i-- > 0;) {
    seen += neg_.counts[i];
    if (r < seen) return clamp(-midpoint(neg_.base + static_cast<int64_t>(i)));
  }
  seen += zeros_;
  if (r < seen) return 0;
  for (size_t i = 0; i < pos_.counts.size(); ++i) {
    seen += pos_.counts[i];
    if (r < seen) return clamp(midpoint(pos_.base + static_cast<int64_t>(i)));
  }
  return stats_.max();
}

double LogHistogram::percentile(double p) const {
  const uint64_t n = count();
  if (n == 0) return 0;
  if (p <= 0) return stats_.min();
  if (p >= 100) return stats_.max();
  const double rank = p / 100.0 * static_cast<double>(n - 1);
  const auto lo = static_cast<uint64_t>(std::floor(rank));
  const uint64_t hi = std::min(lo + 1, n - 1);
  const double frac = rank - static_cast<double>(lo);
  const double a = value_at_rank(lo);
  return frac == 0 ? a : a + (value_at_rank(hi) - a) * frac;
}

size_t LogHistogram::memory_bytes() const {
  return (pos_.counts.capacity() + neg_.counts.capacity()) * sizeof(uint64_t);
}

}  // namespace blkrr
