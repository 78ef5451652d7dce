#include "report/concurrency.h"
#include "report/static_analysis.h"

#include <algorithm>
#include <numeric>

namespace blkrr::report {

std::vector<uint32_t> inflight_at_issue(const std::vector<uint64_t>& issue,
                                        const std::vector<uint64_t>& complete) {
  size_t n = issue.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return issue[a] < issue[b]; });
  std::vector<uint64_t> done(complete.begin(), complete.end());
  std::sort(done.begin(), done.end());
  std::vector<uint32_t> out(n);
  size_t c = 0;
  for (size_t k = 0; k < n; ++k) {
    uint32_t i = order[k];
    while (c < n && done[c] < issue[i]) ++c;
    out[i] = static_cast<uint32_t>(k + 1 - c);
  }
  return out;
}

InflightProfile inflight_profile(const std::vector<uint64_t>& issue,
                                 const std::vector<uint64_t>& complete, uint64_t bucket_ns) {
  InflightProfile p;
  size_t n = issue.size();
  if (n == 0) return p;
  if (bucket_ns == 0) bucket_ns = 1;
  std::vector<uint64_t> up(issue), down(complete);
  std::sort(up.begin(), up.end());
  std::sort(down.begin(), down.end());
  uint64_t t0 = up.front(), t_end = std::max(down.back(), up.back());
  bucket_ns = series_window(bucket_ns, t_end - t0);  // bounded number of buckets
  size_t nb = std::max<uint64_t>(1, (t_end - t0 + bucket_ns - 1) / bucket_ns);
  p.buckets.resize(nb);
  for (size_t b = 0; b < nb; ++b) p.buckets[b].t_ns = t0 + b * bucket_ns;
  uint64_t level = 0, now = t0;
  double weighted = 0;
  // Account `level` over [now, until) into the distribution and the buckets.
  auto advance = [&](uint64_t until) {
    while (now < until) {
      size_t b = (now - t0) / bucket_ns;
      uint64_t bend = std::min(until, t0 + (b + 1) * bucket_ns);
      double dt = static_cast<double>(bend - now);
      if (p.time_at_level.size() <= level) p.time_at_level.resize(level + 1, 0);
      p.time_at_level[level] += dt;
      p.buckets[b].avg += dt * static_cast<double>(level);
      weighted += dt * static_cast<double>(level);
      now = bend;
    }
  };
  size_t i = 0, j = 0;
  while (i < n || j < n) {
    // Completions at the same instant as an issue are applied first.
    bool take_down = j < n && (i >= n || down[j] <= up[i]);
    uint64_t t = take_down ? down[j] : up[i];
    advance(t);
    if (take_down) {
      if (level > 0) --level;
      ++j;
    } else {
      ++level;
      ++i;
      size_t b = std::min<size_t>((t - t0) / bucket_ns, nb - 1);
      p.buckets[b].max = std::max<uint32_t>(p.buckets[b].max, static_cast<uint32_t>(level));
      p.max = std::max<uint32_t>(p.max, static_cast<uint32_t>(level));
    }
  }
  for (size_t b = 0; b < nb; ++b) {
    uint64_t bstart = t0 + b * bucket_ns;
    uint64_t bend = std::min(t_end, bstart + bucket_ns);
    double len = bend > bstart ? static_cast<double>(bend - bstart) : 0;
    p.buckets[b].avg = len > 0 ? p.buckets[b].avg / len : 0;
  }
  if (t_end > t0) p.mean = weighted / static_cast<double>(t_end - t0);
  if (p.time_at_level.empty()) p.time_at_level.assign(1, 0);
  return p;
}

}  // namespace blkrr::report
