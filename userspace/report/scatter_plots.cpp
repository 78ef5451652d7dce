// The scatter plots of the dynamic section (sonar, latency and delay over
// time, index and requests in flight): each input is one pass in file order
// and one in-flight sweep over its issue- and completion-sorted copies.
#include "report/scatter_plots.h"

#include <algorithm>
#include <optional>

#include "report/timeplot.h"
#include "report/time_axis.h"

namespace blkrr::report {

namespace {

constexpr double kLogFloorMs = 1e-3;  // latencies below 1 us are drawn at 1 us on log axes

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

// Latency (and with `replay` the issue delay) of every request against the
// requests in flight at its issue.
Status add_in_flight(const Dataset& d, bool replay, Scatter& lat_q, Scatter& del_q) {
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
  return {};
}

}  // namespace

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
    BLKRR_TRY(add_in_flight(d, replay, lat_q, del_q));
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

}  // namespace blkrr::report
