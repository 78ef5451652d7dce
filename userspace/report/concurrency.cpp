#include "report/concurrency.h"

#include <algorithm>

#include "report/static_analysis.h"

namespace blkrr::report {

InflightProfiler::InflightProfiler(uint64_t t0, uint64_t t_end, uint64_t bucket_ns)
    : t0_(t0), t_end_(std::max(t0, t_end)), now_(t0) {
  bucket_ns_ = series_window(std::max<uint64_t>(bucket_ns, 1), t_end_ - t0_);  // bounded
  size_t nb = std::max<uint64_t>(1, (t_end_ - t0_ + bucket_ns_ - 1) / bucket_ns_);
  p_.buckets.resize(nb);
  for (size_t b = 0; b < nb; ++b) p_.buckets[b].t_ns = t0_ + b * bucket_ns_;
}

// Accounts the current level over [now, until) into the distribution and the buckets.
void InflightProfiler::advance(uint64_t until) {
  until = std::min(until, t_end_);
  while (now_ < until) {
    size_t b = std::min<size_t>((now_ - t0_) / bucket_ns_, p_.buckets.size() - 1);
    uint64_t bend = std::min(until, t0_ + (b + 1) * bucket_ns_);
    if (bend <= now_) bend = until;
    double dt = static_cast<double>(bend - now_);
    if (p_.time_at_level.size() <= level_) p_.time_at_level.resize(level_ + 1, 0);
    p_.time_at_level[level_] += dt;
    p_.buckets[b].avg += dt * static_cast<double>(level_);
    weighted_ += dt * static_cast<double>(level_);
    now_ = bend;
  }
}

void InflightProfiler::issue(uint64_t t) {
  advance(t);
  ++level_;
  size_t b = std::min<size_t>((std::max(t, t0_) - t0_) / bucket_ns_, p_.buckets.size() - 1);
  auto lv = static_cast<uint32_t>(level_);
  p_.buckets[b].max = std::max(p_.buckets[b].max, lv);
  p_.max = std::max(p_.max, lv);
}

void InflightProfiler::complete(uint64_t t) {
  advance(t);
  if (level_ > 0) --level_;
}

InflightProfile InflightProfiler::finish() {
  advance(t_end_);
  for (size_t b = 0; b < p_.buckets.size(); ++b) {
    uint64_t bstart = t0_ + b * bucket_ns_;
    uint64_t bend = std::min(t_end_, bstart + bucket_ns_);
    double len = bend > bstart ? static_cast<double>(bend - bstart) : 0;
    p_.buckets[b].avg = len > 0 ? p_.buckets[b].avg / len : 0;
  }
  if (t_end_ > t0_) p_.mean = weighted_ / static_cast<double>(t_end_ - t0_);
  if (p_.time_at_level.empty()) p_.time_at_level.assign(1, 0);
  return std::move(p_);
}

InflightProfile inflight_profile(const SampleStore& by_issue, const SampleStore& by_completion,
                                 uint64_t bucket_ns) {
  if (by_issue.empty()) return {};
  const SampleBounds& b = by_issue.bounds();
  InflightProfiler prof(b.issue_min, std::max(b.complete_max, b.issue_max), bucket_ns);
  sweep_in_flight(
      by_issue, by_completion, [&](const Sample& s, uint32_t) { prof.issue(s.issue_ns()); },
      [&](uint64_t c) { prof.complete(c); });
  return prof.finish();
}

namespace {

// Request i as a sample: issued at issue[i], completed at complete[i], its
// index in `sector`.
SampleStore as_store(const std::vector<uint64_t>& issue, const std::vector<uint64_t>& complete) {
  SampleStore s;
  for (size_t i = 0; i < issue.size(); ++i) {
    Sample x;
    x.t_ns = issue[i];
    x.sector = i;
    x.flags = kSampleHasLatency;
    x.latency_ns = complete[i] > issue[i] ? complete[i] - issue[i] : 0;
    s.push_back(x);
  }
  return s;
}

}  // namespace

std::vector<uint32_t> inflight_at_issue(const std::vector<uint64_t>& issue,
                                        const std::vector<uint64_t>& complete) {
  SampleStore s = as_store(issue, complete);
  auto by_issue = sorted_copy(s, SortKey::kIssue);
  auto by_completion = sorted_copy(s, SortKey::kCompletion);
  std::vector<uint32_t> out(issue.size());
  if (!by_issue || !by_completion) return out;
  sweep_in_flight(
      *by_issue, *by_completion, [&](const Sample& x, uint32_t level) { out[x.sector] = level; },
      [](uint64_t) {});
  return out;
}

InflightProfile inflight_profile(const std::vector<uint64_t>& issue,
                                 const std::vector<uint64_t>& complete, uint64_t bucket_ns) {
  SampleStore s = as_store(issue, complete);
  auto by_issue = sorted_copy(s, SortKey::kIssue);
  auto by_completion = sorted_copy(s, SortKey::kCompletion);
  if (!by_issue || !by_completion) return {};
  return inflight_profile(*by_issue, *by_completion, bucket_ns);
}

}  // namespace blkrr::report
