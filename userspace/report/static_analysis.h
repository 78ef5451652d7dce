// Static analyses of a load or trace (no replay results needed): working set,
// seek distance, turns and throughput per time window, size and position
// histograms, per-process views. Each is one pass over a SampleStore (in
// set-point order, sector order or any order, as said); memory is one row per
// window, not per request. Window k covers [k*W, (k+1)*W) on the dataset
// clock, empty windows included; W grows when the span would need more than
// kMaxSeriesWindows windows.
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

#include "report/histogram.h"
#include "report/sample.h"
#include "report/sample_store.h"

namespace blkrr::report {

// Time series have at most about this many windows: a longer span widens the
// window (two requests 83 days apart must not make millions of 1 s rows).
// The window is widened to a whole multiple of the one asked for (30 hours of
// 1 s windows become 6 s windows); plots and tables use the actual width.
constexpr uint64_t kMaxSeriesWindows = 20000;
inline uint64_t series_window(uint64_t window_ns, uint64_t span_ns) {
  window_ns = window_ns ? window_ns : 1;
  return window_ns * (span_ns / (window_ns * kMaxSeriesWindows) + 1);
}
// The same in seconds.
inline double series_window_s(uint64_t window_ns, uint64_t span_ns) {
  return static_cast<double>(series_window(window_ns, span_ns)) / 1e9;
}

// Distinct sectors touched, split by direction ("all" counts a sector once
// even when both read and written).
struct WorkingSetPoint {
  uint64_t t_ns = 0;  // window start (cumulative: window end)
  uint64_t all = 0, reads = 0, writes = 0;
};
struct WorkingSets {
  std::vector<std::vector<WorkingSetPoint>> windows;  // one series per window size
  std::vector<WorkingSetPoint> cumulative;  // distinct sectors from the start to each step's end
};
// One sweep over the samples in sector order (exact): per window, the end of
// the range covered so far; cumulatively, each stretch of sectors is credited
// to the earliest request covering it. Memory: the windows, plus the requests
// that overlap at one position and are not covered by an earlier, longer one.
WorkingSets working_sets(const SampleStore& by_sector, const std::vector<uint64_t>& windows_ns,
                         uint64_t step_ns);

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
// One pass in set-point order; one series per window size.
std::vector<std::vector<SeekPoint>> seek_distances(const SampleStore& by_t,
                                                   const std::vector<uint64_t>& windows_ns);

struct RatePoint {
  uint64_t t_ns = 0;
  uint64_t reads = 0, writes = 0, read_bytes = 0, write_bytes = 0;
};
// Requests and bytes per window, keyed by `time_of(sample)` (any order;
// `span_ns` is the largest time_of); used with set points (demanded), issue
// and completion times (achieved).
template <class TimeOf>
std::vector<RatePoint> rates_by(const SampleStore& s, uint64_t window_ns, uint64_t span_ns,
                                TimeOf time_of) {
  std::vector<RatePoint> out;
  if (s.empty()) return out;
  window_ns = series_window(window_ns, span_ns);
  out.resize(span_ns / window_ns + 1);
  for (size_t i = 0; i < out.size(); ++i) out[i].t_ns = i * window_ns;
  s.for_each([&](const Sample& x) {
    uint64_t k = std::min<uint64_t>(time_of(x) / window_ns, out.size() - 1);
    auto& p = out[k];
    if (x.write()) {
      ++p.writes;
      p.write_bytes += x.bytes();
    } else {
      ++p.reads;
      p.read_bytes += x.bytes();
    }
  });
  return out;
}

// Position histogram: `bins` equal slices of [0, max end sector).
struct PositionHistogram {
  uint64_t slice_sectors = 1;
  std::vector<uint64_t> reads, writes;
};
PositionHistogram position_histogram(const SampleStore& s, size_t bins);

// Request sizes in sectors, by direction, power-of-two buckets.
struct SizeHistogram {
  Log2Histogram reads, writes;
};
SizeHistogram size_histogram(const SampleStore& s);

// Per process (native traces): sizes and seek distances of its requests.
// The seek distance is measured against the previous request on the disk,
// whichever process issued it (what the head had to travel).
struct ProcDistributions {
  Log2Histogram sizes, seeks;
};
std::vector<ProcDistributions> per_process(const SampleStore& by_t, size_t nprocs);

}  // namespace blkrr::report
