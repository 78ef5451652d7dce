#include "report/dynamic_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "report/histogram.h"
#include "report/static_analysis.h"
#include "report/timeplot.h"
#include "report/units.h"

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

struct ScatterAxis {
  std::string label;
  bool log = false;
  bool time = false;     // seconds on the dataset clock: drawn on an adaptive time axis
  double count_max = 0;  // > 0: a count up to this (tics on whole numbers only)
};

// Tics 1, 2, 5, 10, 20, ... apart: about 8 of them up to `max`, never fractions.
std::string count_tics(const char* axis, double max) {
  double step = 1;
  for (double m = 1; step * 8 < max; m *= 10)
    for (double f : {1.0, 2.0, 5.0})
      if (step * 8 < max) step = f * m;
  return std::string("set ") + axis + "tics " + fmt_num(step) + "\nset m" + axis + "tics 1\n";
}

// One scatter plot over several datasets, filled one dataset at a time in
// any order of its samples: reads and writes are thinned to one point per
// 2.5x2.5-pixel cell of the value ranges given and written to their own files.
class Scatter {
 public:
  Scatter(const std::string& name, const std::string& title, const ScatterAxis& x,
          const ScatterAxis& y, const std::vector<const Dataset*>& data, double xmax_s)
      : x_(x), y_(y), multi_(data.size() > 1) {
    p_.name = name;
    p_.title = title;
    p_.xlabel = x.label;
    p_.ylabel = y.label;
    p_.logx = x.log;
    p_.logy = y.log;
    p_.pad = true;
    auto log_ms = [this](std::string& label, const char* axis) {
      p_.extra += ms_log_tics(axis);
      label.replace(label.find("[ms]"), 4, "(log scale)");
    };
    if (p_.logy && p_.ylabel.find("[ms]") != std::string::npos) log_ms(p_.ylabel, "y");
    if (p_.logx && p_.xlabel.find("[ms]") != std::string::npos) log_ms(p_.xlabel, "x");
    ax_ = plot_time_axis(data, xmax_s);
    if (x.count_max > 0) p_.extra += count_tics("x", x.count_max);
    if (x.time) {
      p_.xlabel = ax_.label(x.label);
      p_.extra += ax_.gnuplot() + "set autoscale xfix\n";
    }
  }

  // Starts dataset `di` whose values lie in [x0, x1] x [y0, y1].
  Status begin(Context& ctx, const Dataset& d, size_t di, double x0, double x1, double y0,
               double y1) {
    d_ = &d;
    di_ = di;
    for (int dir = 0; dir < 2; ++dir) {
      auto f = ctx.csv(file(dir), {"x", "y"});
      if (!f) return f.error();
      f_[dir].emplace(std::move(*f));
      th_[dir].emplace(clamp(x0, x_.log), clamp(x1, x_.log), x_.log, clamp(y0, y_.log),
                       clamp(y1, y_.log), y_.log, 480, 320);  // 2.5 px cells ~ point size
    }
    return {};
  }
  void add(double x, double y, bool write) {
    y = clamp(y, y_.log);
    add(x, y, y_.log ? fast_log2(y) : y, write);
  }
  // With y already clamped and `sy` its position on the y scale (fast_log2
  // on log axes): the latency's logarithm is taken once for every plot.
  void add(double x, double y, double sy, bool write) {
    x = clamp(x, x_.log);
    int dir = write ? 1 : 0;
    if (th_[dir]->keep_scaled(x_.log ? fast_log2(x) : x, sy))
      f_[dir]->row({x_.time ? ax_.x(x) : x, y});
  }
  Status end() {
    mark_plot(p_, *d_);
    std::string pre = multi_ ? d_->label + " " : "";
    for (int dir = 0; dir < 2; ++dir) {
      BLKRR_TRY(f_[dir]->close());
      points_ += f_[dir]->rows();
      if (f_[dir]->rows())
        p_.series.push_back({pre + (dir ? "writes" : "reads"), Context::data_path(file(dir)), "1:2",
                             "points", dir ? write_color(di_) : read_color(di_),
                             static_cast<int>(7 + 2 * di_), 0.6});
      f_[dir].reset();
      th_[dir].reset();
    }
    return {};
  }
  void finish(Context& ctx, Section& sec) {
    // Few points: large marks, so that three reads among thousands of writes are seen.
    double ps = points_ < 300 ? 1.6 : points_ < 5000 ? 1.0 : 0.6;
    for (auto& s : p_.series) s.width = ps;
    ctx.add_plot(sec, p_);
  }

