// Sweep over time with a sector-indexed set of the replayed requests whose
// windows are open; each block-layer request assigns its sectors to the
// candidates it overlaps, preferring requests whose window strictly contains
// it, then the closest replayer completion after its completion, then the
// earliest submitted (or, pairing by order, the earliest submitted alone).
// See docs/validate.md for the rules.
#include "validate/sweep.h"

#include <algorithm>
#include <queue>
#include <tuple>

namespace blkrr::validate::detail {
namespace {

// Appends the parts of [s, e) not covered by the sorted disjoint `used`.
void subtract(uint64_t s, uint64_t e, const std::vector<Range>& used, std::vector<Range>& out) {
  for (const Range& u : used) {
    if (u.e <= s) continue;
    if (u.s >= e) break;
    if (u.s > s) out.push_back({s, u.s});
    s = std::max(s, u.e);
    if (s >= e) return;
  }
  if (s < e) out.push_back({s, e});
}

// Inserts `r` (disjoint from v) keeping v sorted; adjacent ranges are joined.
void insert_range(std::vector<Range>& v, Range r) {
  const auto i =
      static_cast<size_t>(std::lower_bound(v.begin(), v.end(), r.s,
                                           [](const Range& a, uint64_t s) { return a.s < s; }) -
                          v.begin());
  v.insert(v.begin() + static_cast<std::ptrdiff_t>(i), r);
  if (i + 1 < v.size() && v[i].e == v[i + 1].s) {
    v[i].e = v[i + 1].e;
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i + 1));
  }
  if (i > 0 && v[i - 1].e == v[i].s) {
    v[i - 1].e = v[i].e;
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

}  // namespace

void Matcher::pass(std::vector<uint32_t> rs, std::vector<uint32_t> bs, Mode mode) {
  std::sort(rs.begin(), rs.end(), [&](uint32_t a, uint32_t b) {
    return std::make_pair(wstart(R_[a]), a) < std::make_pair(wstart(R_[b]), b);
  });
  std::sort(bs.begin(), bs.end(), [&](uint32_t a, uint32_t b) {
    return std::make_pair(b_time(B_[a]), a) < std::make_pair(b_time(B_[b]), b);
  });
  max_len_ = 0;
  for (uint32_t i : rs) max_len_ = std::max<uint64_t>(max_len_, R_[i].sectors);
  using Close = std::pair<uint64_t, uint32_t>;  // window end, pool slot
  std::priority_queue<Close, std::vector<Close>, std::greater<>> closing;
  size_t next = 0;
  auto close_slot = [&](uint32_t slot) {
    Active& a = pool_[slot];
    if (a.it != open_.end()) open_.erase(a.it);
    a.cov.clear();
    free_.push_back(slot);
  };
  for (uint32_t bi : bs) {
    uint64_t t = b_time(B_[bi]);
    while (next < rs.size() && wstart(R_[rs[next]]) <= t) {
      uint32_t ri = rs[next++];
      uint32_t slot;
      if (!free_.empty()) {
        slot = free_.back();
        free_.pop_back();
      } else {
        slot = static_cast<uint32_t>(pool_.size());
        pool_.emplace_back();
      }
      Active& a = pool_[slot];
      a.r = ri;
      a.it = open_.emplace(mode == Mode::kFlush ? 0 : R_[ri].sector, slot);
      closing.push({wend(R_[ri]), slot});
    }
    while (!closing.empty() && closing.top().first < t) {
      close_slot(closing.top().second);
      closing.pop();
    }
    assign(bi, mode);
  }
  while (!closing.empty()) {
    close_slot(closing.top().second);
    closing.pop();
  }
}

void Matcher::assign(uint32_t bi, Mode mode) {
  const Request& b = B_[bi];
  cands_.clear();
  uint64_t bs = b.sector, be = b.sector + sectors_of(b);
  auto ok_completion = [&](const ReplayedRequest& r) {
    return o_.by_order || !b.completed() || r.complete_ns == kNoTime ||
           b.complete_ns <= r.complete_ns + o_.post_slack_ns;
  };
  if (mode == Mode::kFlush) {
    for (const auto& [key, slot] : open_)
      if (ok_completion(R_[pool_[slot].r])) cands_.push_back(slot);
    bool any = false;
    for (uint32_t slot : cands_) {
      uint32_t ri = pool_[slot].r;
      RState& st = rs_[ri];
      if (st.pieces == 0) {
        st.first_issue = b.issue_ns;
        st.last_complete = b.completed() ? b.complete_ns : 0;
        st.completion_missing = !b.completed();
      }
      st.pieces++;
      any = true;
    }
    if (any) bs_[bi].served = static_cast<uint32_t>(cands_.size());
    return;
  }
  uint64_t lo = bs > max_len_ ? bs - max_len_ : 0;
  for (auto it = open_.lower_bound(lo); it != open_.end() && it->first < be; ++it) {
    const ReplayedRequest& r = R_[pool_[it->second].r];
    if (r.sector + r.sectors <= bs) continue;
    if ((mode == Mode::kSameOp) != (r.op == b.op)) continue;
    if (!ok_completion(r)) continue;
    cands_.push_back(it->second);
  }
  if (cands_.empty()) return;
  // Among the requests whose window strictly contains b, the one whose
  // completion the replayer saw first after b completed: a request completes
  // on the device just before the replayer sees it, so this pairs repeated
  // I/O to one sector correctly even when the block layer issued it in
  // another order than it was submitted. Then the earliest submitted.
  auto key = [&](uint32_t slot) {
    const ReplayedRequest& r = R_[pool_[slot].r];
    if (o_.by_order) return std::make_tuple(false, uint64_t{0}, r.submit_ns, pool_[slot].r);
    bool inside = strictly_inside(r, b);
    uint64_t gap = 0;
    if (inside && b.completed())
      gap = r.complete_ns == kNoTime ? std::numeric_limits<uint64_t>::max()
                                     : r.complete_ns + o_.clock_tolerance_ns - b.complete_ns;
    return std::make_tuple(!inside, gap, r.submit_ns, pool_[slot].r);
  };
  std::sort(cands_.begin(), cands_.end(), [&](uint32_t x, uint32_t y) { return key(x) < key(y); });
  bcov_.clear();
  served_.clear();
  for (uint32_t slot : cands_) {
    Active& a = pool_[slot];
    const ReplayedRequest& r = R_[a.r];
    uint64_t s = std::max(bs, r.sector), e = std::min(be, r.sector + r.sectors);
    tmp_.clear();
    subtract(s, e, a.cov, tmp_);
    tmp2_.clear();
    for (const Range& p : tmp_) subtract(p.s, p.e, bcov_, tmp2_);
    if (tmp2_.empty()) continue;
    uint64_t got = 0;
    for (const Range& p : tmp2_) {
      insert_range(a.cov, p);
      insert_range(bcov_, p);
      got += p.e - p.s;
    }
    RState& st = rs_[a.r];
    if (mode == Mode::kSameOp) {
      st.covered += static_cast<uint32_t>(got);
      // Unbounded windows never close: a served request leaves the set so
      // that lookups on hot sectors stay short.
      if (o_.by_order && st.covered >= r.sectors) {
        open_.erase(a.it);
        a.it = open_.end();
      }
    } else {
      st.alt_covered += static_cast<uint32_t>(got);
      st.alt_op = true;
      st.seen_op = b.op;
    }
    st.pieces++;
    st.first_issue = std::min(st.first_issue, b.issue_ns);
    if (b.completed()) st.last_complete = std::max(st.last_complete, b.complete_ns);
    // Block-layer latency unknown: no completion, or no issue time.
    if (!b.completed() || (b.rec_flags & kRecIssueNotSeen)) st.completion_missing = true;
    st.seen_lo = std::min(st.seen_lo, bs);
    st.seen_hi = std::max(st.seen_hi, be);
    served_.push_back(a.r);
  }
  uint64_t assigned = 0;
  for (const Range& p : bcov_) assigned += p.e - p.s;
  bs_[bi].assigned = static_cast<uint32_t>(assigned);
  bs_[bi].served = static_cast<uint32_t>(served_.size());
  if (served_.size() >= 2) {
    merged_block++;
    merged_requests += served_.size();
  }
  if (mode == Mode::kSameOp && assigned > 0 && assigned < be - bs) {
    partly_foreign++;
    for (uint32_t ri : served_) rs_[ri].larger = true;
  }
}
}  // namespace blkrr::validate::detail
