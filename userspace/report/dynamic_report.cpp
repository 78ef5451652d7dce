#include "report/dynamic_report.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "report/concurrency.h"
#include "report/histogram.h"
#include "report/static_analysis.h"

namespace blkrr::report {

namespace {

constexpr double kLogFloorMs = 1e-3;  // latencies below 1 us are drawn at 1 us on log axes

using Value = std::function<double(size_t)>;

struct Axis {
  std::string label;
  Value value;
  bool log = false;
};

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
    std::string pre = data.size() > 1 ? d.label + " " : "";
    for (int dir = 0; dir < 2; ++dir) {
      std::string file = "dyn-" + d.label + "-" + name + (dir ? "-writes" : "-reads");
      auto f = ctx.csv(file, {"x", "y"});
      if (!f) return f.error();
      Thinner th(x0, x1, xa.log, y0, y1, ya.log, 480, 320);  // 2.5 px cells ~ point size
      for (size_t i = 0; i < n; ++i) {
        if (d.samples[i].write() != (dir == 1)) continue;
        double x = clampv(xa.value(i), xa.log), y = clampv(ya.value(i), ya.log);
        if (th.keep(x, y)) f->row({x, y});
      }
      BLKRR_TRY(f->close());
      if (f->rows())
        p.series.push_back({pre + (dir ? "writes" : "reads"), Context::data_path(file), "1:2",
                            "points", dir ? write_color(di) : read_color(di),
                            static_cast<int>(7 + 2 * di), 0.4});
    }
    mark_plot(p, d);
  }
  ctx.add_plot(sec, p);
  return {};
}

double ms(uint64_t ns) {
  return static_cast<double>(ns) / 1e6;
}
double secs(uint64_t ns) {
  return static_cast<double>(ns) / 1e9;
}

Summary summary_of(const Dataset& d, int dir, bool delay) {  // dir: -1 all, 0 reads, 1 writes
  std::vector<double> v;
  for (const auto& s : d.samples)
    if (dir < 0 || s.write() == (dir == 1))
      v.push_back(delay ? static_cast<double>(s.delay_ns) / 1e6 : ms(s.latency_ns));
  return summarize(v);
}