 private:
  static double clamp(double v, bool log) { return log ? std::max(v, kLogFloorMs) : v; }
  std::string file(int dir) const {
    return "dyn-" + d_->label + "-" + p_.name + (dir ? "-writes" : "-reads");
  }

  ScatterAxis x_, y_;
  bool multi_;
  PlotSpec p_;
  TimeAxis ax_;
  const Dataset* d_ = nullptr;
  size_t di_ = 0;
  std::optional<CsvFile> f_[2];
  std::optional<Thinner> th_[2];
  uint64_t points_ = 0;
};

// The value ranges of a dataset (from its bounds) for the scatter plots.
struct Ranges {
  double issue0, issue1, t0, t1, done1, lat0, lat1, delay0, delay1, n, inflight;
};
Ranges ranges_of(const Dataset& d, const Timing& t) {
  const SampleBounds& b = d.samples.bounds();
  Ranges r{};
  r.issue0 = secs(b.issue_min);
  r.issue1 = secs(b.issue_max);
  r.t0 = secs(b.t_min);
  r.t1 = secs(b.t_max);
  r.done1 = secs(b.complete_max);
  r.lat0 = b.latency_n ? ms(b.latency_min) : 0;
  r.lat1 = b.latency_n ? ms(b.latency_max) : 0;
  r.delay0 = static_cast<double>(b.delay_min) / 1e6;
  r.delay1 = static_cast<double>(b.delay_max) / 1e6;
  r.n = static_cast<double>(b.count ? b.count - 1 : 0);
  r.inflight = std::max<double>(1, t.profile.max);
  return r;
}

double max_over(const std::vector<const Dataset*>& data, uint64_t SampleBounds::*f) {
  uint64_t m = 0;
  for (const Dataset* d : data) m = std::max(m, d->samples.bounds().*f);
  return secs(m);
}

// The scatter plots of the dynamic section, in the order shown.
Status scatter_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                     const std::vector<const Dataset*>& replays) {
  ScatterAxis lat{"latency [ms]", true}, delay{"delay [ms]"};
  ScatterAxis inflight{"requests in flight at issue"}, setpoint{"set point", false, true};
  for (const Dataset* d : data)
    inflight.count_max = std::max<double>(inflight.count_max, ctx.timing(*d)->profile.max);
  inflight.count_max = std::max(inflight.count_max, 1.0);
  Scatter sonar("sonar",
                "Sonar: latency of every request over time (stripes = stalls, bands = device "
                "tiers)",
                {"actual issue time", false, true}, lat, data,
                max_over(data, &SampleBounds::issue_max));
  Scatter lat_t("latency-setpoint",
                "Latency over the recorded issue time (set point): which part of the load is slow",
                setpoint, lat, data, max_over(data, &SampleBounds::t_max));
  Scatter lat_done("latency-completion", "Latency over completion time: gaps = nothing completed",
                   {"completion time", false, true}, lat, data,
                   max_over(data, &SampleBounds::complete_max));
  Scatter lat_idx("latency-index",
                  "Latency over request index (file order): trends as the load proceeds",
                  {"request index"}, lat, data, 0);
  Scatter lat_q("latency-inflight",
                "Latency vs requests in flight: does latency grow with queue depth?", inflight, lat,
                data, 0);
  Scatter del_t("delay-setpoint",
                "Issue delay over set point: where the replay fell behind its schedule", setpoint,
                delay, replays, max_over(replays, &SampleBounds::t_max));
  Scatter del_q("delay-inflight",
                "Issue delay vs requests in flight: late when the queue was full?", inflight, delay,
                replays, 0);
  Scatter lat_del("latency-delay", "Latency vs issue delay: are late requests also slow ones?",
                  delay, lat, replays, 0);
  size_t ri = 0;
  for (size_t di = 0; di < data.size(); ++di) {
    const Dataset& d = *data[di];
    const Timing& tm = *ctx.timing(d);
    Ranges r = ranges_of(d, tm);
    bool replay = d.has_delay();
    BLKRR_TRY(sonar.begin(ctx, d, di, r.issue0, r.issue1, r.lat0, r.lat1));
    BLKRR_TRY(lat_t.begin(ctx, d, di, r.t0, r.t1, r.lat0, r.lat1));
    BLKRR_TRY(lat_done.begin(ctx, d, di, r.issue0, r.done1, r.lat0, r.lat1));
    BLKRR_TRY(lat_idx.begin(ctx, d, di, 0, r.n, r.lat0, r.lat1));
    if (replay) {
      BLKRR_TRY(del_t.begin(ctx, d, ri, r.t0, r.t1, r.delay0, r.delay1));
      BLKRR_TRY(lat_del.begin(ctx, d, ri, r.delay0, r.delay1, r.lat0, r.lat1));
    }
    double k = 0;
    d.samples.for_each([&](const Sample& s) {  // file order
      double l = std::max(ms(s.latency_ns), kLogFloorMs), ll = fast_log2(l), t = secs(s.t_ns);
      bool w = s.write();
      sonar.add(secs(s.issue_ns()), l, ll, w);
      lat_t.add(t, l, ll, w);
      lat_done.add(secs(s.complete_ns()), l, ll, w);
      lat_idx.add(k++, l, ll, w);
      if (replay) {
        double dl = static_cast<double>(s.delay_ns) / 1e6;
        del_t.add(t, dl, w);
        lat_del.add(dl, l, ll, w);
      }
    });
    BLKRR_TRY(lat_q.begin(ctx, d, di, 1, r.inflight, r.lat0, r.lat1));
    if (replay) BLKRR_TRY(del_q.begin(ctx, d, ri, 1, r.inflight, r.delay0, r.delay1));
    auto by_issue = d.sorted(SortKey::kIssue);
    if (!by_issue) return by_issue.error();
    auto by_completion = d.sorted(SortKey::kCompletion);
    if (!by_completion) return by_completion.error();
    sweep_in_flight(
        **by_issue, **by_completion,
        [&](const Sample& s, uint32_t level) {
          lat_q.add(level, ms(s.latency_ns), s.write());
          if (replay) del_q.add(level, static_cast<double>(s.delay_ns) / 1e6, s.write());
        },
        [](uint64_t) {});
    for (Scatter* p : {&sonar, &lat_t, &lat_done, &lat_idx, &lat_q}) BLKRR_TRY(p->end());
    if (replay) {
      for (Scatter* p : {&del_t, &del_q, &lat_del}) BLKRR_TRY(p->end());
      ++ri;
    }
  }
  for (Scatter* p : {&sonar, &lat_t, &lat_done, &lat_idx, &lat_q}) p->finish(ctx, sec);
  if (!replays.empty())
    for (Scatter* p : {&del_t, &del_q, &lat_del}) p->finish(ctx, sec);
  return {};
}

