// Plots over time that stay readable at any length: per-step values (e.g.
// per second) are folded into at most ~1000 bins, drawn as steps of the
// per-bin mean with a band from the smallest to the largest step in the bin.
#pragma once

#include <string>
#include <vector>

#include "report/context.h"
#include "report/dataset.h"
#include "report/time_axis.h"

namespace blkrr::report {

struct TimeSeries {
  std::string title;
  std::string color;
  std::vector<double> per_step;  // value of step i, i.e. [i*step, (i+1)*step)
  bool band = true;              // min-max band when a bin holds several steps
  bool dashed = false;
  double width = 2;
  bool use_max = false;  // the line shows the bin's largest step (cumulative series)
};

// The time axis of a plot of `data` spanning `span_s`: wall-clock when the
// plot shows one input whose start time is known, else time since start.
TimeAxis plot_time_axis(const std::vector<const Dataset*>& data, double span_s);

// Writes data/FILE.csv (x, then mean, min, max of each series; two rows per
// bin so that lines are drawn as steps) and adds the series to `p`; sets the
// x axis of `p` and says in its context what a bin is.
Status add_time_series(Context& ctx, PlotSpec& p, const TimeAxis& ax, double step_s,
                       const std::string& file, const std::vector<TimeSeries>& series);

// Values of a window series (one per window, windows of `window_s`) as a
// TimeSeries per step; helper for the analyses' own window types.
template <class Points, class Get>
std::vector<double> per_step(const Points& pts, Get get) {
  std::vector<double> v;
  v.reserve(pts.size());
  for (const auto& p : pts) v.push_back(get(p));
  return v;
}

}  // namespace blkrr::report
