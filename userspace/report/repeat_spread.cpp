#include "report/repeat_spread.h"

#include <algorithm>
#include <cmath>

#include "core/units.h"

namespace blkrr::report {

const char* repeat_metric_key(RepeatMetric m) {
  switch (m) {
    case RepeatMetric::kSpan:
      return "span_s";
    case RepeatMetric::kIops:
      return "iops";
    case RepeatMetric::kLatencyMean:
      return "latency_mean_ms";
    case RepeatMetric::kLatencyP50:
      return "latency_p50_ms";
    case RepeatMetric::kLatencyP99:
      return "latency_p99_ms";
  }
  return "?";
}

const char* repeat_metric_name(RepeatMetric m) {
  switch (m) {
    case RepeatMetric::kSpan:
      return "span [s]";
    case RepeatMetric::kIops:
      return "IOPS";
    case RepeatMetric::kLatencyMean:
      return "latency mean [ms]";
    case RepeatMetric::kLatencyP50:
      return "latency median [ms]";
    case RepeatMetric::kLatencyP99:
      return "latency p99 [ms]";
  }
  return "?";
}

std::optional<double> TimingSpread::score() const {
  const auto& s = (*this)[RepeatMetric::kSpan].error_rel;
  const auto& i = (*this)[RepeatMetric::kIops].error_rel;
  if (!s || !i) return std::nullopt;
  return std::max(std::fabs(*s), std::fabs(*i));
}

namespace {

MetricSpread spread_of(std::vector<double> vals, std::optional<double> original) {
  MetricSpread s;
  s.original = original;
  if (vals.empty()) return s;
  if (original && *original != 0) {
    double far = 0;
    for (double v : vals) {
      const double e = (v - *original) / *original;
      if (std::fabs(e) > std::fabs(far)) far = e;
    }
    s.error_max_rel = far;
  }
  s.over = summarize(vals);
  if (original && *original != 0) s.error_rel = (s.over.mean - *original) / *original;
  return s;
}

std::string metric_words(const TimingSpread& t, RepeatMetric m, const char* name) {
  const MetricSpread& s = t[m];
  std::string w = std::string(name) + " " + fmt_error_pct(*s.error_rel);
  if (s.over.count > 1 && s.original && *s.original != 0)
    w += strfmt(" (sd %.1f %%)", 100 * s.over.stddev / std::fabs(*s.original));
  return w;
}

}  // namespace

std::string fmt_error_pct(double rel) {
  double v = std::round(1000 * rel) / 10;
  if (v == 0) v = 0;  // no "-0.0 %"
  return strfmt("%+.1f %%", v);
}

std::vector<TimingSpread> timing_spreads(const std::vector<RepeatRun>& runs,
                                         const RepeatValues& original) {
  std::vector<TimingSpread> out;
  std::vector<std::vector<const RepeatRun*>> members;
  for (const RepeatRun& r : runs) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&r](const TimingSpread& t) { return t.timing == r.timing; });
    if (it == out.end()) {
      out.push_back({});
      out.back().timing = r.timing;
      members.emplace_back();
      it = out.end() - 1;
    }
    it->labels.push_back(r.label);
    members[static_cast<size_t>(it - out.begin())].push_back(&r);
  }
  for (size_t g = 0; g < out.size(); ++g)
    for (RepeatMetric m : kRepeatMetrics) {
      std::vector<double> vals;
      for (const RepeatRun* r : members[g])
        if (r->values[m]) vals.push_back(*r->values[m]);
      out[g].m[static_cast<size_t>(m)] = spread_of(std::move(vals), original[m]);
    }
  return out;
}

const TimingSpread* best_timing(const std::vector<TimingSpread>& t) {
  const TimingSpread* best = nullptr;
  for (const TimingSpread& x : t)
    if (x.score() && (!best || *x.score() < *best->score())) best = &x;
  return best;
}

std::string best_timing_sentence(const std::vector<TimingSpread>& t) {
  const TimingSpread* best = best_timing(t);
  if (!best) return "";
  auto words = [](const TimingSpread& x) {
    return metric_words(x, RepeatMetric::kSpan, "span") + ", " +
           metric_words(x, RepeatMetric::kIops, "IOPS");
  };
  const size_t n = best->labels.size();
  std::string s = (t.size() > 1 ? best->timing + " timing reproduced the original best ("
                                : best->timing + " timing against the original (") +
                  std::to_string(n) + (n == 1 ? " replay" : " replays") + "): " + words(*best);
  for (const TimingSpread& x : t)
    if (&x != best && x.score()) s += "; " + x.timing + ": " + words(x);
  return s;
}

}  // namespace blkrr::report
