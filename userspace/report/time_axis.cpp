#include "report/time_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/stats.h"

namespace blkrr::report {

std::string ms_log_tics(const std::string& axis) {
  static const char* kLabels[] = {"1 us",   "10 us", "100 us", "1 ms",  "10 ms",
                                  "100 ms", "1 s",   "10 s",   "100 s", "1000 s"};
  std::string s = "set " + axis + "tics (";
  double v = 1e-3;
  for (size_t i = 0; i < std::size(kLabels); ++i, v *= 10) {
    char b[64];
    std::snprintf(b, sizeof b, "%s\"%s\" %g", i ? ", " : "", kLabels[i], v);
    s += b;
  }
  return s + ")\n";
}

std::string TimeAxis::label(const std::string& what) const {
  if (wall) return what + " [UTC]";
  return what + " [" + unit + "]";
}

std::string TimeAxis::gnuplot() const {
  if (!wall) return "";
  // Plain numbers (Unix seconds, fractions kept) printed as UTC times; tics
  // every round interval, so they fall on whole minutes / hours.
  static const double kTics[] = {1,   2,    5,    10,   15,    30,    60,    120,   300,    600,
                                 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800};
  double span = bin_s * static_cast<double>(bins), tic = kTics[std::size(kTics) - 1];
  for (double t : kTics)
    if (t >= span / 8) {
      tic = t;
      break;
    }
  std::string fmt = span > 86400 ? "%m-%d\\n%H:%M" : span > 120 ? "%H:%M" : "%H:%M:%S";
  char b[160];
  std::snprintf(b, sizeof b, "set format x \"%s\" timedate\nset xtics %g\n", fmt.c_str(), tic);
  return b;
}

TimeAxis choose_time_axis(double span_s, std::optional<double> wall_start_unix, size_t max_bins,
                          double min_bin_s) {
  static const double kNice[] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05,  0.1,   0.2,   0.5,
                                 1,     2,     5,     10,   15,   30,    60,    120,   300,
                                 600,   900,   1800,  3600, 7200, 10800, 21600, 43200, 86400};
  TimeAxis a;
  span_s = std::max(span_s, 0.0);
  max_bins = std::max<size_t>(max_bins, 1);
  double need = std::max(span_s / static_cast<double>(max_bins), min_bin_s);
  a.bin_s = kNice[std::size(kNice) - 1];
  for (double w : kNice)
    if (w >= need * (1 - 1e-9)) {
      a.bin_s = w;
      break;
    }
  if (a.bin_s < need * (1 - 1e-9)) a.bin_s = std::ceil(need / 86400) * 86400;
  a.bins = std::max<size_t>(1, static_cast<size_t>(std::ceil(span_s / a.bin_s - 1e-9)));
  if (span_s >= 7200) {
    a.unit_s = 3600;
    a.unit = "h";
  } else if (span_s >= 120) {
    a.unit_s = 60;
    a.unit = "min";
  }
  if (wall_start_unix && *wall_start_unix > 0 && span_s >= 60) {
    a.wall = true;
    a.offset_s = *wall_start_unix;
  }
  return a;
}

std::vector<BandPoint> fold_bins(const std::vector<double>& per_step, double step_s, double bin_s) {
  std::vector<BandPoint> out;
  if (per_step.empty() || !(step_s > 0)) return out;
  auto k = static_cast<size_t>(std::max(1.0, std::ceil(bin_s / step_s - 1e-9)));
  out.reserve((per_step.size() + k - 1) / k);
  for (size_t b = 0; b < per_step.size(); b += k) {
    size_t e = std::min(per_step.size(), b + k);
    BandPoint p;
    p.t0_s = static_cast<double>(b) * step_s;
    p.t1_s = static_cast<double>(e) * step_s;
    p.min = p.max = per_step[b];
    double sum = 0;
    for (size_t i = b; i < e; ++i) {
      sum += per_step[i];
      p.min = std::min(p.min, per_step[i]);
      p.max = std::max(p.max, per_step[i]);
    }
    // A partial last bin: steps past the data are not zeros, they are absent.
    p.mean = sum / static_cast<double>(e - b);
    out.push_back(p);
  }
  return out;
}

}  // namespace blkrr::report
