// Static analyses of a load or trace (no replay results needed): working set,
// seek distance, turns and throughput per time window, size and position
// histograms, per-process views. All take the samples in set-point order;
// window k covers [k*W, (k+1)*W) on the dataset clock, empty windows included;
// W grows when the span would need more than kMaxSeriesWindows windows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "report/histogram.h"
#include "report/sample.h"

namespace blkrr::report {

// Time series have at most about this many windows: a longer span widens the
// window (two requests 83 days apart must not make millions of 1 s rows).
constexpr uint64_t kMaxSeriesWindows = 20000;
inline uint64_t series_window(uint64_t window_ns, uint64_t span_ns) {
  uint64_t need = span_ns / kMaxSeriesWindows + 1;
  return window_ns > need ? window_ns : need;
}

// Distinct sectors touched, split by direction ("all" counts a sector once
// even when both read and written).
struct WorkingSetPoint {
  uint64_t t_ns = 0;  // window start (cumulative: window end)
  uint64_t all = 0, reads = 0, writes = 0;
};
std::vector<WorkingSetPoint> working_set(const TimeOrder& s, uint64_t window_ns);
// Distinct sectors touched from the start up to the end of each step.
std::vector<WorkingSetPoint> cumulative_working_set(const TimeOrder& s, uint64_t step_ns);

// Seek distance of a request: |sector - end sector of the previous request|
// (time order, both directions); the first request has none. A seek is
// "backward" when the request starts below the previous request's end.
struct SeekPoint {
  uint64_t t_ns = 0;
  uint64_t seeks = 0;     // requests with a predecessor
  uint64_t backward = 0;  // of those, backward seeks
  uint64_t sum = 0;       // sectors
  double avg() const { return seeks ? static_cast<double>(sum) / static_cast<double>(seeks) : 0; }
  double turns_percent() const {
    return seeks ? 100.0 * static_cast<double>(backward) / static_cast<double>(seeks) : 0;
  }
};
std::vector<SeekPoint> seek_distance(const TimeOrder& s, uint64_t window_ns);

struct RatePoint {
  uint64_t t_ns = 0;
  uint64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
};
// Requests and bytes per window, keyed by `time_of(sample)`; used with set
// points (demanded) and with completion times (achieved).
template <class TimeOf>
std::vector<RatePoint> rates_by(const std::vector<Sample>& s, uint64_t window_ns, TimeOf time_of) {
  std::vector<RatePoint> out;
  uint64_t span = 0;
  for (const auto& x : s) span = time_of(x) > span ? time_of(x) : span;
  window_ns = series_window(window_ns, span);
  for (const auto& x : s) {
    uint64_t k = time_of(x) / window_ns;
    if (k >= out.size()) {
      size_t old = out.size();
      out.resize(k + 1);
      for (size_t i = old; i <= k; ++i) out[i].t_ns = i * window_ns;
    }
    auto& p = out[k];
    if (x.write()) {
      ++p.writes;
      p.write_bytes += x.bytes();
    } else {
      ++p.reads;
      p.read_bytes += x.bytes();
    }
  }
  return out;
}

// Position histogram: `bins` equal slices of [0, max end sector).
struct PositionHistogram {
  uint64_t slice_sectors = 1;
  std::vector<uint64_t> reads, writes;
};
PositionHistogram position_histogram(const std::vector<Sample>& s, size_t bins);

// Request sizes in sectors, by direction, power-of-two buckets.
struct SizeHistogram {
  Log2Histogram reads, writes;
};
SizeHistogram size_histogram(const std::vector<Sample>& s);

// Per process (native traces): sizes and seek distances of its requests.
// The seek distance is measured against the previous request on the disk,
// whichever process issued it (what the head had to travel).
struct ProcDistributions {
  Log2Histogram sizes, seeks;
};
std::vector<ProcDistributions> per_process(const TimeOrder& s, size_t nprocs);

}  // namespace blkrr::report
