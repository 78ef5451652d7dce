// The working-set and seek-distance plots of the static section: per window
// size and cumulatively, from one sweep in sector order and one pass in
// set-point order over each input.
#include "report/static_series.h"

#include <algorithm>

#include "report/static_analysis.h"
#include "report/timeplot.h"
#include "report/time_axis.h"

namespace blkrr::report {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kSecMiB = 512.0 / kMiB;  // sectors -> MiB
constexpr uint64_t kSec = 1'000'000'000;

// Working sets of every window size from one sweep in sector order; the
// cumulative one in steps of the shortest window.
Result<std::vector<WorkingSets>> all_working_sets(const std::vector<const Dataset*>& data,
                                                  const std::vector<uint64_t>& windows) {
  std::vector<WorkingSets> out;
  for (const Dataset* d : data) {
    auto by_sector = d->sorted(SortKey::kSector);
    if (!by_sector) return by_sector.error();
    out.push_back(working_sets(**by_sector, windows, windows.front()));
    BLKRR_TRY((*by_sector)->status());
    d->drop_sorted(SortKey::kSector);
  }
  return out;
}

}  // namespace

std::vector<uint64_t> static_windows_ns(uint64_t span_ns) {
  uint64_t unit = kSec;  // the ladder's first window
  while (unit > 1'000'000 && 600 * unit > span_ns) unit /= 10;
  return {unit, 6 * unit, 60 * unit, 600 * unit};
}

std::string window_tag(uint64_t ns) {
  return ns >= kSec ? std::to_string(ns / kSec) + "s" : std::to_string(ns / 1'000'000) + "ms";
}

// The longest set-point span of the inputs, in seconds.
double span_s(const std::vector<const Dataset*>& data) {
  uint64_t t = 0;
  for (const Dataset* d : data) t = std::max(t, d->samples.bounds().empty_t_max());
  return static_cast<double>(t) / 1e9;
}

Status working_set_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                         nlohmann::json& js) {
  TimeAxis ax = plot_time_axis(data, span_s(data));
  uint64_t t_max = static_cast<uint64_t>(span_s(data) * 1e9);
  const std::vector<uint64_t> windows = static_windows_ns(t_max);
  auto sets = all_working_sets(data, windows);
  if (!sets) return sets.error();
  for (int w = 0; w <= 4; ++w) {
    bool cumulative = w == 4;
    uint64_t win = cumulative ? windows.front() : windows[static_cast<size_t>(w)];
    std::string tag = cumulative ? "cumulative" : window_tag(win);
    PlotSpec lin, log;
    lin.name = "ws-" + tag + "-lin";
    lin.title = cumulative ? "Cumulative working set: how much distinct data the load has touched "
                             "(a steady climb = new data, flat = re-use)"
                           : "Working set per " + fmt_elapsed(series_window_s(win, t_max)) +
                                 " window: distinct data touched (reads blue, writes red)";
    lin.ylabel = "working set [MiB]";
    for (size_t i = 0; i < data.size(); ++i) {
      const Dataset& d = *data[i];
      const auto& ws = cumulative ? (*sets)[i].cumulative : (*sets)[i].windows[w];
      std::string name = "static-" + d.label + "-ws-" + tag;
      auto f = ctx.csv(name, {"t_s", "all_mib", "reads_mib", "writes_mib"});
      if (!f) return f.error();
      for (const auto& p : ws)
        f->row({static_cast<double>(p.t_ns) / 1e9, p.all * kSecMiB, p.reads * kSecMiB,
                p.writes * kSecMiB});
      BLKRR_TRY(f->close());
      if (ws.empty()) continue;
      std::string pre = data.size() > 1 ? d.label + " " : "";
      mark_plot(lin, d);
      auto get = [&](auto member) {
        return per_step(ws, [&](const WorkingSetPoint& p) { return p.*member * kSecMiB; });
      };
      TimeSeries all{pre + "all", neutral_color(i), get(&WorkingSetPoint::all)};
      TimeSeries rd{pre + "reads", read_color(i), get(&WorkingSetPoint::reads)};
      TimeSeries wr{pre + "writes", write_color(i), get(&WorkingSetPoint::writes)};
      for (auto* t : {&all, &rd, &wr}) {
        t->use_max = cumulative;
        t->band = !cumulative && t != &all;
      }
      double step = series_window_s(win, d.samples.bounds().t_max);
      BLKRR_TRY(add_time_series(ctx, lin, ax, step, name + "-plot", {all, rd, wr}));
      if (cumulative)
        js[d.label]["working_set_total_mib"] = ws.back().all * kSecMiB;
      else {
        double mx = 0;
        for (const auto& p : ws) mx = std::max(mx, p.all * kSecMiB);
        js[d.label]["working_set_max_mib"][tag] = mx;
      }
    }
    log = lin;
    log.name = "ws-" + tag + "-log";
    log.title += " (log scale)";
    log.logy = true;
    ctx.add_plot(sec, lin);
    ctx.add_plot(sec, log);
  }
  return {};
}

