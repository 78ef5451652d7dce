#include "report/timing.h"

#include <algorithm>
#include <cmath>

#include "core/stats.h"

namespace blkrr::report {

namespace {

// Distributions and the slowest request: any order.
void distributions(const Dataset& d, Timing& t) {
  bool delay = d.has_delay();
  d.samples.for_each([&](const Sample& s) {
    int dir = s.write() ? 2 : 1;
    if (s.has_latency()) {
      double ms = static_cast<double>(s.latency_ns) / 1e6;
      t.latency_ms[0].add(ms);
      t.latency_ms[dir].add(ms);
      if (static_cast<double>(s.latency_ns) >= t.lat_max_ns) {
        t.lat_max_ns = static_cast<double>(s.latency_ns);
        t.lat_max_at_s = static_cast<double>(s.issue_ns()) / 1e9;
      }
    }
    if (delay) {
      double ms = static_cast<double>(s.delay_ns) / 1e6;
      t.delay_ms[0].add(ms);
      t.delay_ms[dir].add(ms);
    }
  });
}

// The longest time without a completion while requests were in flight,
// fed by the in-flight sweep.
struct StallFinder {
  Timing& t;
  uint64_t level = 0, busy_from = 0;
  void issue(uint64_t at) {
    if (level++ == 0) busy_from = at;
  }
  void complete(uint64_t c) {
    if (level == 0) return;
    if (c > busy_from && static_cast<double>(c - busy_from) / 1e9 > t.stall_s) {
      t.stall_s = static_cast<double>(c - busy_from) / 1e9;
      t.stall_at_s = static_cast<double>(busy_from) / 1e9;
      t.stall_inflight = level;
    }
    --level;
    busy_from = c;
  }
};

}  // namespace

Result<Timing> timing_of(const Dataset& d, uint64_t bucket_ns) {
  Timing t;
  distributions(d, t);
  if (d.samples.empty()) return t;
  auto by_issue = d.sorted(SortKey::kIssue);
  if (!by_issue) return by_issue.error();
  auto by_completion = d.sorted(SortKey::kCompletion);
  if (!by_completion) return by_completion.error();
  const SampleBounds& b = d.samples.bounds();
  InflightProfiler prof(b.issue_min, std::max(b.complete_max, b.issue_max), bucket_ns);
  StallFinder stall{t};
  ReorderCounter at_issue, at_completion;
  uint64_t n = t.latency_ms[0].count();
  double limit_ms =
      percentile_supported(n, 99) ? kOutlierTimesP99 * t.latency_ms[0].percentile(99) : -1;
  sweep_in_flight(
      **by_issue, **by_completion,
      [&](const Sample& s, uint32_t) {
        prof.issue(s.issue_ns());
        stall.issue(s.issue_ns());
        at_issue.add(s.t_ns);
        if (limit_ms >= 0 && s.has_latency() && static_cast<double>(s.latency_ns) / 1e6 > limit_ms)
          ++t.outliers;
      },
      [&](uint64_t c) {
        prof.complete(c);
        stall.complete(c);
      });
  (*by_completion)->for_each([&](const Sample& s) { at_completion.add(s.t_ns); });
  BLKRR_TRY((*by_issue)->status());
  BLKRR_TRY((*by_completion)->status());
  t.profile = prof.finish();
  t.by_issue = at_issue.result();
  t.by_completion = at_completion.result();
  return t;
}

namespace {

// The latencies of a latency-sorted store, in order (samples without one skipped).
class LatencyCursor {
 public:
  explicit LatencyCursor(const SampleStore& s) : r_(s) { more_ = r_.next(p_, n_); }
  bool peek(uint64_t& v) {
    while (more_) {
      if (k_ == n_) {
        k_ = 0;
        more_ = r_.next(p_, n_);
      } else if (!p_[k_].has_latency()) {
        ++k_;
      } else {
        v = p_[k_].latency_ns;
        return true;
      }
    }
    return false;
  }
  void pop() { ++k_; }

 private:
  SampleStore::Reader r_;
  const Sample* p_ = nullptr;
  size_t n_ = 0, k_ = 0;
  bool more_ = false;
};

}  // namespace

Result<double> latency_ks(const Dataset& a, const Dataset& b) {
  uint64_t na = a.samples.bounds().latency_n, nb = b.samples.bounds().latency_n;
  if (na == 0 || nb == 0) return 0.0;
  auto sa = a.sorted(SortKey::kLatency);
  if (!sa) return sa.error();
  auto sb = b.sorted(SortKey::kLatency);
  if (!sb) return sb.error();
  // As ks_distance_sorted: at each value x, the fractions at or below x.
  LatencyCursor ca(**sa), cb(**sb);
  uint64_t i = 0, j = 0, va = 0, vb = 0;
  double d = 0;
  while (ca.peek(va) && cb.peek(vb)) {
    uint64_t x = std::min(va, vb);
    for (; ca.peek(va) && va <= x; ca.pop()) ++i;
    for (; cb.peek(vb) && vb <= x; cb.pop()) ++j;
    d = std::max(d, std::fabs(static_cast<double>(i) / static_cast<double>(na) -
                              static_cast<double>(j) / static_cast<double>(nb)));
  }
  BLKRR_TRY((*sa)->status());
  BLKRR_TRY((*sb)->status());
  return d;
}

}  // namespace blkrr::report
