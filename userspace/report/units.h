// Engineering units and adaptive time axes for the report's plots and tables:
// bytes in KiB/MiB/GiB, durations in us/ms/s, time axes in s/min/h (or
// wall-clock) with bins chosen so that a plot holds at most ~1000 of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace blkrr::report {

// A unit to divide values by: bytes / div is in `unit`.
struct Scale {
  double div = 1;
  std::string unit;
};
// The largest binary unit (B, KiB, MiB, GiB, TiB, PiB) in which `max_bytes` is >= 1.
Scale byte_scale(double max_bytes);
// The largest of ns, us, ms, s in which `max_ns` is >= 1.
Scale duration_scale(double max_ns);
// "4.00 KiB" style: 3 significant digits and the fitting unit.
std::string fmt_bytes(double bytes);
std::string fmt_duration_ns(double ns);  // "850 us", "1.23 ms", "2.50 s"
std::string fmt_elapsed(double s);       // "45.2 s", "12 min 5 s", "3 h 20 min"
// Short power-of-two label of a size in bytes: "512", "4K", "64K", "1M", "2G".
std::string size_label(uint64_t bytes);
// ISO-8601 UTC time of a Unix time in seconds ("2026-11-24 23:19:34 UTC").
std::string fmt_utc(double unix_s);

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