Status seek_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                  nlohmann::json& js) {
  TimeAxis ax = plot_time_axis(data, span_s(data));
  const uint64_t t_max = static_cast<uint64_t>(span_s(data) * 1e9);
  const std::vector<uint64_t> windows = static_windows_ns(t_max);
  std::vector<std::vector<std::vector<SeekPoint>>> per_dataset;  // dataset, window size
  for (const Dataset* d : data) {
    auto by_t = d->sorted(SortKey::kSetPoint);
    if (!by_t) return by_t.error();
    per_dataset.push_back(seek_distances(**by_t, windows));
  }
  PlotSpec turns;
  turns.name = "turns";
  turns.title = "Turns: share of backward seeks (high = the load jumps back and forth)";
  turns.ylabel = "backward seeks [% of requests]";
  for (size_t w = 0; w < windows.size(); ++w) {
    const uint64_t win = windows[w];
    std::string tag = window_tag(win);
    std::string actual = fmt_elapsed(series_window_s(win, t_max));
    PlotSpec sum, avg;
    sum.name = "seek-sum-" + tag;
    sum.title = "Seek distance summed per " + actual + " window: how far the load travels";
    avg.name = "seek-avg-" + tag;
    avg.title =
        "Average seek distance per " + actual + " window (small = sequential, large = random)";
    std::vector<std::vector<SeekPoint>> all(data.size());
    double max_sum = 0, max_avg = 0;
    for (size_t i = 0; i < data.size(); ++i) {
      all[i] = std::move(per_dataset[i][w]);
      for (const auto& p : all[i]) {
        max_sum = std::max(max_sum, static_cast<double>(p.sum) * 512);
        max_avg = std::max(max_avg, p.avg() * 512);
      }
    }
    Scale us = byte_scale(max_sum), ua = byte_scale(max_avg);
    sum.ylabel = "seek distance per window [" + us.unit + "]";
    avg.ylabel = "average seek distance [" + ua.unit + "]";
    for (size_t i = 0; i < data.size(); ++i) {
      const Dataset& d = *data[i];
      const auto& sk = all[i];
      std::string name = "static-" + d.label + "-seek-" + tag;
      auto f = ctx.csv(
          name, {"t_s", "seeks", "backward", "sum_sectors", "avg_sectors", "backward_percent"});
      if (!f) return f.error();
      uint64_t seeks = 0, back = 0, total = 0;
      for (const auto& p : sk) {
        f->row({static_cast<double>(p.t_ns) / 1e9, static_cast<double>(p.seeks),
                static_cast<double>(p.backward), static_cast<double>(p.sum), p.avg(),
                p.turns_percent()});
        seeks += p.seeks;
        back += p.backward;
        total += p.sum;
      }
      BLKRR_TRY(f->close());
      if (sk.empty()) continue;
      mark_plot(sum, d);
      mark_plot(avg, d);
      double step = series_window_s(win, d.samples.bounds().t_max);
      auto vs = per_step(
          sk, [&](const SeekPoint& p) { return static_cast<double>(p.sum) * 512 / us.div; });
      auto va = per_step(sk, [&](const SeekPoint& p) { return p.avg() * 512 / ua.div; });
      BLKRR_TRY(add_time_series(ctx, sum, ax, step, name + "-sum-plot",
                                {{d.label, neutral_color(i), vs}}));
      BLKRR_TRY(add_time_series(ctx, avg, ax, step, name + "-avg-plot",
                                {{d.label, neutral_color(i), va}}));
      if (win == windows.front()) {
        mark_plot(turns, d);
        auto vt = per_step(sk, [](const SeekPoint& p) { return p.turns_percent(); });
        BLKRR_TRY(add_time_series(ctx, turns, ax, step, name + "-turns-plot",
                                  {{d.label, neutral_color(i), vt}}));
        js[d.label]["seek_avg_sectors"] = seeks ? static_cast<double>(total) / seeks : 0.0;
        js[d.label]["seek_avg_bytes"] = seeks ? 512.0 * static_cast<double>(total) / seeks : 0.0;
        js[d.label]["backward_seek_percent"] = seeks ? 100.0 * back / seeks : 0.0;
      }
    }
    ctx.add_plot(sec, sum);
    ctx.add_plot(sec, avg);
  }
  ctx.add_plot(sec, turns);
  return {};
}

}  // namespace blkrr::report