Status histograms(Context& ctx, Section& sec, const std::vector<const Dataset*>& data, bool delay) {
  PlotSpec p;
  p.name = delay ? "delay-histogram" : "latency-histogram";
  p.title = delay
                ? "Issue delay histogram (actual issue minus set point): how late requests went out"
                : "Latency histogram: the shape of the latency distribution (peaks = tiers)";
  p.xlabel = delay ? "delay [ms]" : "latency, logarithmic buckets";
  if (!delay) p.extra = ms_log_tics("x");
  p.ylabel = "requests";
  p.logx = !delay;
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
    p.series.push_back({pre + "reads", path, "1:3", "steps", read_color(di)});
    p.series.push_back({pre + "writes", path, "1:4", "steps", write_color(di)});
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
      Summary s = tm.latency_ms[dir].summary();
      j["latency_ms"][key] = to_json(s);
      lat_rows.emplace_back(d.label + " " + key, s);
      if (d.has_delay()) {
        Summary sd = tm.delay_ms[dir].summary();
        j["delay_ms"][key] = to_json(sd);
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
      mb.push_back((r.read_bytes + r.write_bytes) / 1e6 / w);
    }
    Summary si = summarize(io), sm = summarize(mb);
    j["achieved_iops_per_second"] = to_json(si);
    j["achieved_mbs_per_second"] = to_json(sm);
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
    sec.blocks.push_back(summary_table("Delay (actual issue minus set point)", "ms", delay_rows));
  sec.blocks.push_back(
      summary_table("Achieved requests per second (by completion)", "IOPS", iops_rows));
  sec.blocks.push_back(
      summary_table("Achieved throughput per second (by completion)", "MB/s", mbs_rows));
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
               "demanded_mbs", "achieved_mbs", "achieved_read_mbs", "achieved_write_mbs"});
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
              (m.read_bytes + m.write_bytes) / 1e6 / w, (a.read_bytes + a.write_bytes) / 1e6 / w,
              a.read_bytes / 1e6 / w, a.write_bytes / 1e6 / w});
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
  Section& sec = ctx.section("Dynamic analysis (how the device answered)");
  nlohmann::json& js = ctx.json()["dynamic"];
  summary_tables(ctx, sec, data, js);
  BLKRR_TRY(scatter_plots(ctx, sec, data, replays));
  BLKRR_TRY(histograms(ctx, sec, data, false));
  if (!replays.empty()) BLKRR_TRY(histograms(ctx, sec, replays, true));
  return throughput_plots(ctx, sec, data, js);
}

}  // namespace blkrr::report
