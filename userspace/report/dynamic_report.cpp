#include "report/dynamic_report.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/histogram.h"
#include "report/scatter_plots.h"
#include "report/static_analysis.h"
#include "report/timeplot.h"
#include "report/time_axis.h"

namespace blkrr::report {

namespace {

constexpr double kLogFloorMs = 1e-3;  // latencies below 1 us are drawn at 1 us on log axes
constexpr uint64_t kSec = 1'000'000'000;

double ms(uint64_t ns) {
  return static_cast<double>(ns) / 1e6;
}
double secs(uint64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

Status histograms(Context& ctx, Section& sec, const std::vector<const Dataset*>& data, bool delay) {
  PlotSpec p;
  p.name = delay ? "delay-histogram" : "latency-histogram";
  p.title = delay
                ? "Issue delay histogram (actual issue minus set point): how late requests went out"
                : "Latency histogram: the shape of the latency distribution (peaks = tiers)";
  p.xlabel = delay ? "delay [ms]" : "latency, logarithmic buckets";
  if (!delay) p.extra = ms_log_tics("x");
  // Delays: logarithmic counts, so that a tail of a few late requests shows.
  p.ylabel = delay ? "requests (log scale)" : "requests";
  p.logx = !delay;
  p.logy = delay;
  double lo = std::numeric_limits<double>::max(), hi = -lo;
  for (const Dataset* d : data) {
    const SampleBounds& b = d->samples.bounds();
    if (b.count == 0) continue;
    // Samples without a latency count as 0 (drawn at the floor), as every latency below it.
    double l0 = b.latency_n < b.count ? 0 : ms(b.latency_min);
    lo = std::min(lo, delay ? static_cast<double>(b.delay_min) / 1e6 : std::max(l0, kLogFloorMs));
    hi = std::max(hi, delay ? static_cast<double>(b.delay_max) / 1e6
                            : std::max(ms(b.latency_max), kLogFloorMs));
  }
  if (lo > hi) return {};
  for (size_t di = 0; di < data.size(); ++di) {
    const Dataset& d = *data[di];
    auto make = [&] {
      return delay ? Histogram::linear(lo, hi, ctx.bins())
                   : Histogram::logarithmic(lo, hi, ctx.bins());
    };
    Histogram hr = make(), hw = make();
    d.samples.for_each([&](const Sample& s) {
      double v =
          delay ? static_cast<double>(s.delay_ns) / 1e6 : std::max(ms(s.latency_ns), kLogFloorMs);
      (s.write() ? hw : hr).add(v);
    });
    std::string file = "dyn-" + d.label + "-" + p.name;
    auto f = ctx.csv(file, {"bucket_low_ms", "bucket_high_ms", "reads", "writes"});
    if (!f) return f.error();
    for (size_t b = 0; b < hr.bins(); ++b)
      f->row({hr.lower(b), hr.upper(b), static_cast<double>(hr.count(b)),
              static_cast<double>(hw.count(b))});
    BLKRR_TRY(f->close());
    std::string pre = data.size() > 1 ? d.label + " " : "";
    std::string path = Context::data_path(file);
    p.series.push_back({pre + "reads", path, delay ? kNonZero3 : "1:3", "steps", read_color(di)});
    p.series.push_back({pre + "writes", path, delay ? kNonZero4 : "1:4", "steps", write_color(di)});
    mark_plot(p, d);
  }
  ctx.add_plot(sec, p);
  return {};
}

// Notes and summary tables: results, latency, delay, achieved rates.
void summary_tables(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                    nlohmann::json& js) {
  std::vector<std::pair<std::string, Summary>> lat_rows, delay_rows, iops_rows, mbs_rows;
  std::vector<std::vector<std::string>> info_rows;
  for (const Dataset* dp : data) {
    const Dataset& d = *dp;
    const Timing& tm = *ctx.timing(d);
    auto& j = js[d.label];
    for (int dir = 0; dir < 3; ++dir) {
      std::string key = dir == 0 ? "all" : dir == 2 ? "writes" : "reads";
      std::string jkey = dir == 0 ? "all" : dir == 2 ? "write" : "read";  // as every JSON of blkrr
      Summary s = tm.latency_ms[dir].summary();
      j["latency_ns"][jkey] = to_json_ns(s, 1e6);  // s is in ms
      lat_rows.emplace_back(d.label + " " + key, s);
      if (d.has_delay()) {
        Summary sd = tm.delay_ms[dir].summary();
        j["delay_ns"][jkey] = to_json_ns(sd, 1e6);
        delay_rows.emplace_back(d.label + " " + key, sd);
      }
    }
    const SampleBounds& b = d.samples.bounds();
    auto rates =
        rates_by(d.samples, kSec, b.complete_max, [](const Sample& s) { return s.complete_ns(); });
    double w = series_window_s(kSec, b.complete_max);  // per second: counts / w
    std::vector<double> io, mb;
    for (const auto& r : rates) {
      io.push_back(static_cast<double>(r.reads + r.writes) / w);
      mb.push_back((r.read_bytes + r.write_bytes) / kBytesPerMiB / w);
    }
    Summary si = summarize(io), sm = summarize(mb);
    j["achieved_iops_per_second"] = to_json(si);
    j["achieved_mibs_per_second"] = to_json(sm);
    iops_rows.emplace_back(d.label, si);
    mbs_rows.emplace_back(d.label, sm);
    j["pushed_back"] = b.pushed_back;
    j["fake"] = d.fake;
    if (d.wraparound_factor) j["wraparound_factor"] = *d.wraparound_factor;
    info_rows.push_back({d.label, kind_name(d.kind), std::to_string(b.count),
                         std::to_string(b.pushed_back),
                         d.wraparound_factor ? fmt_short(*d.wraparound_factor) : "-",
                         d.fake ? "FAKE RESULT (dry run or no O_DIRECT)" : "-"});
    if (d.fake)
      sec.blocks.push_back(note(d.label + ": FAKE RESULT. This replay was a dry run or ran without "
                                          "O_DIRECT; its latencies do not describe the device.",
                                true));
  }
  sec.blocks.push_back(table(
      "Results", {"input", "kind", "requests", "pushed back", "wraparound factor", "validity"},
      info_rows));
  sec.blocks.push_back(summary_table("Latency (completion minus actual issue)", "ms", lat_rows));
  if (!delay_rows.empty())
    sec.blocks.emplace_back(summary_table("Delay (actual issue minus set point)", "ms", delay_rows),
                            Question::kHowLate);
  sec.blocks.push_back(
      summary_table("Achieved requests per second (by completion)", "IOPS", iops_rows));
  sec.blocks.push_back(
      summary_table("Achieved throughput per second (by completion)", "MiB/s", mbs_rows));
}

TimeAxis dynamic_axis(const std::vector<const Dataset*>& data) {
  return plot_time_axis(data, max_over(data, &SampleBounds::complete_max));
}

// The in-flight profile of one dataset (time-weighted mean and maximum per bin).
Status inflight_series(Context& ctx, PlotSpec& fl, const TimeAxis& ax, const Dataset& d, size_t i,
                       bool multi, nlohmann::json& js) {
  const InflightProfile& prof = ctx.timing(d)->profile;
  std::string file = "dyn-" + d.label + "-inflight";
  auto g = ctx.csv(file, {"t_s", "mean", "max"});
  if (!g) return g.error();
  std::vector<double> mean, mx;
  for (const auto& b : prof.buckets) {
    g->row({secs(b.t_ns), b.avg, static_cast<double>(b.max)});
    mean.push_back(b.avg);
    mx.push_back(static_cast<double>(b.max));
  }
  BLKRR_TRY(g->close());
  mark_plot(fl, d);
  TimeAxis fax = ax;
  if (prof.buckets.size() > 1) fax.bin_s = secs(prof.buckets[1].t_ns - prof.buckets[0].t_ns);
  if (!prof.buckets.empty()) fax.offset_s += secs(prof.buckets[0].t_ns);  // buckets start at t0
  std::string pre = multi ? d.label + " " : "";
  BLKRR_TRY(
      add_time_series(ctx, fl, fax, fax.bin_s, file + "-plot",
                      {{pre + "max in the bin", read_color(i), mx, false, false, 1},
                       {pre + "time-weighted mean", neutral_color(i), mean, false, false, 2}}));
  js[d.label]["inflight_mean"] = prof.mean;
  js[d.label]["inflight_max"] = prof.max;
  return {};
}

// Demanded vs achieved throughput and requests in flight over time.
Status throughput_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                        nlohmann::json& js) {
  PlotSpec tio, tmb, fl;
  tio.name = "throughput-iops";
  tio.title = "Demanded vs achieved request rate: achieved below demanded = the device fell behind";
  tmb.name = "throughput-mbps";
  tmb.title = "Demanded vs achieved throughput: achieved below demanded = the device fell behind";
  fl.name = "inflight";
  fl.title = "Requests in flight over time: queue build-up and idle periods";
  tio.ylabel = "requests per second";
  fl.ylabel = "requests in flight";
  TimeAxis ax = dynamic_axis(data);
  double max_bytes = 0;
  std::vector<std::vector<RatePoint>> dems, achs;
  std::vector<double> win;  // demanded and achieved in the same windows, seconds
  for (const Dataset* d : data) {
    const SampleBounds& b = d->samples.bounds();
    uint64_t span = std::max(b.t_max, b.complete_max);
    win.push_back(series_window_s(kSec, span));
    dems.push_back(rates_by(d->samples, kSec, span, [](const Sample& s) { return s.t_ns; }));
    achs.push_back(
        rates_by(d->samples, kSec, span, [](const Sample& s) { return s.complete_ns(); }));
    for (const auto* v : {&dems.back(), &achs.back()})
      for (const auto& r : *v)
        max_bytes = std::max<double>(max_bytes, (r.read_bytes + r.write_bytes) / win.back());
  }
  Scale bu = byte_scale(max_bytes);
  tmb.ylabel = "throughput [" + bu.unit + "/s]";
  for (size_t i = 0; i < data.size(); ++i) {
    const Dataset& d = *data[i];
    const auto& dem = dems[i];
    const auto& ach = achs[i];
    std::string file = "dyn-" + d.label + "-throughput";
    auto f = ctx.csv(
        file, {"t_s", "demanded_iops", "achieved_iops", "achieved_read_iops", "achieved_write_iops",
               "demanded_mibs", "achieved_mibs", "achieved_read_mibs", "achieved_write_mibs"});
    if (!f) return f.error();
    size_t n = std::max(dem.size(), ach.size());
    double w = win[i];  // values per second: counts / w
    std::vector<double> dio(n), aio(n), rio(n), wio(n), dby(n), aby(n), rby(n), wby(n);
    for (size_t k = 0; k < n; ++k) {
      RatePoint a = k < ach.size() ? ach[k] : RatePoint{},
                m = k < dem.size() ? dem[k] : RatePoint{};
      dio[k] = static_cast<double>(m.reads + m.writes) / w;
      aio[k] = static_cast<double>(a.reads + a.writes) / w;
      rio[k] = static_cast<double>(a.reads) / w;
      wio[k] = static_cast<double>(a.writes) / w;
      dby[k] = static_cast<double>(m.read_bytes + m.write_bytes) / bu.div / w;
      aby[k] = static_cast<double>(a.read_bytes + a.write_bytes) / bu.div / w;
      rby[k] = static_cast<double>(a.read_bytes) / bu.div / w;
      wby[k] = static_cast<double>(a.write_bytes) / bu.div / w;
      f->row({static_cast<double>(k) * w, dio[k], aio[k], rio[k], wio[k],
              (m.read_bytes + m.write_bytes) / kBytesPerMiB / w,
              (a.read_bytes + a.write_bytes) / kBytesPerMiB / w, a.read_bytes / kBytesPerMiB / w,
              a.write_bytes / kBytesPerMiB / w});
    }
    BLKRR_TRY(f->close());
    std::string pre = data.size() > 1 ? d.label + " " : "";
    mark_plot(tio, d);
    mark_plot(tmb, d);
    // Demanded: a wide grey line behind; achieved: a thinner dark line on top.
    auto series = [&](std::vector<double> dm, std::vector<double> ac, std::vector<double> rd,
                      std::vector<double> wr) {
      std::vector<TimeSeries> v;
      v.push_back({pre + "demanded (set points)", "#a0a0a0", std::move(dm), false, false, 7});
      v.push_back({pre + "achieved reads", read_color(i), std::move(rd), true, false, 1.5});
      v.push_back({pre + "achieved writes", write_color(i), std::move(wr), true, false, 1.5});
      v.push_back(
          {pre + "achieved (completions)", neutral_color(i), std::move(ac), false, false, 2});
      return v;
    };
    BLKRR_TRY(add_time_series(ctx, tio, ax, w, file + "-iops-plot", series(dio, aio, rio, wio)));
    BLKRR_TRY(add_time_series(ctx, tmb, ax, w, file + "-bytes-plot", series(dby, aby, rby, wby)));
    BLKRR_TRY(inflight_series(ctx, fl, ax, d, i, data.size() > 1, js));
  }
  ctx.add_plot(sec, tio);
  ctx.add_plot(sec, tmb);
  ctx.add_plot(sec, fl);
  return {};
}

}  // namespace

uint64_t dynamic_bucket_ns(const std::vector<const Dataset*>& data) {
  std::vector<const Dataset*> lat;
  for (const Dataset* d : data)
    if (d->has_latency()) lat.push_back(d);
  return std::max<uint64_t>(1'000'000, static_cast<uint64_t>(dynamic_axis(lat).bin_s * 1e9));
}

Status add_dynamic(Context& ctx, const std::vector<const Dataset*>& all) {
  std::vector<const Dataset*> data, replays;
  for (const Dataset* d : all)
    if (d->has_latency() && ctx.timing(*d)) data.push_back(d);
  if (data.empty()) return {};
  for (const Dataset* d : data)
    if (d->has_delay()) replays.push_back(d);
  Section& sec = ctx.section("Dynamic analysis (how the device answered)", Question::kHowFast);
  nlohmann::json& js = ctx.json()["dynamic"];
  summary_tables(ctx, sec, data, js);
  BLKRR_TRY(scatter_plots(ctx, sec, data, replays));
  BLKRR_TRY(histograms(ctx, sec, data, false));
  if (!replays.empty()) BLKRR_TRY(histograms(ctx, sec, replays, true));
  return throughput_plots(ctx, sec, data, js);
}

}  // namespace blkrr::report
