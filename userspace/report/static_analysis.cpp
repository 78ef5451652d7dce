#include "report/static_analysis.h"

#include <algorithm>

namespace blkrr::report {

uint64_t IntervalSet::add(uint64_t begin, uint64_t end) {
  if (end <= begin) return 0;
  // First piece that could touch [begin, end): the one starting at or before begin.
  auto it = map_.upper_bound(begin);
  if (it != map_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= begin) it = prev;
  }
  uint64_t nb = begin, ne = end, removed = 0;
  while (it != map_.end() && it->first <= end) {
    nb = std::min(nb, it->first);
    ne = std::max(ne, it->second);
    removed += it->second - it->first;
    it = map_.erase(it);
  }
  map_.emplace(nb, ne);
  uint64_t added = (ne - nb) - removed;
  covered_ += added;
  return added;
}

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

std::vector<WorkingSetPoint> cumulative_working_set(const TimeOrder& s, uint64_t step_ns) {
  std::vector<WorkingSetPoint> out;
  if (s.size() == 0 || step_ns == 0) return out;
  IntervalSet all, rd, wr;
  uint64_t k = 0;
  auto emit = [&] {
    out.push_back({(k + 1) * step_ns, all.covered(), rd.covered(), wr.covered()});
  };
  for (size_t i = 0; i < s.size(); ++i) {
    const Sample& x = s[i];
    uint64_t w = x.t_ns / step_ns;
    while (k < w) {
      emit();
      ++k;
    }
    all.add(x.sector, x.end_sector());
    (x.write() ? wr : rd).add(x.sector, x.end_sector());
  }
  emit();
  return out;
}

std::vector<SeekPoint> seek_distance(const TimeOrder& s, uint64_t window_ns) {
  std::vector<SeekPoint> out;
  if (s.size() == 0 || window_ns == 0) return out;
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