Status histograms(Context& ctx, Section& sec, const std::vector<const Dataset*>& data, bool delay) {
  PlotSpec p;
  p.name = delay ? "delay-histogram" : "latency-histogram";
  p.title = delay ? "Delay histogram (actual issue minus set point)" : "Latency histogram";
  p.xlabel = delay ? "delay [ms]" : "latency [ms], logarithmic buckets";
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
      Summary s = summary_of(d, dir, false);
      j["latency_ms"][key] = to_json(s);
      lat_rows.emplace_back(d.label + " " + key, s);
      if (d.has_delay()) {
        Summary sd = summary_of(d, dir, true);
        j["delay_ms"][key] = to_json(sd);
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
      v.push_back({label, f, log});
    }
    return v;
  };
  std::vector<Timeline*> tps;
  tps.reserve(tl.size());
  for (auto& t : tl) tps.push_back(&t);
  auto lat = axes(data, tps, "latency [ms]", true, 1);
  BLKRR_TRY(scatter(ctx, sec, "sonar", "Sonar: latency over real time", data,
                    axes(data, tps, "real time (actual issue) [s]", false, 0), lat));
  BLKRR_TRY(scatter(ctx, sec, "latency-setpoint", "Latency over set point", data,
                    axes(data, tps, "set point [s]", false, 2), lat));
  BLKRR_TRY(scatter(ctx, sec, "latency-completion", "Latency over completion time", data,
                    axes(data, tps, "completion time [s]", false, 3), lat));
  BLKRR_TRY(scatter(ctx, sec, "latency-index", "Latency over request index (file order)", data,
                    axes(data, tps, "request index", false, 4), lat));
  BLKRR_TRY(scatter(ctx, sec, "latency-inflight", "Latency vs requests in flight", data,
                    axes(data, tps, "requests in flight at issue", false, 6), lat));
  if (!replays.empty()) {
    auto del = axes(replays, rtl, "delay [ms]", false, 5);
    BLKRR_TRY(scatter(ctx, sec, "delay-setpoint", "Delay over set point", replays,
                      axes(replays, rtl, "set point [s]", false, 2), del));
    BLKRR_TRY(scatter(ctx, sec, "delay-inflight", "Delay vs requests in flight", replays,
                      axes(replays, rtl, "requests in flight at issue", false, 6), del));
    BLKRR_TRY(scatter(ctx, sec, "latency-delay", "Latency vs delay", replays, del,
                      axes(replays, rtl, "latency [ms]", true, 1)));
  }
  BLKRR_TRY(histograms(ctx, sec, data, false));
  if (!replays.empty()) BLKRR_TRY(histograms(ctx, sec, replays, true));

  // Demanded vs achieved throughput, requests in flight over time.
  PlotSpec tio, tmb, fl;
  tio.name = "throughput-iops";
  tio.title = "Demanded (set points) vs achieved (completions) requests per second";
  tmb.name = "throughput-mbps";
  tmb.title = "Demanded vs achieved throughput";
  fl.name = "inflight";
  fl.title = "Requests in flight over time";
  tio.xlabel = tmb.xlabel = fl.xlabel = "time [s]";
  tio.ylabel = "IOPS";
  tmb.ylabel = "MB/s (10^6 bytes)";
  fl.ylabel = "requests in flight";
  for (size_t i = 0; i < data.size(); ++i) {
    const Dataset& d = *data[i];
    auto dem = rates_by(d.samples, 1'000'000'000, [](const Sample& s) { return s.t_ns; });
    auto ach = rates_by(d.samples, 1'000'000'000, [](const Sample& s) { return s.complete_ns(); });
    std::string file = "dyn-" + d.label + "-throughput";
    auto f = ctx.csv(
        file, {"t_s", "demanded_iops", "achieved_iops", "achieved_read_iops", "achieved_write_iops",
               "demanded_mbs", "achieved_mbs", "achieved_read_mbs", "achieved_write_mbs"});
    if (!f) return f.error();
    for (size_t k = 0; k < std::max(dem.size(), ach.size()); ++k) {
      RatePoint a = k < ach.size() ? ach[k] : RatePoint{},
                m = k < dem.size() ? dem[k] : RatePoint{};
      f->row({static_cast<double>(k), static_cast<double>(m.reads + m.writes),
              static_cast<double>(a.reads + a.writes), static_cast<double>(a.reads),
              static_cast<double>(a.writes), (m.read_bytes + m.write_bytes) / 1e6,
              (a.read_bytes + a.write_bytes) / 1e6, a.read_bytes / 1e6, a.write_bytes / 1e6});
    }
    BLKRR_TRY(f->close());
    std::string path = Context::data_path(file), pre = data.size() > 1 ? d.label + " " : "";
    Series dm{pre + "demanded", path, "1:2", "lines", neutral_color(i)};
    dm.dashed = true;
    tio.series.push_back(dm);
    tio.series.push_back({pre + "achieved", path, "1:3", "lines", neutral_color(i + 1)});
    tio.series.push_back({pre + "achieved reads", path, "1:4", "lines", read_color(i), 7, 1});
    tio.series.push_back({pre + "achieved writes", path, "1:5", "lines", write_color(i), 7, 1});
    dm.using_ = "1:6";
    tmb.series.push_back(dm);
    tmb.series.push_back({pre + "achieved", path, "1:7", "lines", neutral_color(i + 1)});
    tmb.series.push_back({pre + "achieved reads", path, "1:8", "lines", read_color(i), 7, 1});
    tmb.series.push_back({pre + "achieved writes", path, "1:9", "lines", write_color(i), 7, 1});
    mark_plot(tio, d);
    mark_plot(tmb, d);

    uint64_t span = 0;
    if (!d.samples.empty())
      span = *std::max_element(tl[i].complete.begin(), tl[i].complete.end()) -
             *std::min_element(tl[i].issue.begin(), tl[i].issue.end());
    uint64_t bucket = std::max<uint64_t>(1'000'000, span / 4000);
    auto prof = inflight_profile(tl[i].issue, tl[i].complete, bucket);
    file = "dyn-" + d.label + "-inflight";
    auto g = ctx.csv(file, {"t_s", "mean", "max"});
    if (!g) return g.error();
    for (const auto& b : prof.buckets) g->row({secs(b.t_ns), b.avg, static_cast<double>(b.max)});
    BLKRR_TRY(g->close());
    path = Context::data_path(file);
    fl.series.push_back({pre + "max", path, "1:3", "steps", read_color(i), 7, 1});
    fl.series.push_back({pre + "time-weighted mean", path, "1:2", "steps", neutral_color(i)});
    mark_plot(fl, d);
    js[d.label]["inflight_mean"] = prof.mean;
    js[d.label]["inflight_max"] = prof.max;
  }
  ctx.add_plot(sec, tio);
  ctx.add_plot(sec, tmb);
  ctx.add_plot(sec, fl);
  return {};
}

}  // namespace blkrr::report
