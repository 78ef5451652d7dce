#include "report/compare_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/stats.h"
#include "core/units.h"
#include "report/concurrency.h"
#include "report/csv.h"
#include "report/dynamic_report.h"
#include "report/fidelity.h"
#include "report/histogram.h"
#include "report/repeat_report.h"
#include "report/static_analysis.h"
#include "report/timeplot.h"
#include "report/time_axis.h"

namespace blkrr::report {

namespace {

// Quantile grid for CDF plots: fine in the tail, bounded in size.
std::vector<double> cdf_grid() {
  std::vector<double> g;
  for (int i = 0; i <= 990; ++i) g.push_back(i / 10.0);
  for (int i = 1; i <= 100; ++i) g.push_back(99.0 + i / 100.0);
  return g;
}

}  // namespace

RunMetrics run_metrics(const Dataset& d, const Timing* t) {
  RunMetrics m;
  const SampleBounds& b = d.samples.bounds();
  if (b.count == 0) return m;
  bool lat = d.has_latency();
  uint64_t first = b.issue_min, last = lat ? b.complete_max : b.issue_max;
  m.duration_s = static_cast<double>(last - first) / 1e9;
  if (d.achieved_span_s) m.duration_s = *d.achieved_span_s;  // a replay's own measurement
  if (m.duration_s > 0) {
    m.iops = static_cast<double>(b.count) / m.duration_s;
    m.mibs = static_cast<double>(b.read_bytes + b.write_bytes) / kBytesPerMiB / m.duration_s;
  }
  if (!t) return m;
  const Distribution& l = t->latency_ms[0];
  if (lat && l.count()) {
    m.latency_mean_ms = l.summary().mean;
    m.latency_p50_ms = l.percentile(50);
    if (percentile_supported(l.count(), 99)) m.latency_p99_ms = l.percentile(99);
    m.inflight_mean = t->profile.mean;
  }
  const Distribution& e = t->delay_ms[0];
  if (d.has_delay() && e.count()) {
    m.issue_error_mean_ms = e.summary().mean;
    if (percentile_supported(e.count(), 99)) m.issue_error_p99_ms = e.percentile(99);
  }
  return m;
}

OrderFidelity order_fidelity(const Timing& t) {
  OrderFidelity o;
  o.total = t.by_issue.total;
  o.issue_reordered = t.by_issue.reordered;
  o.issue_percent = t.by_issue.percent();
  o.completion_reordered = t.by_completion.reordered;
  o.completion_percent = t.by_completion.percent();
  return o;
}

namespace {

void compare_notes(Section& sec, const Dataset& orig, const std::vector<const Dataset*>& replays) {
  for (const Dataset* r : replays) {
    if (r->samples.size() != orig.samples.size())
      sec.blocks.push_back(note(r->label + " has " + std::to_string(r->samples.size()) +
                                    " requests, the original " + orig.label + " has " +
                                    std::to_string(orig.samples.size()) +
                                    "; distributions are still compared.",
                                true));
    if (r->fake)
      sec.blocks.push_back(note(r->label + " is a FAKE RESULT (dry run or no O_DIRECT).", true));
  }
}

// Issue error (actual issue minus set point) of each replay: histogram and summary.
Status issue_error(Context& ctx, Section& sec, const std::vector<const Dataset*>& replays,
                   nlohmann::json& js) {
  PlotSpec p;
  p.name = "cmp-issue-error";
  p.title = "Issue error (actual issue minus demanded issue time): narrow around 0 = on time";
  p.xlabel = "issue error [ms]";
  // Logarithmic counts: a tail of a few late requests shows beside the bulk.
  p.ylabel = "requests (log scale)";
  p.logy = true;
  double lo = std::numeric_limits<double>::max(), hi = -lo;
  for (const Dataset* r : replays)
    if (!r->samples.empty()) {
      lo = std::min(lo, static_cast<double>(r->samples.bounds().delay_min) / 1e6);
      hi = std::max(hi, static_cast<double>(r->samples.bounds().delay_max) / 1e6);
    }
  std::vector<std::pair<std::string, Summary>> rows;
  for (size_t i = 0; i < replays.size(); ++i) {
    const Dataset& r = *replays[i];
    auto h = Histogram::linear(lo, hi, ctx.bins());
    r.samples.for_each([&h](const Sample& s) { h.add(static_cast<double>(s.delay_ns) / 1e6); });
    const Timing* t = ctx.timing(r);
    Summary su = t ? t->delay_ms[0].summary() : Summary{};
    rows.emplace_back(r.label, su);
    js["issue_error_ns"][r.label] = to_json_ns(su, 1e6);  // su is in ms
    std::string file = "cmp-" + r.label + "-issue-error";
    auto f = ctx.csv(file, {"bucket_low_ms", "bucket_high_ms", "requests"});
    if (!f) return f.error();
    for (size_t b = 0; b < h.bins(); ++b)
      f->row({h.lower(b), h.upper(b), static_cast<double>(h.count(b))});
    BLKRR_TRY(f->close());
    if (!r.samples.empty())
      p.series.push_back(
          {r.label, Context::data_path(file), kNonZero3, "steps", neutral_color(i + 1)});
    mark_plot(p, r);
  }
  sec.blocks.push_back(summary_table("Issue error", "ms", rows));
  ctx.add_plot(sec, p);
  return {};
}

// The original's requests per second (demanded) and each replay's actual issue rate.
Status issue_rates(Context& ctx, Section& sec, const std::vector<const Dataset*>& all) {
  PlotSpec p;
  p.name = "cmp-iops";
  p.title = "Original vs replayed request rate: the replay should follow the grey original";
  p.ylabel = "requests per second";
  uint64_t span = 0;
  for (const Dataset* d : all) span = std::max(span, d->samples.bounds().issue_max);
  TimeAxis ax = plot_time_axis({}, static_cast<double>(span) / 1e9);
  for (size_t i = 0; i < all.size(); ++i) {
    const Dataset& d = *all[i];
    bool original = i == 0;
    uint64_t span_d = d.samples.bounds().issue_max;
    auto by_issue =
        rates_by(d.samples, 1'000'000'000, span_d, [](const Sample& s) { return s.issue_ns(); });
    double w = series_window_s(1'000'000'000, span_d);  // per second: counts / w
    std::string file = "cmp-" + d.label + "-iops";
    auto f = ctx.csv(file, {"t_s", "iops"});
    if (!f) return f.error();
    std::vector<double> v;
    for (const auto& x : by_issue) {
      f->row({x.t_ns / 1e9, static_cast<double>(x.reads + x.writes) / w});
      v.push_back(static_cast<double>(x.reads + x.writes) / w);
    }
    BLKRR_TRY(f->close());
    if (by_issue.empty()) continue;
    mark_plot(p, d);
    TimeSeries t{original ? d.label + " (original, demanded)" : d.label + " (achieved issue rate)",
                 original ? "#a0a0a0" : neutral_color(i),
                 std::move(v),
                 !original,
                 false,
                 original ? 7.0 : 2.0};
    BLKRR_TRY(add_time_series(ctx, p, ax, w, file + "-plot", {t}));
  }
  ctx.add_plot(sec, p);
  return {};
}

// Time-weighted distribution of requests in flight (CDF) and its KS distance.
Status concurrency(Context& ctx, Section& sec, const std::vector<const Dataset*>& all,
                   nlohmann::json& js) {
  PlotSpec p;
  p.name = "cmp-concurrency";
  p.title = "Concurrency (CDF of requests in flight over time): replays should match the original";
  p.xlabel = "requests in flight";
  p.ylabel = "fraction of time at or below";
  std::vector<const std::vector<double>*> levels;
  for (size_t i = 0; i < all.size(); ++i) {
    const Dataset& d = *all[i];
    const Timing* t = ctx.timing(d);
    if (!d.has_latency() || !t) {
      levels.push_back(nullptr);
      continue;
    }
    const auto& lv = t->profile.time_at_level;
    double total = std::accumulate(lv.begin(), lv.end(), 0.0);
    std::string file = "cmp-" + d.label + "-concurrency";
    auto f = ctx.csv(file, {"level", "fraction", "cumulative"});
    if (!f) return f.error();
    double cum = 0;
    for (size_t k = 0; k < lv.size(); ++k) {
      double fr = total > 0 ? lv[k] / total : 0;
      cum += fr;
      f->row({static_cast<double>(k), fr, cum});
    }
    BLKRR_TRY(f->close());
    p.series.push_back({d.label + (i == 0 ? " (original)" : ""), Context::data_path(file), "1:3",
                        "steps", neutral_color(i)});
    mark_plot(p, d);
    levels.push_back(&lv);
  }
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 1; i < all.size(); ++i) {
    if (!levels[0] || !levels[i]) continue;
    double ks = ks_distance_weights(*levels[0], *levels[i]);
    js["concurrency_ks"][all[i]->label] = ks;
    rows.push_back({all[i]->label, fmt_short(ks)});
  }
  if (!levels[0])
    sec.blocks.push_back(note("The original " + all[0]->label +
                              " has no completion times: its concurrency and latency cannot be "
                              "compared (record a native trace to get them)."));
  else
    sec.blocks.push_back(
        table("Concurrency distribution vs the original: Kolmogorov-Smirnov distance",
              {"replay", "KS distance"}, rows));
  ctx.add_plot(sec, p);
  return {};
}

// Which latency each input has (its layer) and, for replays validated with
// --validate, their block-layer percentiles: the table, report.json and
// cmp-latency-layers.csv.
Status latency_layers(Context& ctx, Section& sec, const std::vector<const Dataset*>& all,
                      nlohmann::json& js) {
  auto f = ctx.csv("cmp-latency-layers", {"label", "role", "latency", "p50_ns", "p99_ns"});
  if (!f) return f.error();
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < all.size(); ++i) {
    const Dataset& d = *all[i];
    const Timing* t = ctx.timing(d);
    const std::string role = i == 0 ? "original" : "replay";
    auto add = [&](const std::string& layer, std::optional<double> p50, std::optional<double> p99) {
      auto cell = [](std::optional<double> v) { return v ? fmt_num(std::round(*v)) : ""; };
      f->text_row({d.label, role, layer, cell(p50), cell(p99)});
      rows.push_back({d.label, role, layer, p50 ? fmt_duration_ns(*p50) : "-",
                      p99 ? fmt_duration_ns(*p99) : "-"});
      js["latency_layers"][d.label].push_back({{"latency", layer},
                                               {"p50_ns", p50 ? nlohmann::json(*p50) : nullptr},
                                               {"p99_ns", p99 ? nlohmann::json(*p99) : nullptr}});
    };
    if (d.has_latency() && t) {
      const Distribution& l = t->latency_ms[0];
      std::optional<double> p99;
      if (percentile_supported(l.count(), 99)) p99 = l.percentile(99) * 1e6;
      add(layer_name(d.latency_layer()), l.percentile(50) * 1e6, p99);
    }
    if (d.block_latency)
      add("block layer (--validate)", d.block_latency->p50, d.block_latency->p99);
    if (!d.has_latency() && !d.block_latency) add("none", std::nullopt, std::nullopt);
  }
  BLKRR_TRY(f->close());
  sec.blocks.push_back(
      table("Which latency each input has (block layer: issue to the device until "
            "completion; user space: the replayer's submission to completion)",
            {"input", "role", "latency", "median", "p99"}, rows));
  return {};
}

// Latency distributions (CDF on a quantile grid) and their KS distance.
Status latency_cdfs(Context& ctx, Section& sec, const std::vector<const Dataset*>& all,
                    nlohmann::json& js) {
  PlotSpec p;
  p.name = "cmp-latency-cdf";
  p.title = "Latency distributions (CDF): replays should lie on the original";
  p.xlabel = "latency";
  p.extra = ms_log_tics("x");
  p.ylabel = "fraction of requests at or below";
  p.logx = true;
  std::vector<std::vector<std::string>> rows;
  auto grid = cdf_grid();
  for (size_t i = 0; i < all.size(); ++i) {
    const Dataset& d = *all[i];
    const Timing* t = ctx.timing(d);
    if (!d.has_latency() || !t) continue;
    const Distribution& v = t->latency_ms[0];
    std::string file = "cmp-" + d.label + "-latency-cdf";
    auto f = ctx.csv(file, {"latency_ms", "fraction"});
    if (!f) return f.error();
    for (double q : grid) f->row({std::max(v.percentile(q), 1e-3), q / 100});
    BLKRR_TRY(f->close());
    const std::string layer = layer_name(d.latency_layer());
    p.series.push_back({d.label + (i == 0 ? " (original, " : " (") + layer + ")",
                        Context::data_path(file), "1:2", "lines", neutral_color(i)});
    mark_plot(p, d);
    if (i > 0 && all[0]->has_latency()) {
      auto ks = latency_ks(*all[0], d);
      d.drop_sorted(SortKey::kLatency);
      if (!ks) return ks.error();
      const bool like = all[0]->latency_layer() == d.latency_layer();
      const std::string what = std::string(layer_name(all[0]->latency_layer())) + " vs " + layer;
      js["latency_ks"][d.label] = *ks;
      js["latency_ks_layers"][d.label] = what;
      rows.push_back(
          {d.label, fmt_short(*ks), like ? what : what + ": different layers, not like with like"});
    }
  }
  if (!rows.empty())
    sec.blocks.push_back(
        table("Latency distribution vs the original: Kolmogorov-Smirnov distance (how the devices "
              "answered, no fidelity criterion)",
              {"replay", "KS distance", "latencies compared"}, rows));
  ctx.add_plot(sec, p);
  return {};
}

void reordering(Context& ctx, Section& sec, const std::vector<const Dataset*>& replays,
                nlohmann::json& js) {
  std::vector<std::vector<std::string>> rows;
  for (const Dataset* r : replays) {
    const Timing* t = ctx.timing(*r);
    if (!t) continue;
    OrderFidelity o = order_fidelity(*t);
    js["reordering"][r->label] = {{"issue_order_percent", o.issue_percent},
                                  {"completion_order_percent", o.completion_percent},
                                  {"issue_reordered", o.issue_reordered},
                                  {"completion_reordered", o.completion_reordered},
                                  {"requests", o.total}};
    rows.push_back({r->label, std::to_string(o.total), std::to_string(o.issue_reordered),
                    fmt_short(o.issue_percent), std::to_string(o.completion_reordered),
                    fmt_short(o.completion_percent)});
  }
  sec.blocks.push_back(table("Out-of-order requests (RFC 4737 reordering of the set points)",
                             {"replay", "requests", "reordered at issue", "% at issue",
                              "reordered at completion", "% at completion"},
                             rows));
}

// Measurement uncertainty of the repeated replays, per metric.
void uncertainty_table(Context& ctx, Section& sec, const Dataset& orig,
                       const std::vector<const Dataset*>& replays, nlohmann::json& js) {
  RunMetrics o = run_metrics(orig, ctx.timing(orig));
  std::vector<RunMetrics> rm;
  rm.reserve(replays.size());
  for (const Dataset* r : replays) rm.push_back(run_metrics(*r, ctx.timing(*r)));
  struct Metric {
    const char* name;
    std::optional<double> (*get)(const RunMetrics&);
  };
  const Metric metrics[] = {
      {"requests per second", [](const RunMetrics& m) -> std::optional<double> { return m.iops; }},
      {"MiB/s", [](const RunMetrics& m) -> std::optional<double> { return m.mibs; }},
      {"duration [s]", [](const RunMetrics& m) -> std::optional<double> { return m.duration_s; }},
      {"latency mean [ms]", [](const RunMetrics& m) { return m.latency_mean_ms; }},
      {"latency median [ms]", [](const RunMetrics& m) { return m.latency_p50_ms; }},
      {"latency p99 [ms]", [](const RunMetrics& m) { return m.latency_p99_ms; }},
      {"mean requests in flight", [](const RunMetrics& m) { return m.inflight_mean; }},
      {"issue error mean [ms]", [](const RunMetrics& m) { return m.issue_error_mean_ms; }},
      {"issue error p99 [ms]", [](const RunMetrics& m) { return m.issue_error_p99_ms; }},
  };
  std::vector<std::vector<std::string>> rows;
  for (const auto& m : metrics) {
    std::vector<double> vals;
    for (const auto& r : rm)
      if (auto v = m.get(r)) vals.push_back(*v);
    if (vals.empty()) continue;
    std::optional<double> ref = m.get(o);
    Uncertainty u = uncertainty(vals, ref);
    auto pct = [](double v) { return fmt_short(100 * v) + " %"; };
    rows.push_back({m.name, ref ? fmt_short(*ref) : "-", std::to_string(u.n), fmt_short(u.mean),
                    u.n > 1 ? fmt_short(u.reproducibility) : "-",
                    u.n > 1 ? pct(u.reproducibility_rel) : "-", u.bias_rel ? pct(*u.bias_rel) : "-",
                    pct(u.combined_rel), pct(u.expanded_rel),
                    fmt_short(u.expanded_rel * std::fabs(u.mean))});
    nlohmann::json j = {{"n", u.n},
                        {"mean", u.mean},
                        {"reproducibility_sd", u.reproducibility},
                        {"reproducibility_rel", u.reproducibility_rel},
                        {"combined_rel", u.combined_rel},
                        {"expanded_rel_k2", u.expanded_rel}};
    if (ref) j["original"] = *ref;
    if (u.bias_rel) j["bias_rel_rms"] = *u.bias_rel;
    js["uncertainty"][m.name] = j;
  }
  sec.blocks.push_back(
      table("Uncertainty of the replay (" + std::to_string(replays.size()) +
                " replay(s)): within-lab reproducibility s_R, bias = RMS of relative errors "
                "against the original, combined u_c = sqrt((s_R/mean)^2 + bias^2), expanded "
                "U = 2 u_c",
            {"metric", "original", "n", "mean", "s_R", "s_R rel", "bias (RMS rel)", "u_c",
             "U (k=2)", "U absolute"},
            rows));
  if (replays.size() < 2)
    sec.blocks.push_back(
        note("With one replay the reproducibility is unknown; repeat the replay "
             "(3 or more runs) to state it."));
}

}  // namespace

Status add_compare(Context& ctx, const Dataset& orig, const std::vector<const Dataset*>& replays) {
  Section& sec = ctx.section("Fidelity: replays compared with the original " + orig.label,
                             Question::kFidelity);
  nlohmann::json& js = ctx.json()["fidelity"];
  js["original"] = orig.label;
  std::vector<const Dataset*> all{&orig};
  all.insert(all.end(), replays.begin(), replays.end());
  compare_notes(sec, orig, replays);
  BLKRR_TRY(issue_error(ctx, sec, replays, js));
  BLKRR_TRY(issue_rates(ctx, sec, all));
  BLKRR_TRY(concurrency(ctx, sec, all, js));
  BLKRR_TRY(latency_layers(ctx, sec, all, js));
  BLKRR_TRY(latency_cdfs(ctx, sec, all, js));
  reordering(ctx, sec, replays, js);
  uncertainty_table(ctx, sec, orig, replays, js);
  return add_repeat_spread(ctx, sec, orig, replays, js);
}

}  // namespace blkrr::report
