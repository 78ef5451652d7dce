#include "report/static_analysis.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>

namespace blkrr::report {

namespace {

enum Cls { kAll = 0, kReads = 1, kWrites = 2 };

// Per window, the end of the sectors covered so far: requests arrive by
// start sector, so a new one adds what lies beyond that end.
struct WindowCover {
  uint64_t window_ns = 1;
  std::vector<WorkingSetPoint> points;
  std::vector<uint64_t> covered[3];

  WindowCover(uint64_t w, uint64_t t_max) : window_ns(series_window(w, t_max)) {
    size_t n = t_max / window_ns + 1;
    points.resize(n);
    for (size_t k = 0; k < n; ++k) points[k].t_ns = k * window_ns;
    for (auto& c : covered) c.assign(n, 0);
  }
  void add(const Sample& x) {
    size_t k = x.t_ns / window_ns;
    uint64_t b = x.sector, e = x.end_sector();
    auto credit = [&](int cls, uint64_t WorkingSetPoint::*field) {
      uint64_t& ce = covered[cls][k];
      uint64_t from = std::max(b, ce);
      if (e > from) {
        points[k].*field += e - from;
        ce = e;
      }
    };
    credit(kAll, &WorkingSetPoint::all);
    if (x.write())
      credit(kWrites, &WorkingSetPoint::writes);
    else
      credit(kReads, &WorkingSetPoint::reads);
  }
};

// First touch of every sector, swept by position: the requests covering the
// sweep position that no earlier-issued, farther-reaching request covers, by
// end (their set points rise with their ends). The first one is the earliest
// request covering the position; the stretch up to its end (or the next
// request's start) is credited to its step.
class FirstTouch {
 public:
  FirstTouch(uint64_t step_ns, size_t steps) : step_ns_(step_ns), added_(steps, 0) {}

  void add(uint64_t t, uint64_t b, uint64_t e) {
    advance(b);
    auto it = stair_.lower_bound(e);
    if (it != stair_.end() && it->second <= t) return;  // covered by an earlier request
    if (it != stair_.end() && it->first == e)
      it->second = t;
    else
      it = stair_.emplace_hint(it, e, t);
    while (it != stair_.begin()) {  // entries ending before e issued later: covered by this one
      auto prev = std::prev(it);
      if (prev->second < t) break;
      stair_.erase(prev);
    }
  }
  const std::vector<uint64_t>& finish() {
    advance(std::numeric_limits<uint64_t>::max());
    return added_;
  }

 private:
  void advance(uint64_t to) {
    while (!stair_.empty() && pos_ < to) {
      auto f = stair_.begin();
      uint64_t seg_end = std::min(f->first, to);
      added_[std::min<uint64_t>(f->second / step_ns_, added_.size() - 1)] += seg_end - pos_;
      pos_ = seg_end;
      if (pos_ >= f->first) stair_.erase(f);
    }
    pos_ = std::max(pos_, to);
  }

  uint64_t step_ns_;
  std::vector<uint64_t> added_;
  std::map<uint64_t, uint64_t> stair_;  // end sector -> set point
  uint64_t pos_ = 0;
};

}  // namespace

WorkingSets working_sets(const SampleStore& by_sector, const std::vector<uint64_t>& windows_ns,
                         uint64_t step_ns) {
  WorkingSets out;
  out.windows.resize(windows_ns.size());
  if (by_sector.empty() || step_ns == 0) return out;
  uint64_t t_max = by_sector.bounds().t_max;
  std::vector<WindowCover> win;
  win.reserve(windows_ns.size());
  for (uint64_t w : windows_ns) win.emplace_back(std::max<uint64_t>(w, 1), t_max);
  step_ns = series_window(step_ns, t_max);
  size_t steps = t_max / step_ns + 1;
  FirstTouch first[3] = {{step_ns, steps}, {step_ns, steps}, {step_ns, steps}};
  by_sector.for_each([&](const Sample& x) {
    if (x.sectors == 0) return;
    for (auto& w : win) w.add(x);
    first[kAll].add(x.t_ns, x.sector, x.end_sector());
    first[x.write() ? kWrites : kReads].add(x.t_ns, x.sector, x.end_sector());
  });
  for (size_t i = 0; i < win.size(); ++i) out.windows[i] = std::move(win[i].points);
  const auto& all = first[kAll].finish();
  const auto& rd = first[kReads].finish();
  const auto& wr = first[kWrites].finish();
  out.cumulative.resize(steps);
  WorkingSetPoint cum;
  for (size_t k = 0; k < steps; ++k) {
    cum.all += all[k];
    cum.reads += rd[k];
    cum.writes += wr[k];
    cum.t_ns = (k + 1) * step_ns;
    out.cumulative[k] = cum;
  }
  return out;
}

std::vector<std::vector<SeekPoint>> seek_distances(const SampleStore& by_t,
                                                   const std::vector<uint64_t>& windows_ns) {
  std::vector<std::vector<SeekPoint>> out(windows_ns.size());
  if (by_t.empty()) return out;
  uint64_t t_max = by_t.bounds().t_max;
  std::vector<uint64_t> width;
  for (size_t i = 0; i < windows_ns.size(); ++i) {
    width.push_back(series_window(std::max<uint64_t>(windows_ns[i], 1), t_max));
    out[i].resize(t_max / width[i] + 1);
    for (size_t k = 0; k < out[i].size(); ++k) out[i][k].t_ns = k * width[i];
  }
  bool first = true;
  uint64_t prev_end = 0;
  by_t.for_each([&](const Sample& x) {
    if (!first) {
      bool back = x.sector < prev_end;
      uint64_t dist = back ? prev_end - x.sector : x.sector - prev_end;
      for (size_t i = 0; i < width.size(); ++i) {
        auto& p = out[i][x.t_ns / width[i]];
        ++p.seeks;
        p.backward += back;
        p.sum += dist;
      }
    }
    first = false;
    prev_end = x.end_sector();
  });
  return out;
}

PositionHistogram position_histogram(const SampleStore& s, size_t bins) {
  PositionHistogram h;
  bins = std::max<size_t>(bins, 1);
  uint64_t max_end = s.bounds().end_max;
  h.slice_sectors = std::max<uint64_t>(1, (max_end + bins - 1) / bins);
  h.reads.assign(bins, 0);
  h.writes.assign(bins, 0);
  s.for_each([&](const Sample& x) {
    size_t b = std::min<uint64_t>(x.sector / h.slice_sectors, bins - 1);
    ++(x.write() ? h.writes : h.reads)[b];
  });
  return h;
}

SizeHistogram size_histogram(const SampleStore& s) {
  SizeHistogram h;
  s.for_each([&](const Sample& x) { (x.write() ? h.writes : h.reads).add(x.sectors); });
  return h;
}

std::vector<ProcDistributions> per_process(const SampleStore& by_t, size_t nprocs) {
  std::vector<ProcDistributions> out(nprocs);
  bool first = true;
  uint64_t pe = 0;
  by_t.for_each([&](const Sample& x) {
    if (x.proc < nprocs) {
      auto& d = out[x.proc];
      d.sizes.add(x.sectors);
      if (!first) d.seeks.add(x.sector < pe ? pe - x.sector : x.sector - pe);
    }
    first = false;
    pe = x.end_sector();
  });
  return out;
}

}  // namespace blkrr::report
