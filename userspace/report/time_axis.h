// Adaptive time axes for the report's plots and tables: time axes in s/min/h
// (or wall-clock) with bins chosen so that a plot holds at most ~1000 of
// them. The units themselves (fmt_bytes, fmt_duration_ns, ...) are in
// core/units.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/units.h"

namespace blkrr::report {

// Throughput in the report is MiB/s (2^20 bytes per second), as every
// summary line prints bytes (core/units.h fmt_bytes).
inline constexpr double kBytesPerMiB = 1024.0 * 1024.0;

// gnuplot tics for a logarithmic axis of milliseconds, labelled per decade
// in engineering units ("10 us", "1 ms", "1 s"); `axis` is "x" or "y".
std::string ms_log_tics(const std::string& axis);

// How a plot shows time. x values written to data files are
// (t_s + offset_s) / unit_s; with `wall` (spans of a minute or more) they
// are Unix seconds and gnuplot prints them as UTC times of day.
struct TimeAxis {
  double bin_s = 1;   // width of one bin
  size_t bins = 1;    // bins covering the span
  double unit_s = 1;  // 1 (s), 60 (min), 3600 (h)
  std::string unit = "s";
  bool wall = false;
  double offset_s = 0;  // added to dataset times (wall: the start's Unix time)
  double x(double t_s) const { return (t_s + offset_s) / (wall ? 1.0 : unit_s); }
  std::string label(const std::string& what) const;  // "time since start [min]"
  std::string gnuplot() const;                       // format/tics commands (wall-clock axes)
};

// The axis for a span of `span_s` seconds: bins of a "nice" width (1 s,
// 2 s, 5 s, 10 s, 15 s, 30 s, 1 min, ...) of at least `min_bin_s`, at most
// `max_bins` of them; units s below 2 min, min below 2 h, h above.
TimeAxis choose_time_axis(double span_s, std::optional<double> wall_start_unix,
                          size_t max_bins = 1000, double min_bin_s = 1);

// Values per step (e.g. per second) folded into wider bins: the mean and
// the spread of the steps inside each bin.
struct BandPoint {
  double t0_s = 0, t1_s = 0;  // bin start and end
  double mean = 0, min = 0, max = 0;
};
// `per_step[i]` is the value of [i*step_s, (i+1)*step_s); bins are
// `bin_s` wide (a multiple of step_s, else rounded up to one).
std::vector<BandPoint> fold_bins(const std::vector<double>& per_step, double step_s, double bin_s);

}  // namespace blkrr::report
