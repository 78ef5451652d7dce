#include "report/timeplot.h"

#include <algorithm>
#include <cmath>

#include "report/provenance.h"

namespace blkrr::report {

TimeAxis plot_time_axis(const std::vector<const Dataset*>& data, double span_s) {
  std::optional<double> wall;
  if (data.size() == 1) wall = provenance_of(*data[0]).start_unix;
  return choose_time_axis(span_s, wall);
}

Status add_time_series(Context& ctx, PlotSpec& p, const TimeAxis& ax, double step_s,
                       const std::string& file, const std::vector<TimeSeries>& series) {
  std::vector<std::vector<BandPoint>> folded;
  size_t rows = 0;
  for (const auto& s : series) {
    folded.push_back(fold_bins(s.per_step, step_s, ax.bin_s));
    if (s.use_max)
      for (auto& b : folded.back()) b.mean = b.max;
    rows = std::max(rows, folded.back().size());
  }
  std::vector<std::string> cols{"x"};
  for (size_t i = 0; i < series.size(); ++i)
    for (const char* c : {"_mean", "_min", "_max"}) cols.push_back("s" + std::to_string(i) + c);
  auto f = ctx.csv(file, cols);
  if (!f) return f.error();
  std::vector<double> row(cols.size());
  bool banded = false;
  for (size_t b = 0; b < rows; ++b) {
    for (int edge = 0; edge < 2; ++edge) {
      double t = 0;
      for (size_t i = 0; i < series.size(); ++i) {
        const auto& fb = folded[i];
        BandPoint bp = b < fb.size() ? fb[b] : BandPoint{};
        if (b < fb.size()) t = edge ? bp.t1_s : bp.t0_s;
        row[1 + 3 * i] = bp.mean;
        row[2 + 3 * i] = bp.min;
        row[3 + 3 * i] = bp.max;
        banded |= b < fb.size() && bp.t1_s - bp.t0_s > step_s * 1.5;
      }
      row[0] = ax.x(t);
      f->row(row);
    }
  }
  BLKRR_TRY(f->close());
  if (rows == 0) return {};
  std::string path = Context::data_path(file);
  for (size_t i = 0; i < series.size(); ++i) {
    const TimeSeries& s = series[i];
    std::string c = std::to_string(2 + 3 * i), lo = std::to_string(3 + 3 * i),
                hi = std::to_string(4 + 3 * i);
    if (banded && s.band) {
      Series band{s.title + " min-max", path, std::string("1:").append(lo).append(":").append(hi),
                  "filledcurves", s.color};
      band.fill = "transparent solid 0.2 noborder";
      band.key = false;
      // Bands go below every line, so that no band hides a mean.
      auto first_line = std::find_if(p.series.begin(), p.series.end(),
                                     [](const Series& x) { return x.style != "filledcurves"; });
      p.series.insert(first_line, band);
      p.cairo = true;
    }
    Series line{s.title, path, "1:" + c, "lines", s.color, 7, s.width};
    line.dashed = s.dashed;
    p.series.push_back(line);
  }
  p.xlabel = ax.label(ax.wall ? "time" : "time since start");
  if (p.extra.find("set autoscale xfix") == std::string::npos)
    p.extra += ax.gnuplot() + "set autoscale xfix\n";
  double bin = std::ceil(ax.bin_s / step_s - 1e-9) * step_s;
  std::string what = "bins of " + fmt_elapsed(std::max(bin, step_s));
  if (banded)
    what += ": line = mean of the " +
            (step_s == 1 ? std::string("seconds") : fmt_elapsed(step_s) + " windows") +
            " in a bin, shaded = their min to max";
  if (std::find(p.context.begin(), p.context.end(), what) == p.context.end())
    p.context.push_back(what);
  return {};
}

}  // namespace blkrr::report
