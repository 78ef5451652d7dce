#include "report/static_analysis.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace blkrr::report {

namespace {

struct Span {
  uint64_t b, e;
};

uint64_t merged_length(std::vector<Span>& v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end(), [](const Span& x, const Span& y) { return x.b < y.b; });
  uint64_t total = 0, cb = v[0].b, ce = v[0].e;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i].b <= ce) {
      ce = std::max(ce, v[i].e);
    } else {
      total += ce - cb;
      cb = v[i].b;
      ce = v[i].e;
    }
  }
  return total + (ce - cb);
}

}  // namespace

std::vector<WorkingSetPoint> working_set(const TimeOrder& s, uint64_t window_ns) {
  std::vector<WorkingSetPoint> out;
  if (s.size() == 0 || window_ns == 0) return out;
  window_ns = series_window(window_ns, s[s.size() - 1].t_ns);
  std::vector<Span> all, rd, wr;
  uint64_t k = 0;
  auto flush = [&] {
    WorkingSetPoint p;
    p.t_ns = k * window_ns;
    p.reads = merged_length(rd);
    p.writes = merged_length(wr);
    p.all = merged_length(all);
    out.push_back(p);
    all.clear();
    rd.clear();
    wr.clear();
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const Sample& x = s[i];
    uint64_t w = x.t_ns / window_ns;
    while (k < w) {
      flush();
      ++k;
    }
    Span sp{x.sector, x.end_sector()};
    all.push_back(sp);
    (x.write() ? wr : rd).push_back(sp);
  }
  flush();
  return out;
}

namespace {

// Sectors each step newly touches (first touch in time order), for the
// requests selected by `take`: an offline sweep over the sector axis. Each
// elementary segment between interval ends is credited to the earliest
// request covering it (min-heap of active requests, lazily pruned). Sorting
// 2n events is much faster than a balanced tree of extents for large inputs.
template <class Take>
std::vector<uint64_t> first_touch_per_step(const TimeOrder& s, uint64_t step_ns, size_t steps,
                                           Take take) {
  struct Event {
    uint64_t pos;
    uint32_t idx;
    bool end;
  };
  std::vector<Event> ev;
  for (size_t i = 0; i < s.size(); ++i) {
    const Sample& x = s[i];
    if (!take(x) || x.sectors == 0) continue;
    ev.push_back({x.sector, static_cast<uint32_t>(i), false});
    ev.push_back({x.end_sector(), static_cast<uint32_t>(i), true});
  }
  std::sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) { return a.pos < b.pos; });
  std::vector<uint64_t> added(steps, 0);
  std::vector<bool> ended(s.size(), false);
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> active;
  uint64_t last = 0;
  for (const Event& e : ev) {
    if (e.pos > last) {
      while (!active.empty() && ended[active.top()]) active.pop();
      if (!active.empty()) added[s[active.top()].t_ns / step_ns] += e.pos - last;
    }
    last = e.pos;
    if (e.end)
      ended[e.idx] = true;
    else
      active.push(e.idx);
  }
  return added;
}

}  // namespace

std::vector<WorkingSetPoint> cumulative_working_set(const TimeOrder& s, uint64_t step_ns) {
  std::vector<WorkingSetPoint> out;
  if (s.size() == 0 || step_ns == 0) return out;
  step_ns = series_window(step_ns, s[s.size() - 1].t_ns);
  size_t steps = s[s.size() - 1].t_ns / step_ns + 1;
  auto all = first_touch_per_step(s, step_ns, steps, [](const Sample&) { return true; });
  auto rd = first_touch_per_step(s, step_ns, steps, [](const Sample& x) { return !x.write(); });
  auto wr = first_touch_per_step(s, step_ns, steps, [](const Sample& x) { return x.write(); });
  out.resize(steps);
  WorkingSetPoint cum;
  for (size_t k = 0; k < steps; ++k) {
    cum.all += all[k];
    cum.reads += rd[k];
    cum.writes += wr[k];
    cum.t_ns = (k + 1) * step_ns;
    out[k] = cum;
  }
  return out;
}

std::vector<SeekPoint> seek_distance(const TimeOrder& s, uint64_t window_ns) {
  std::vector<SeekPoint> out;
  if (s.size() == 0 || window_ns == 0) return out;
  window_ns = series_window(window_ns, s[s.size() - 1].t_ns);
  uint64_t last = s[s.size() - 1].t_ns / window_ns;
  out.resize(last + 1);
  for (size_t k = 0; k <= last; ++k) out[k].t_ns = k * window_ns;
  for (size_t i = 1; i < s.size(); ++i) {
    const Sample& x = s[i];
    uint64_t prev_end = s[i - 1].end_sector();
    auto& p = out[x.t_ns / window_ns];
    ++p.seeks;
    if (x.sector < prev_end) {
      ++p.backward;
      p.sum += prev_end - x.sector;
    } else {
      p.sum += x.sector - prev_end;
    }
  }
  return out;
}

PositionHistogram position_histogram(const std::vector<Sample>& s, size_t bins) {
  PositionHistogram h;
  bins = std::max<size_t>(bins, 1);
  uint64_t max_end = 0;
  for (const auto& x : s) max_end = std::max(max_end, x.end_sector());
  h.slice_sectors = std::max<uint64_t>(1, (max_end + bins - 1) / bins);
  h.reads.assign(bins, 0);
  h.writes.assign(bins, 0);
  for (const auto& x : s) {
    size_t b = std::min<uint64_t>(x.sector / h.slice_sectors, bins - 1);
    ++(x.write() ? h.writes : h.reads)[b];
  }
  return h;
}

SizeHistogram size_histogram(const std::vector<Sample>& s) {
  SizeHistogram h;
  for (const auto& x : s) (x.write() ? h.writes : h.reads).add(x.sectors);
  return h;
}

std::vector<ProcDistributions> per_process(const TimeOrder& s, size_t nprocs) {
  std::vector<ProcDistributions> out(nprocs);
  for (size_t i = 0; i < s.size(); ++i) {
    const Sample& x = s[i];
    if (x.proc >= nprocs) continue;
    auto& d = out[x.proc];
    d.sizes.add(x.sectors);
    if (i > 0) {
      uint64_t pe = s[i - 1].end_sector();
      d.seeks.add(x.sector < pe ? pe - x.sector : x.sector - pe);
    }
  }
  return out;
}

}  // namespace blkrr::report
