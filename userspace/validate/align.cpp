// Offset vote over the first submitted requests of the replay (see
// align_times), or a linear mapping of the spans when no offset wins.
#include "validate/align.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

namespace blkrr::validate {
namespace {

uint64_t key_of(uint64_t sector, Op op) {
  return (sector << 3) ^ static_cast<uint64_t>(op);
}

uint64_t end_time(const ReplayedRequest& r) {
  return r.complete_ns != kNoTime ? r.complete_ns : r.submit_ns;
}

}  // namespace

std::string Alignment::describe() const {
  char buf[256];
  switch (mode) {
    case Mode::kOffset:
      std::snprintf(buf, sizeof buf,
                    "replay times aligned to the trace by an offset of %.6f s "
                    "(%llu of %llu sampled requests agree within %.3f ms)",
                    static_cast<double>(offset_ns) / 1e9, static_cast<unsigned long long>(votes),
                    static_cast<unsigned long long>(sampled), static_cast<double>(spread_ns) / 1e6);
      return buf;
    case Mode::kLinear:
      std::snprintf(buf, sizeof buf,
                    "no consistent time offset (%llu of %llu sampled requests agree): first and "
                    "last requests mapped onto each other (scale %.6f), windows relaxed to "
                    "+-%.1f ms",
                    static_cast<unsigned long long>(votes),
                    static_cast<unsigned long long>(sampled), scale,
                    static_cast<double>(relaxed_slack_ns) / 1e6);
      return buf;
    case Mode::kNone:
      return "no time alignment (nothing to compare)";
  }
  return "";
}

Alignment align_times(const std::vector<ReplayedRequest>& replayed,
                      const std::vector<Request>& traced, const AlignOptions& opts) {
  Alignment a;
  std::vector<const ReplayedRequest*> rs;
  for (const auto& r : replayed)
    if (r.submitted() && r.op != Op::kFlush && r.sectors > 0) rs.push_back(&r);
  if (rs.empty() || traced.empty()) return a;
  std::sort(rs.begin(), rs.end(), [](const ReplayedRequest* x, const ReplayedRequest* y) {
    return x->submit_ns < y->submit_ns;
  });

  std::unordered_map<uint64_t, std::vector<uint64_t>> by_key;
  by_key.reserve(traced.size());
  for (const auto& b : traced)
    if (b.op != Op::kFlush && b.bytes > 0) by_key[key_of(b.sector, b.op)].push_back(b.issue_ns);

  // Each pairing of a sampled request with a traced request of the same start
  // sector and operation bounds the offset: the block layer issued the
  // request after the replayer submitted it and before the replayer saw it
  // complete, so offset in [issue - complete, issue - submit]. The true
  // offset lies in the intervals of nearly all right pairings; wrong ones
  // scatter. The point covered by most intervals wins.
  struct Ev {
    int64_t at;
    int delta;  // +1 opens, -1 closes
  };
  size_t n = std::min(rs.size(), opts.sample);
  auto candidates = [&](size_t i) -> const std::vector<uint64_t>* {
    auto it = by_key.find(key_of(rs[i]->sector, rs[i]->op));
    if (it == by_key.end() || it->second.size() > opts.max_candidates) return nullptr;
    return &it->second;
  };
  // Offset interval of request i paired with a traced issue at t.
  auto interval = [&](size_t i, uint64_t t) {
    const ReplayedRequest& r = *rs[i];
    int64_t width = r.complete_ns != kNoTime && r.complete_ns >= r.submit_ns
                        ? static_cast<int64_t>(r.complete_ns - r.submit_ns)
                        : static_cast<int64_t>(opts.tolerance_ns);
    int64_t err = static_cast<int64_t>(opts.clock_error_ns);
    int64_t hi = static_cast<int64_t>(t) - static_cast<int64_t>(r.submit_ns) + err;
    return std::make_pair(hi - width - err, hi);
  };
  std::vector<Ev> ev;
  for (size_t i = 0; i < n; i++) {
    const auto* c = candidates(i);
    if (!c) continue;
    a.sampled++;
    for (uint64_t t : *c) {
      auto [lo, hi] = interval(i, t);
      ev.push_back({lo, +1});
      ev.push_back({hi, -1});
    }
  }
  std::sort(ev.begin(), ev.end(), [](const Ev& x, const Ev& y) {
    return x.at != y.at ? x.at < y.at : x.delta > y.delta;
  });
  int64_t count = 0, best = 0, best_lo = 0, best_hi = 0;
  for (size_t i = 0; i < ev.size(); i++) {
    count += ev[i].delta;
    if (count > best) {
      best = count;
      best_lo = ev[i].at;
      best_hi = i + 1 < ev.size() ? ev[i + 1].at : ev[i].at;
    }
  }
  int64_t offset = best_lo + (best_hi - best_lo) / 2;
  for (size_t i = 0; i < n; i++) {
    const auto* c = candidates(i);
    if (!c) continue;
    for (uint64_t t : *c) {
      auto [lo, hi] = interval(i, t);
      if (offset >= lo && offset <= hi) {
        a.votes++;
        break;
      }
    }
  }
  if (a.votes >= 3 &&
      static_cast<double>(a.votes) >= opts.min_agreement * static_cast<double>(a.sampled)) {
    a.mode = Alignment::Mode::kOffset;
    a.offset_ns = offset;
    a.spread_ns = static_cast<uint64_t>(best_hi - best_lo);
    return a;
  }

  // Relaxed: map the replay's span onto the span of the traced requests that
  // touch sectors of the replay.
  std::unordered_map<uint64_t, bool> keys;
  for (const auto* r : rs) keys[key_of(r->sector, r->op)] = true;
  uint64_t b0 = ~0ull, b1 = 0;
  for (const auto& b : traced) {
    if (!keys.count(key_of(b.sector, b.op))) continue;
    b0 = std::min(b0, b.issue_ns);
    b1 = std::max(b1, b.completed() ? b.complete_ns : b.issue_ns);
  }
  uint64_t r0 = rs.front()->submit_ns, r1 = 0;
  for (const auto* r : rs) r1 = std::max(r1, end_time(*r));
  if (b0 == ~0ull) {
    b0 = traced.front().issue_ns;
    b1 = b0;
    for (const auto& b : traced) {
      b0 = std::min(b0, b.issue_ns);
      b1 = std::max(b1, b.issue_ns);
    }
  }
  a.mode = Alignment::Mode::kLinear;
  a.scale = r1 > r0 && b1 > b0 ? static_cast<double>(b1 - b0) / static_cast<double>(r1 - r0) : 1.0;
  a.offset_ns = static_cast<int64_t>(b0) -
                static_cast<int64_t>(std::llround(static_cast<double>(r0) * a.scale));
  a.relaxed_slack_ns = static_cast<uint64_t>(0.02 * static_cast<double>(b1 - b0)) + 100'000'000;
  return a;
}

void apply_alignment(const Alignment& a, std::vector<ReplayedRequest>& replayed) {
  if (a.mode == Alignment::Mode::kNone) return;
  auto map = [&](uint64_t t) -> uint64_t {
    double v = static_cast<double>(t) * a.scale + static_cast<double>(a.offset_ns);
    return v <= 0 ? 0 : static_cast<uint64_t>(std::llround(v));
  };
  for (auto& r : replayed) {
    if (!r.submitted()) continue;
    if (a.mode == Alignment::Mode::kOffset) {
      int64_t s = static_cast<int64_t>(r.submit_ns) + a.offset_ns;
      r.submit_ns = s < 0 ? 0 : static_cast<uint64_t>(s);
      if (r.complete_ns != kNoTime) {
        int64_t c = static_cast<int64_t>(r.complete_ns) + a.offset_ns;
        r.complete_ns = c < 0 ? 0 : static_cast<uint64_t>(c);
      }
    } else {
      r.submit_ns = map(r.submit_ns);
      if (r.complete_ns != kNoTime) r.complete_ns = map(r.complete_ns);
    }
  }
}

}  // namespace blkrr::validate
