#include "report/repeat_report.h"

#include <cmath>

#include "core/units.h"
#include "report/compare_report.h"

namespace blkrr::report {

namespace {

RepeatValues values_of(const Context& ctx, const Dataset& d) {
  const RunMetrics r = run_metrics(d, ctx.timing(d));
  RepeatValues v;
  if (r.duration_s > 0) {
    v[RepeatMetric::kSpan] = r.duration_s;
    v[RepeatMetric::kIops] = r.iops;
  }
  v[RepeatMetric::kLatencyMean] = r.latency_mean_ms;
  v[RepeatMetric::kLatencyP50] = r.latency_p50_ms;
  v[RepeatMetric::kLatencyP99] = r.latency_p99_ms;
  return v;
}

nlohmann::json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json spread_json(const MetricSpread& s) {
  return {{"n", s.over.count},
          {"mean", s.over.count ? nlohmann::json(s.over.mean) : nlohmann::json()},
          {"sd", s.over.count > 1 ? nlohmann::json(s.over.stddev) : nlohmann::json()},
          {"min", s.over.count ? nlohmann::json(s.over.min) : nlohmann::json()},
          {"max", s.over.count ? nlohmann::json(s.over.max) : nlohmann::json()},
          {"original", opt_json(s.original)},
          {"error_rel", opt_json(s.error_rel)},
          {"error_max_rel", opt_json(s.error_max_rel)}};
}

std::string cell(const std::optional<double>& v) {
  return v ? fmt_short(*v) : "-";
}
std::string pct_cell(const std::optional<double>& v) {
  return v ? fmt_error_pct(*v) : "-";
}

}  // namespace

std::vector<TimingSpread> replay_spreads(const Context& ctx, const Dataset& orig,
                                         const std::vector<const Dataset*>& replays) {
  std::vector<RepeatRun> runs;
  runs.reserve(replays.size());
  for (const Dataset* r : replays)
    runs.push_back({r->timing.empty() ? "unstated" : r->timing, r->label, values_of(ctx, *r)});
  return timing_spreads(runs, values_of(ctx, orig));
}

Status add_repeat_spread(Context& ctx, Section& sec, const Dataset& orig,
                         const std::vector<const Dataset*>& replays, nlohmann::json& js) {
  const auto spreads = replay_spreads(ctx, orig, replays);
  auto f = ctx.csv("cmp-repeat-spread", {"timing", "metric", "replays", "mean", "sd", "min", "max",
                                         "original", "error_rel", "error_max_rel"});
  if (!f) return f.error();
  std::vector<std::vector<std::string>> rows;
  nlohmann::json& out = js["repeats"];
  out["by_timing"] = nlohmann::json::array();
  for (const TimingSpread& t : spreads) {
    nlohmann::json g = {
        {"timing", t.timing}, {"replays", t.labels}, {"score", opt_json(t.score())}};
    for (RepeatMetric m : kRepeatMetrics) {
      const MetricSpread& s = t[m];
      g["metrics"][repeat_metric_key(m)] = spread_json(s);
      if (s.over.count == 0) continue;
      const bool sd = s.over.count > 1;
      f->text_row(
          {t.timing, repeat_metric_key(m), std::to_string(s.over.count), fmt_short(s.over.mean),
           sd ? fmt_short(s.over.stddev) : "", fmt_short(s.over.min), fmt_short(s.over.max),
           s.original ? fmt_short(*s.original) : "", s.error_rel ? fmt_short(*s.error_rel) : "",
           s.error_max_rel ? fmt_short(*s.error_max_rel) : ""});
      rows.push_back({t.timing, repeat_metric_name(m), std::to_string(s.over.count),
                      fmt_short(s.over.mean), sd ? fmt_short(s.over.stddev) : "-",
                      fmt_short(s.over.min) + " - " + fmt_short(s.over.max), cell(s.original),
                      pct_cell(s.error_rel), pct_cell(s.error_max_rel)});
    }
    out["by_timing"].push_back(g);
  }
  BLKRR_TRY(f->close());
  const TimingSpread* best = best_timing(spreads);
  out["best_timing"] = best ? nlohmann::json(best->timing) : nlohmann::json();
  out["summary"] = best_timing_sentence(spreads);
  sec.blocks.push_back(table(
      "Spread of repeated replays, by timing: mean, sample standard deviation and range over the "
      "replays of each timing, and the error of the mean (and of the farthest replay) against "
      "the original's own value",
      {"timing", "metric", "replays", "mean", "sd", "min - max", "original", "error of mean",
       "farthest"},
      rows));
  if (orig.has_latency() && !replays.empty() &&
      orig.latency_layer() != replays.front()->latency_layer())
    sec.blocks.push_back(note(
        "Latency errors compare the original's " + std::string(layer_name(orig.latency_layer())) +
        " latency with the replays' " + layer_name(replays.front()->latency_layer()) +
        " latency: the replays' include the kernel's path above the "
        "device."));
  if (!out["summary"].get<std::string>().empty())
    sec.blocks.push_back(note(out["summary"].get<std::string>()));
  return {};
}

}  // namespace blkrr::report
