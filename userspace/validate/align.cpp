// Offset vote over the first submitted requests of the replay (see
// align_times); when no offset wins, the requests are paired by order.
#include "validate/align.h"

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace blkrr::validate {
namespace {

uint64_t key_of(uint64_t sector, Op op) {
  return (sector << 3) ^ static_cast<uint64_t>(op);
}

// Each pairing of a sampled request with a traced request of the same start
// sector and operation bounds the offset: the block layer issued the request
// after the replayer submitted it and before the replayer saw it complete, so
// offset in [issue - complete, issue - submit]. The true offset lies in the
// intervals of nearly all right pairings; wrong ones scatter.
class Voter {
 public:
  Voter(const std::vector<ReplayedRequest>& replayed, const std::vector<Request>& traced,
        const AlignOptions& o)
      : o_(o) {
    for (const auto& r : replayed)
      if (r.submitted() && r.op != Op::kFlush && r.sectors > 0) rs_.push_back(&r);
    std::sort(rs_.begin(), rs_.end(), [](const ReplayedRequest* x, const ReplayedRequest* y) {
      return x->submit_ns < y->submit_ns;
    });
    if (rs_.size() > o.sample) rs_.resize(o.sample);
    by_key_.reserve(traced.size());
    for (const auto& b : traced)
      if (b.op != Op::kFlush && b.bytes > 0) by_key_[key_of(b.sector, b.op)].push_back(b.issue_ns);
  }

  // Traced issue times of sampled request i's sector, or nullptr when none
  // or too many (hot sectors do not vote).
  const std::vector<uint64_t>* candidates(size_t i) const {
    auto it = by_key_.find(key_of(rs_[i]->sector, rs_[i]->op));
    if (it == by_key_.end() || it->second.size() > o_.max_candidates) return nullptr;
    return &it->second;
  }
  std::pair<int64_t, int64_t> interval(size_t i, uint64_t t) const {
    const ReplayedRequest& r = *rs_[i];
    int64_t width = r.complete_ns != kNoTime && r.complete_ns >= r.submit_ns
                        ? static_cast<int64_t>(r.complete_ns - r.submit_ns)
                        : static_cast<int64_t>(o_.tolerance_ns);
    int64_t err = static_cast<int64_t>(o_.clock_error_ns);
    int64_t hi = static_cast<int64_t>(t) - static_cast<int64_t>(r.submit_ns) + err;
    return {hi - width - err, hi};
  }
  size_t size() const { return rs_.size(); }

  // The offset range covered by most intervals: [lo, hi].
  std::pair<int64_t, int64_t> best() const {
    struct Ev {
      int64_t at;
      int delta;  // +1 opens, -1 closes
    };
    std::vector<Ev> ev;
    for (size_t i = 0; i < rs_.size(); i++) {
      const auto* c = candidates(i);
      if (!c) continue;
      for (uint64_t t : *c) {
        auto [lo, hi] = interval(i, t);
        ev.push_back({lo, +1});
        ev.push_back({hi, -1});
      }
    }
    std::sort(ev.begin(), ev.end(), [](const Ev& x, const Ev& y) {
      return x.at != y.at ? x.at < y.at : x.delta > y.delta;
    });
    int64_t count = 0, top = 0, lo = 0, hi = 0;
    for (size_t i = 0; i < ev.size(); i++) {
      count += ev[i].delta;
      if (count > top) {
        top = count;
        lo = ev[i].at;
        hi = i + 1 < ev.size() ? ev[i + 1].at : ev[i].at;
      }
    }
    return {lo, hi};
  }

  // Sampled requests with a candidate, and those agreeing with `offset`.
  std::pair<uint64_t, uint64_t> votes(int64_t offset) const {
    uint64_t sampled = 0, agree = 0;
    for (size_t i = 0; i < rs_.size(); i++) {
      const auto* c = candidates(i);
      if (!c) continue;
      sampled++;
      for (uint64_t t : *c) {
        auto [lo, hi] = interval(i, t);
        if (offset >= lo && offset <= hi) {
          agree++;
          break;
        }
      }
    }
    return {sampled, agree};
  }

 private:
  const AlignOptions& o_;
  std::vector<const ReplayedRequest*> rs_;
  std::unordered_map<uint64_t, std::vector<uint64_t>> by_key_;
};

}  // namespace

std::string Alignment::describe() const {
  char buf[320];
  switch (mode) {
    case Mode::kOffset:
      std::snprintf(buf, sizeof buf,
                    "replay times aligned to the trace by an offset of %.6f s "
                    "(%llu of %llu sampled requests agree within %.3f ms)",
                    static_cast<double>(offset_ns) / 1e9, static_cast<unsigned long long>(votes),
                    static_cast<unsigned long long>(sampled), static_cast<double>(spread_ns) / 1e6);
      return buf;
    case Mode::kOrder:
      std::snprintf(buf, sizeof buf,
                    "replay times could not be mapped onto the trace (no consistent time offset: "
                    "%llu of %llu sampled requests agree): requests paired by order and sector, "
                    "without time windows; a foreign request on a replayed sector may be taken "
                    "for a replayed one",
                    static_cast<unsigned long long>(votes),
                    static_cast<unsigned long long>(sampled));
      return buf;
    case Mode::kNone:
      return "no time alignment (nothing to compare)";
  }
  return "";
}

Alignment align_times(const std::vector<ReplayedRequest>& replayed,
                      const std::vector<Request>& traced, const AlignOptions& opts) {
  Alignment a;
  Voter v(replayed, traced, opts);
  if (v.size() == 0 || traced.empty()) return a;
  auto [lo, hi] = v.best();
  const int64_t offset = lo + (hi - lo) / 2;
  std::tie(a.sampled, a.votes) = v.votes(offset);
  if (a.votes >= 3 &&
      static_cast<double>(a.votes) >= opts.min_agreement * static_cast<double>(a.sampled)) {
    a.mode = Alignment::Mode::kOffset;
    a.offset_ns = offset;
    a.spread_ns = static_cast<uint64_t>(hi - lo);
    return a;
  }
  // Order: the first submission onto the first traced issue, for display
  // and the order of the replayed requests only.
  uint64_t r0 = ~0ull, b0 = ~0ull;
  for (const auto& r : replayed)
    if (r.submitted()) r0 = std::min(r0, r.submit_ns);
  for (const auto& b : traced) b0 = std::min(b0, b.issue_ns);
  a.mode = Alignment::Mode::kOrder;
  a.offset_ns = static_cast<int64_t>(b0) - static_cast<int64_t>(r0);
  return a;
}

Alignment votes_at(const std::vector<ReplayedRequest>& replayed, const std::vector<Request>& traced,
                   int64_t offset_ns, const AlignOptions& opts) {
  Alignment a;
  a.mode = Alignment::Mode::kOffset;
  a.offset_ns = offset_ns;
  Voter v(replayed, traced, opts);
  if (v.size() > 0) std::tie(a.sampled, a.votes) = v.votes(offset_ns);
  return a;
}

void apply_alignment(const Alignment& a, std::vector<ReplayedRequest>& replayed) {
  if (a.mode == Alignment::Mode::kNone) return;
  auto shift = [&](uint64_t t) {
    int64_t v = static_cast<int64_t>(t) + a.offset_ns;
    return v < 0 ? uint64_t{0} : static_cast<uint64_t>(v);
  };
  for (auto& r : replayed) {
    if (!r.submitted()) continue;
    r.submit_ns = shift(r.submit_ns);
    if (r.complete_ns != kNoTime) r.complete_ns = shift(r.complete_ns);
  }
}

}  // namespace blkrr::validate
