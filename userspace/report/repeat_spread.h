// The spread of repeated replays (`report --compare ORIGINAL R1 R2 ...`),
// by timing: replays of one timing (timestamp, fullspeed, dependency, an
// --order) are repeats of one measurement; each metric gets its mean,
// standard deviation and range over them and the error of the mean against
// the original's own value. The timing whose replays came closest to the
// original (in span and IOPS) is named in the report's summary.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/stats.h"

namespace blkrr::report {

// The metrics one replay is judged by.
enum class RepeatMetric { kSpan, kIops, kLatencyMean, kLatencyP50, kLatencyP99 };
constexpr RepeatMetric kRepeatMetrics[] = {RepeatMetric::kSpan, RepeatMetric::kIops,
                                           RepeatMetric::kLatencyMean, RepeatMetric::kLatencyP50,
                                           RepeatMetric::kLatencyP99};
const char* repeat_metric_key(RepeatMetric m);   // "span_s", "iops", "latency_mean_ms", ...
const char* repeat_metric_name(RepeatMetric m);  // "span [s]", "IOPS", ...

// One run's values (original or replay); a value it lacks is empty.
struct RepeatValues {
  std::optional<double> v[std::size(kRepeatMetrics)];
  std::optional<double>& operator[](RepeatMetric m) { return v[static_cast<size_t>(m)]; }
  const std::optional<double>& operator[](RepeatMetric m) const {
    return v[static_cast<size_t>(m)];
  }
};

struct MetricSpread {
  Summary over;                         // count, mean, stddev (sample), min, max of the replays
  std::optional<double> original;       // the original's own value
  std::optional<double> error_rel;      // (mean - original) / original
  std::optional<double> error_max_rel;  // the replay farthest from the original, signed
};

struct TimingSpread {
  std::string timing;               // "dependency", "timestamp --order per-process", ...
  std::vector<std::string> labels;  // its replays
  MetricSpread m[std::size(kRepeatMetrics)];
  const MetricSpread& operator[](RepeatMetric x) const { return m[static_cast<size_t>(x)]; }
  // The larger of |error| of span and IOPS (empty when either is unknown):
  // how the timings are ranked.
  std::optional<double> score() const;
};

// A relative error as "+1.2 %" (never "-0.0 %").
std::string fmt_error_pct(double rel);

// One replay: its timing's name, label and values.
struct RepeatRun {
  std::string timing, label;
  RepeatValues values;
};

// Groups `runs` by timing (in order of first appearance) and summarises
// each metric against `original`.
std::vector<TimingSpread> timing_spreads(const std::vector<RepeatRun>& runs,
                                         const RepeatValues& original);
// The timing with the smallest score, if any timing has one.
const TimingSpread* best_timing(const std::vector<TimingSpread>& t);
// "dependency reproduced the original best (3 replays): span -1.2 % (sd 0.8 %),
// IOPS +1.3 % (sd 0.9 %); timestamp: span +41.0 %, IOPS -29.1 %; ...", or
// "" when no timing has a score.
std::string best_timing_sentence(const std::vector<TimingSpread>& t);

}  // namespace blkrr::report
