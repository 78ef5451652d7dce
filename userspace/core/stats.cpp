#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace blkrr {

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  if (p <= 0) return sorted.front();
  if (p >= 100) return sorted.back();
  double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  auto lo = static_cast<size_t>(std::floor(rank));
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

Summary summarize(std::vector<double>& values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  RunningStats rs;
  for (double v : values) rs.add(v);
  s.count = values.size();
  s.min = values.front();
  s.max = values.back();
  s.mean = rs.mean();
  s.stddev = rs.stddev();
  s.p50 = percentile_sorted(values, 50);
  s.p75 = percentile_sorted(values, 75);
  s.p90 = percentile_sorted(values, 90);
  s.p95 = percentile_sorted(values, 95);
  s.p99 = percentile_sorted(values, 99);
  s.p999 = percentile_sorted(values, 99.9);
  return s;
}

namespace {

template <class F>
nlohmann::json summary_json(const Summary& s, F value) {
  return {{"count", s.count},
          {"min", value(s.min)},
          {"mean", value(s.mean)},
          {"p50", value(s.p50)},
          {"p75", value(s.p75)},
          {"p90", value(s.p90)},
          {"p95", value(s.p95)},
          {"p99", value(s.p99)},
          {"p999", value(s.p999)},
          {"max", value(s.max)},
          {"stddev", value(s.stddev)},
          {"percentiles", s.exact ? "exact" : "histogram"},
          {"percentile_rel_error", s.rel_error}};
}

}  // namespace

nlohmann::json to_json(const Summary& s) {
  return summary_json(s, [](double v) { return v; });
}

nlohmann::json to_json_ns(const Summary& s, double ns_per_unit) {
  return summary_json(
      s, [ns_per_unit](double v) { return static_cast<int64_t>(std::llround(v * ns_per_unit)); });
}

bool percentile_supported(uint64_t n, double p) {
  if (n == 0) return false;
  if (p <= 50) return n >= 2 || p <= 0;
  if (p >= 100) return true;  // the maximum
  // Rounded so that p = 99.9 gives exactly 1000 despite binary fractions.
  double need = std::ceil(100.0 / (100.0 - p) - 1e-9);
  return static_cast<double>(n) >= need;
}

std::string fmt_significant(double v, int digits) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  if (v == 0) return "0";
  char b[64];
  double a = std::fabs(v);
  if (a >= 1e-4 && a < 1e6) {
    int mag = static_cast<int>(std::floor(std::log10(a)));
    int decimals = std::max(0, digits - 1 - mag);
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
    // Rounding may carry into a new digit (9.996 -> "10.00"): drop the surplus decimal.
    std::string s = b;
    if (decimals > 0 && std::fabs(std::stod(s)) >= std::pow(10.0, mag + 1)) {
      std::snprintf(b, sizeof b, "%.*f", decimals - 1, v);
      s = b;
    }
    return s;
  }
  std::snprintf(b, sizeof b, "%.*g", digits, v);
  return b;
}

std::string fmt_percentile(double v, uint64_t n, double p) {
  return percentile_supported(n, p) ? fmt_significant(v) : "-";
}

void RunningStats::add(double x) {
  if (n_ == 0) {
    min_ = max_ = x;
  } else {
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }
  ++n_;
  double d = x - mean_;
  mean_ += d / static_cast<double>(n_);
  m2_ += d * (x - mean_);
}

void RunningStats::merge(const RunningStats& o) {
  if (o.n_ == 0) return;
  if (n_ == 0) {
    *this = o;
    return;
  }
  const double n = static_cast<double>(n_), m = static_cast<double>(o.n_);
  const double d = o.mean_ - mean_;
  mean_ += d * m / (n + m);
  m2_ += o.m2_ + d * d * n * m / (n + m);
  n_ += o.n_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

double RunningStats::stddev() const {
  return n_ > 1 ? std::sqrt(m2_ / static_cast<double>(n_ - 1)) : 0.0;
}

}  // namespace blkrr
