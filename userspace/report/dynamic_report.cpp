#include "report/dynamic_report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/distribution.h"
#include "report/concurrency.h"
#include "report/histogram.h"
#include "report/static_analysis.h"
#include "report/timeplot.h"
#include "report/units.h"

namespace blkrr::report {

namespace {

constexpr double kLogFloorMs = 1e-3;  // latencies below 1 us are drawn at 1 us on log axes

using Value = std::function<double(size_t)>;

struct Axis {
  std::string label;
  Value value;
  bool log = false;
  bool time = false;  // seconds on the dataset clock: drawn on an adaptive time axis
};

bool is_ms_axis(const std::string& label) {
  return label.find("[ms]") != std::string::npos;
}

// One scatter plot over all datasets; each dataset's reads and writes are
// thinned to one point per pixel cell and written to their own CSV files.
Status scatter(Context& ctx, Section& sec, const std::string& name, const std::string& title,
               const std::vector<const Dataset*>& data, const std::vector<Axis>& xs,
               const std::vector<Axis>& ys) {
  PlotSpec p;
  p.name = name;
  p.title = title;
  p.xlabel = xs[0].label;
  p.ylabel = ys[0].label;
  p.logx = xs[0].log;
  p.logy = ys[0].log;
  p.pad = true;
  auto log_ms = [&p](std::string& label, const char* axis) {
    p.extra += ms_log_tics(axis);
    label.replace(label.find("[ms]"), 4, "(log scale)");
  };
  if (p.logy && is_ms_axis(p.ylabel)) log_ms(p.ylabel, "y");
  if (p.logx && is_ms_axis(p.xlabel)) log_ms(p.xlabel, "x");
  double xmax = 0;
  if (xs[0].time)
    for (size_t di = 0; di < data.size(); ++di)
      for (size_t i = 0; i < data[di]->samples.size(); ++i) xmax = std::max(xmax, xs[di].value(i));
  TimeAxis ax = plot_time_axis(data, xmax);
  if (xs[0].time) {
    p.xlabel = ax.label(xs[0].label);
    p.extra += ax.gnuplot() + "set autoscale xfix\n";
  }
  uint64_t points = 0;
  for (size_t di = 0; di < data.size(); ++di) {
    const Dataset& d = *data[di];
    const Axis& xa = xs[di];
    const Axis& ya = ys[di];
    size_t n = d.samples.size();
    if (n == 0) continue;
    auto clampv = [](double v, bool log) { return log ? std::max(v, kLogFloorMs) : v; };
    double x0 = std::numeric_limits<double>::max(), x1 = -x0, y0 = x0, y1 = -x0;
    for (size_t i = 0; i < n; ++i) {
      double x = clampv(xa.value(i), xa.log), y = clampv(ya.value(i), ya.log);
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
    mark_plot(p, d);
    std::string pre = data.size() > 1 ? d.label + " " : "";
    for (int dir = 0; dir < 2; ++dir) {
      std::string file = "dyn-" + d.label + "-" + name + (dir ? "-writes" : "-reads");
      auto f = ctx.csv(file, {"x", "y"});
      if (!f) return f.error();
      Thinner th(x0, x1, xa.log, y0, y1, ya.log, 480, 320);  // 2.5 px cells ~ point size
      for (size_t i = 0; i < n; ++i) {
        if (d.samples[i].write() != (dir == 1)) continue;
        double x = clampv(xa.value(i), xa.log), y = clampv(ya.value(i), ya.log);
        if (th.keep(x, y)) f->row({xa.time ? ax.x(x) : x, y});
      }
      BLKRR_TRY(f->close());
      points += f->rows();
      if (f->rows())
        p.series.push_back({pre + (dir ? "writes" : "reads"), Context::data_path(file), "1:2",
                            "points", dir ? write_color(di) : read_color(di),
                            static_cast<int>(7 + 2 * di), 0.6});
    }
  }
  // Few points: large marks, so that three reads among thousands of writes are seen.
  double ps = points < 300 ? 1.6 : points < 5000 ? 1.0 : 0.6;
  for (auto& s : p.series) s.width = ps;
  ctx.add_plot(sec, p);
  return {};
}

double ms(uint64_t ns) {
  return static_cast<double>(ns) / 1e6;
}
double secs(uint64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

// dir: -1 all, 0 reads, 1 writes. Exact up to Distribution's limit, else
// from a histogram (the Summary says which).
Summary summary_of(const Dataset& d, int dir, bool delay) {
  Distribution v;
  for (const auto& s : d.samples)
    if (dir < 0 || s.write() == (dir == 1))
      v.add(delay ? static_cast<double>(s.delay_ns) / 1e6 : ms(s.latency_ns));
  return v.summary();
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
  for (const Dataset* d : data)
    for (const auto& s : d->samples) {
      double v =
          delay ? static_cast<double>(s.delay_ns) / 1e6 : std::max(ms(s.latency_ns), kLogFloorMs);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (lo > hi) return {};
  for (size_t di = 0; di < data.size(); ++di) {
    const Dataset& d = *data[di];
    auto make = [&] {
      return delay ? Histogram::linear(lo, hi, ctx.bins())
                   : Histogram::logarithmic(lo, hi, ctx.bins());
    };
    Histogram hr = make(), hw = make();
    for (const auto& s : d.samples) {
      double v =
          delay ? static_cast<double>(s.delay_ns) / 1e6 : std::max(ms(s.latency_ns), kLogFloorMs);
      (s.write() ? hw : hr).add(v);
    }
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

}  // namespace

Timeline make_timeline(const Dataset& d) {
  Timeline t;
  t.issue.reserve(d.samples.size());
  t.complete.reserve(d.samples.size());
  for (const auto& s : d.samples) {
    t.issue.push_back(s.issue_ns());
    t.complete.push_back(s.complete_ns());
  }
  t.inflight = inflight_at_issue(t.issue, t.complete);
  return t;
}

Status add_dynamic(Context& ctx, const std::vector<const Dataset*>& all) {
  std::vector<const Dataset*> data;
  for (const Dataset* d : all)
    if (d->has_latency()) data.push_back(d);
  if (data.empty()) return {};
  Section& sec = ctx.section("Dynamic analysis (how the device answered)");
  nlohmann::json& js = ctx.json()["dynamic"];
  std::vector<Timeline> tl;
  tl.reserve(data.size());
  for (const Dataset* d : data) tl.push_back(make_timeline(*d));
  std::vector<const Dataset*> replays;
  std::vector<Timeline*> rtl;
  for (size_t i = 0; i < data.size(); ++i)
    if (data[i]->has_delay()) {
      replays.push_back(data[i]);
      rtl.push_back(&tl[i]);
    }

  // Notes and summary tables first.
  std::vector<std::pair<std::string, Summary>> lat_rows, delay_rows, iops_rows, mbs_rows;
  std::vector<std::vector<std::string>> info_rows;
  for (size_t i = 0; i < data.size(); ++i) {
    const Dataset& d = *data[i];
    auto& j = js[d.label];
    for (int dir = -1; dir < 2; ++dir) {
      std::string key = dir < 0 ? "all" : dir ? "writes" : "reads";
      std::string jkey = dir < 0 ? "all" : dir ? "write" : "read";  // as every JSON of blkrr
      Summary s = summary_of(d, dir, false);
      j["latency_ns"][jkey] = to_json_ns(s, 1e6);  // s is in ms
      lat_rows.emplace_back(d.label + " " + key, s);
      if (d.has_delay()) {
        Summary sd = summary_of(d, dir, true);
        j["delay_ns"][jkey] = to_json_ns(sd, 1e6);
        delay_rows.emplace_back(d.label + " " + key, sd);
      }
    }
    auto rates =
        rates_by(d.samples, 1'000'000'000, [](const Sample& s) { return s.complete_ns(); });
    std::vector<double> io, mb;
    for (const auto& r : rates) {
      io.push_back(static_cast<double>(r.reads + r.writes));
      mb.push_back((r.read_bytes + r.write_bytes) / 1e6);
    }
    Summary si = summarize(io), sm = summarize(mb);
    j["achieved_iops_per_second"] = to_json(si);
    j["achieved_mbs_per_second"] = to_json(sm);
    iops_rows.emplace_back(d.label, si);
    mbs_rows.emplace_back(d.label, sm);
    uint64_t pushed = 0;
    for (const auto& s : d.samples) pushed += (s.flags & kSamplePushedBack) != 0;
    j["pushed_back"] = pushed;
    j["fake"] = d.fake;
    if (d.wraparound_factor) j["wraparound_factor"] = *d.wraparound_factor;
    info_rows.push_back({d.label, kind_name(d.kind), std::to_string(d.samples.size()),
                         std::to_string(pushed),
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

  // Scatter plots.
  auto axes = [&](const std::vector<const Dataset*>& ds, const std::vector<Timeline*>& ts,
                  const std::string& label, bool log, int which) {
    std::vector<Axis> v;
    for (size_t i = 0; i < ds.size(); ++i) {
      const Dataset* d = ds[i];
      const Timeline* t = ts[i];
      Value f;
      switch (which) {
        case 0:
          f = [t](size_t k) { return secs(t->issue[k]); };
          break;
        case 1:
          f = [d](size_t k) { return ms(d->samples[k].latency_ns); };
          break;
        case 2:
          f = [d](size_t k) { return secs(d->samples[k].t_ns); };
          break;
        case 3:
          f = [t](size_t k) { return secs(t->complete[k]); };
          break;
        case 4:
          f = [](size_t k) { return static_cast<double>(k); };
          break;
        case 5:
          f = [d](size_t k) { return static_cast<double>(d->samples[k].delay_ns) / 1e6; };
          break;
        default:
          f = [t](size_t k) { return static_cast<double>(t->inflight[k]); };
          break;
      }
      v.push_back({label, f, log, which == 0 || which == 2 || which == 3});
    }
    return v;
  };
  std::vector<Timeline*> tps;
  tps.reserve(tl.size());
  for (auto& t : tl) tps.push_back(&t);
  auto lat = axes(data, tps, "latency [ms]", true, 1);
  BLKRR_TRY(scatter(ctx, sec, "sonar",
                    "Sonar: latency of every request over time (stripes = stalls, bands = device "
                    "tiers)",
                    data, axes(data, tps, "actual issue time", false, 0), lat));
  BLKRR_TRY(scatter(ctx, sec, "latency-setpoint",
                    "Latency over the recorded issue time (set point): which part of the load is "
                    "slow",
                    data, axes(data, tps, "set point", false, 2), lat));
  BLKRR_TRY(scatter(ctx, sec, "latency-completion",
                    "Latency over completion time: gaps = nothing completed", data,
                    axes(data, tps, "completion time", false, 3), lat));
  BLKRR_TRY(scatter(ctx, sec, "latency-index",
                    "Latency over request index (file order): trends as the load proceeds", data,
                    axes(data, tps, "request index", false, 4), lat));
  BLKRR_TRY(scatter(ctx, sec, "latency-inflight",
                    "Latency vs requests in flight: does latency grow with queue depth?", data,
                    axes(data, tps, "requests in flight at issue", false, 6), lat));
  if (!replays.empty()) {
    auto del = axes(replays, rtl, "delay [ms]", false, 5);
    BLKRR_TRY(scatter(ctx, sec, "delay-setpoint",
                      "Issue delay over set point: where the replay fell behind its schedule",
                      replays, axes(replays, rtl, "set point", false, 2), del));
    BLKRR_TRY(scatter(ctx, sec, "delay-inflight",
                      "Issue delay vs requests in flight: late when the queue was full?", replays,
                      axes(replays, rtl, "requests in flight at issue", false, 6), del));
    BLKRR_TRY(scatter(ctx, sec, "latency-delay",
                      "Latency vs issue delay: are late requests also slow ones?", replays, del,
                      axes(replays, rtl, "latency [ms]", true, 1)));
  }
  BLKRR_TRY(histograms(ctx, sec, data, false));
  if (!replays.empty()) BLKRR_TRY(histograms(ctx, sec, replays, true));

  // Demanded vs achieved throughput, requests in flight over time.
  PlotSpec tio, tmb, fl;
  tio.name = "throughput-iops";
  tio.title = "Demanded vs achieved request rate: achieved below demanded = the device fell behind";
  tmb.name = "throughput-mbps";
  tmb.title = "Demanded vs achieved throughput: achieved below demanded = the device fell behind";
  fl.name = "inflight";
  fl.title = "Requests in flight over time: queue build-up and idle periods";
  tio.ylabel = "requests per second";
  fl.ylabel = "requests in flight";
  uint64_t span_ns = 0;
  for (const auto& t : tl)
    for (uint64_t c : t.complete) span_ns = std::max(span_ns, c);
  TimeAxis ax = plot_time_axis(data, secs(span_ns));
  double max_bytes = 0;
  std::vector<std::vector<RatePoint>> dems, achs;
  for (const Dataset* d : data) {
    dems.push_back(rates_by(d->samples, 1'000'000'000, [](const Sample& s) { return s.t_ns; }));
    achs.push_back(
        rates_by(d->samples, 1'000'000'000, [](const Sample& s) { return s.complete_ns(); }));
    for (const auto* v : {&dems.back(), &achs.back()})
      for (const auto& r : *v)
        max_bytes = std::max<double>(max_bytes, r.read_bytes + r.write_bytes);
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
    std::vector<double> dio(n), aio(n), rio(n), wio(n), dby(n), aby(n), rby(n), wby(n);
    for (size_t k = 0; k < n; ++k) {
      RatePoint a = k < ach.size() ? ach[k] : RatePoint{},
                m = k < dem.size() ? dem[k] : RatePoint{};
      dio[k] = static_cast<double>(m.reads + m.writes);
      aio[k] = static_cast<double>(a.reads + a.writes);
      rio[k] = static_cast<double>(a.reads);
      wio[k] = static_cast<double>(a.writes);
      dby[k] = static_cast<double>(m.read_bytes + m.write_bytes) / bu.div;
      aby[k] = static_cast<double>(a.read_bytes + a.write_bytes) / bu.div;
      rby[k] = static_cast<double>(a.read_bytes) / bu.div;
      wby[k] = static_cast<double>(a.write_bytes) / bu.div;
      f->row({static_cast<double>(k), dio[k], aio[k], rio[k], wio[k],
              (m.read_bytes + m.write_bytes) / 1e6, (a.read_bytes + a.write_bytes) / 1e6,
              a.read_bytes / 1e6, a.write_bytes / 1e6});
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
    BLKRR_TRY(add_time_series(ctx, tio, ax, 1, file + "-iops-plot", series(dio, aio, rio, wio)));
    BLKRR_TRY(add_time_series(ctx, tmb, ax, 1, file + "-bytes-plot", series(dby, aby, rby, wby)));

    uint64_t bucket = std::max<uint64_t>(1'000'000, static_cast<uint64_t>(ax.bin_s * 1e9));
    auto prof = inflight_profile(tl[i].issue, tl[i].complete, bucket);
    file = "dyn-" + d.label + "-inflight";
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
    fax.bin_s = static_cast<double>(bucket) / 1e9;
    if (!prof.buckets.empty()) fax.offset_s += secs(prof.buckets[0].t_ns);  // buckets start at t0
    BLKRR_TRY(
        add_time_series(ctx, fl, fax, fax.bin_s, file + "-plot",
                        {{pre + "max in the bin", read_color(i), mx, false, false, 1},
                         {pre + "time-weighted mean", neutral_color(i), mean, false, false, 2}}));
    js[d.label]["inflight_mean"] = prof.mean;
    js[d.label]["inflight_max"] = prof.max;
  }
  ctx.add_plot(sec, tio);
  ctx.add_plot(sec, tmb);
  ctx.add_plot(sec, fl);
  return {};
}

}  // namespace blkrr::report
