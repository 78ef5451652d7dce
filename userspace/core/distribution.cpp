#include "core/distribution.h"

#include <algorithm>
#include <atomic>

namespace blkrr {

namespace {
std::atomic<uint64_t> g_exact_limit{Distribution::kDefaultExactLimit};
}

void Distribution::set_default_exact_limit(uint64_t n) {
  g_exact_limit = n;
}

uint64_t Distribution::default_exact_limit() {
  return g_exact_limit;
}

Distribution::Distribution() : limit_(g_exact_limit) {}

void Distribution::spill() {
  spilled_ = true;
  std::vector<double>().swap(samples_);  // give the memory back
}

void Distribution::add(double v) {
  hist_.add(v);
  if (spilled_) return;
  if (samples_.size() >= limit_) return spill();
  if (!samples_.empty() && v < samples_.back()) sorted_ = false;
  samples_.push_back(v);
}

void Distribution::merge(const Distribution& o) {
  hist_.merge(o.hist_);
  if (spilled_) return;
  if (o.spilled_ || samples_.size() + o.samples_.size() > limit_) return spill();
  samples_.insert(samples_.end(), o.samples_.begin(), o.samples_.end());
  sorted_ = false;
}

void Distribution::sort() const {
  if (sorted_) return;
  std::sort(samples_.begin(), samples_.end());
  sorted_ = true;
}

double Distribution::percentile(double p) const {
  if (spilled_) return hist_.percentile(p);
  sort();
  return percentile_sorted(samples_, p);
}

Summary Distribution::summary() const {
  Summary s;
  const RunningStats& rs = hist_.stats();
  s.count = rs.count();
  if (s.count == 0) return s;
  s.min = rs.min();
  s.max = rs.max();
  s.mean = rs.mean();
  s.stddev = rs.stddev();
  s.p50 = percentile(50);
  s.p75 = percentile(75);
  s.p90 = percentile(90);
  s.p95 = percentile(95);
  s.p99 = percentile(99);
  s.p999 = percentile(99.9);
  s.exact = !spilled_;
  s.rel_error = spilled_ ? LogHistogram::kRelError : 0;
  return s;
}

}  // namespace blkrr
