#include "report/fidelity.h"

#include <algorithm>
#include <cmath>

namespace blkrr::report {

double ks_distance_sorted(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 0;
  size_t i = 0, j = 0;
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size()), d = 0;
  while (i < a.size() && j < b.size()) {
    double x = std::min(a[i], b[j]);
    while (i < a.size() && a[i] <= x) ++i;
    while (j < b.size() && b[j] <= x) ++j;
    d = std::max(d, std::fabs(static_cast<double>(i) / na - static_cast<double>(j) / nb));
  }
  return d;
}

double ks_distance_weights(const std::vector<double>& p, const std::vector<double>& q) {
  double sp = 0, sq = 0;
  for (double v : p) sp += v;
  for (double v : q) sq += v;
  if (sp <= 0 || sq <= 0) return 0;
  double cp = 0, cq = 0, d = 0;
  for (size_t k = 0; k < std::max(p.size(), q.size()); ++k) {
    if (k < p.size()) cp += p[k] / sp;
    if (k < q.size()) cq += q[k] / sq;
    d = std::max(d, std::fabs(cp - cq));
  }
  return d;
}

Reordering rfc4737_reordering(const std::vector<uint64_t>& seq) {
  ReorderCounter c;
  for (uint64_t s : seq) c.add(s);
  return c.result();
}

Uncertainty uncertainty(const std::vector<double>& values, std::optional<double> reference) {
  Uncertainty u;
  u.n = values.size();
  if (values.empty()) return u;
  double sum = 0;
  for (double v : values) sum += v;
  u.mean = sum / static_cast<double>(u.n);
  if (u.n > 1) {
    double ss = 0;
    for (double v : values) ss += (v - u.mean) * (v - u.mean);
    u.reproducibility = std::sqrt(ss / static_cast<double>(u.n - 1));
  }
  u.reproducibility_rel = u.mean != 0 ? u.reproducibility / std::fabs(u.mean) : 0;
  if (reference && *reference != 0) {
    double ss = 0;
    for (double v : values) {
      double e = (v - *reference) / *reference;
      ss += e * e;
    }
    u.bias_rel = std::sqrt(ss / static_cast<double>(u.n));
  }
  double b = u.bias_rel.value_or(0);
  u.combined_rel = std::sqrt(u.reproducibility_rel * u.reproducibility_rel + b * b);
  u.expanded_rel = 2 * u.combined_rel;
  return u;
}

}  // namespace blkrr::report
