// Sweep over time with a sector-indexed set of the replayed requests whose
// windows are open; each block-layer request assigns its sectors to the
// candidates it overlaps, preferring requests whose window strictly contains
// it, then the closest replayer completion after its completion, then the
// earliest submitted. See docs/validate.md for the rules.
#include "validate/matcher.h"

#include <algorithm>
#include <limits>
#include <map>
#include <queue>
#include <tuple>

namespace blkrr::validate {
namespace {

struct Range {
  uint64_t s, e;
};

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

uint32_t sectors_of(const Request& b) {
  return (b.bytes + 511) / 512;
}

uint64_t b_time(const Request& b) {
  return (b.rec_flags & kRecIssueNotSeen) && b.completed() ? b.complete_ns : b.issue_ns;
}

enum class Mode { kSameOp, kOtherOp, kFlush };

struct RState {
  uint32_t covered = 0;      // sectors served with the right operation
  uint32_t alt_covered = 0;  // sectors served with another operation
  uint32_t pieces = 0;
  uint64_t first_issue = std::numeric_limits<uint64_t>::max();
  uint64_t last_complete = 0;
  uint64_t seen_lo = std::numeric_limits<uint64_t>::max(), seen_hi = 0;
  bool completion_missing = false;
  bool larger = false;
  bool alt_op = false;
  Op seen_op = Op::kRead;
};

struct BState {
  uint32_t assigned = 0;
  uint32_t served = 0;
};

class Matcher {
 public:
  Matcher(const std::vector<ReplayedRequest>& r, const std::vector<Request>& b,
          const MatchOptions& o)
      : R_(r), B_(b), o_(o), rs_(r.size()), bs_(b.size()) {}

  void pass(std::vector<uint32_t> rs, std::vector<uint32_t> bs, Mode mode);
  const std::vector<RState>& rstates() const { return rs_; }
  const std::vector<BState>& bstates() const { return bs_; }
  uint64_t merged_block = 0, merged_requests = 0, partly_foreign = 0;

 private:
  struct Active {
    uint32_t r = 0;
    std::vector<Range> cov;
    std::multimap<uint64_t, uint32_t>::iterator it;
  };
  uint64_t wstart(const ReplayedRequest& r) const {
    return r.submit_ns > o_.pre_slack_ns ? r.submit_ns - o_.pre_slack_ns : 0;
  }
  uint64_t wend(const ReplayedRequest& r) const {
    uint64_t end = r.complete_ns != kNoTime ? r.complete_ns : r.submit_ns + o_.open_window_ns;
    return end + o_.post_slack_ns;
  }
  // Issued after the submission and completed before the replayer saw the
  // completion, within the clock tolerance.
  bool strictly_inside(const ReplayedRequest& r, const Request& b) const {
    const uint64_t tol = o_.clock_tolerance_ns;
    if (b_time(b) + tol < r.submit_ns) return false;
    if (r.complete_ns == kNoTime) return true;
    return (b.completed() ? b.complete_ns : b_time(b)) <= r.complete_ns + tol;
  }
  void assign(uint32_t bi, Mode mode);

  const std::vector<ReplayedRequest>& R_;
  const std::vector<Request>& B_;
  const MatchOptions& o_;
  std::vector<RState> rs_;
  std::vector<BState> bs_;
  // Open windows: pool slots indexed by start sector.
  std::vector<Active> pool_;
  std::vector<uint32_t> free_;
  std::multimap<uint64_t, uint32_t> open_;
  uint64_t max_len_ = 0;
  // Scratch.
  std::vector<uint32_t> cands_, served_;
  std::vector<Range> bcov_, tmp_, tmp2_;
};

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
    open_.erase(a.it);
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
    return !b.completed() || r.complete_ns == kNoTime ||
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
    } else {
      st.alt_covered += static_cast<uint32_t>(got);
      st.alt_op = true;
      st.seen_op = b.op;
    }
    st.pieces++;
    st.first_issue = std::min(st.first_issue, b.issue_ns);
    if (b.completed())
      st.last_complete = std::max(st.last_complete, b.complete_ns);
    else
      st.completion_missing = true;
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

RequestRef ref_of(const ReplayedRequest& r) {
  return {r.id, r.sector, r.sectors, r.op, r.status};
}

void add_foreign(Report& rep, const Request& b,
                 std::map<std::pair<uint32_t, std::string>, ForeignProcess>& by_proc) {
  rep.foreign_count++;
  rep.foreign_bytes += b.bytes;
  std::string comm(b.comm_view());
  uint32_t pid = b.tgid ? b.tgid : b.pid;
  if (rep.foreign.size() < rep.options.max_listed)
    rep.foreign.push_back({b.sector, sectors_of(b), b.op, pid, comm, b.issue_ns});
  auto& p = by_proc[{pid, comm}];
  p.pid = pid;
  p.comm = comm;
  p.requests++;
  p.bytes += b.bytes;
}

}  // namespace

Report match_requests(const std::vector<ReplayedRequest>& replayed,
                      const std::vector<Request>& observed, const Losses& losses,
                      const MatchOptions& opts) {
  Report rep;
  rep.options = opts;
  rep.losses = losses;
  rep.losses.strict_completions = opts.strict_completions;
  rep.replayed = replayed.size();
  rep.observed = observed.size();

  // Pass 1: same operation (data), and flushes; pass 2: other operations on
  // what is left.
  std::vector<uint32_t> r_data, r_flush, b_data, b_flush;
  for (uint32_t i = 0; i < replayed.size(); i++) {
    const auto& r = replayed[i];
    if (!r.submitted()) continue;
    if (r.op == Op::kFlush)
      r_flush.push_back(i);
    else if (r.sectors > 0)
      r_data.push_back(i);
  }
  for (uint32_t i = 0; i < observed.size(); i++)
    (observed[i].op == Op::kFlush ? b_flush : b_data).push_back(i);
  Matcher m(replayed, observed, opts);
  m.pass(r_data, b_data, Mode::kSameOp);
  m.pass(r_flush, b_flush, Mode::kFlush);
  {
    std::vector<uint32_t> r_left, b_left;
    for (uint32_t i : r_data)
      if (m.rstates()[i].covered == 0) r_left.push_back(i);
    for (uint32_t i : b_data)
      if (m.bstates()[i].assigned == 0) b_left.push_back(i);
    if (!r_left.empty() && !b_left.empty()) m.pass(r_left, b_left, Mode::kOtherOp);
  }
  rep.merged_block = m.merged_block;
  rep.merged_requests = m.merged_requests;
  rep.partly_foreign = m.partly_foreign;

  std::vector<double> replay_lat, block_lat, overhead;
  for (uint32_t i = 0; i < replayed.size(); i++) {
    const ReplayedRequest& r = replayed[i];
    const RState& st = m.rstates()[i];
    switch (r.status) {
      case ReplayStatus::kDone:
        rep.done++;
        break;
      case ReplayStatus::kFailed:
        rep.failed++;
        break;
      case ReplayStatus::kDropped:
        rep.dropped++;
        rep.expected_missing_count++;
        if (rep.expected_missing.size() < opts.max_listed)
          rep.expected_missing.push_back(ref_of(r));
        continue;
      case ReplayStatus::kNotStarted:
        rep.not_started++;
        continue;
    }
    rep.submitted++;
    bool is_flush = r.op == Op::kFlush;
    bool full = is_flush ? st.pieces > 0 : st.covered >= r.sectors;
    if (is_flush && !full && !opts.flush_reaches_device) {
      rep.flushes_absorbed++;
      rep.covered++;
      continue;
    }
    if (full) {
      rep.covered++;
      if (st.pieces >= 2 && !is_flush) {
        rep.split_requests++;
        rep.split_pieces += st.pieces;
      }
      if (st.larger) {
        rep.altered_count++;
        if (rep.altered.size() < opts.max_listed)
          rep.altered.push_back({ref_of(r), AlterKind::kLarger, r.op, st.seen_lo,
                                 static_cast<uint32_t>(st.seen_hi - st.seen_lo), st.covered});
      }
      if (r.complete_ns == kNoTime || r.status != ReplayStatus::kDone) continue;
      if (st.completion_missing) {
        rep.latency_unknown++;
        continue;
      }
      uint64_t rl = r.complete_ns > r.submit_ns ? r.complete_ns - r.submit_ns : 0;
      uint64_t bl = st.last_complete > st.first_issue ? st.last_complete - st.first_issue : 0;
      replay_lat.push_back(static_cast<double>(rl) / 1e3);
      block_lat.push_back(static_cast<double>(bl) / 1e3);
      overhead.push_back((static_cast<double>(rl) - static_cast<double>(bl)) / 1e3);
      if (opts.per_request) rep.per_request.push_back({r.id, rl, bl});
      continue;
    }
    if (st.covered > 0 || st.alt_op) {
      rep.altered_count++;
      if (rep.altered.size() < opts.max_listed) {
        AlterKind k = st.covered > 0 ? AlterKind::kShort : AlterKind::kOp;
        rep.altered.push_back({ref_of(r), k, k == AlterKind::kOp ? st.seen_op : r.op, st.seen_lo,
                               static_cast<uint32_t>(st.seen_hi - st.seen_lo),
                               k == AlterKind::kOp ? st.alt_covered : st.covered});
      }
      continue;
    }
    rep.missing_count++;
    if (rep.missing.size() < opts.max_listed) rep.missing.push_back(ref_of(r));
  }
  rep.replay_latency_us = summarize(replay_lat);
  rep.block_latency_us = summarize(block_lat);
  rep.overhead_us = summarize(overhead);

  std::map<std::pair<uint32_t, std::string>, ForeignProcess> by_proc;
  for (uint32_t i = 0; i < observed.size(); i++) {
    const Request& b = observed[i];
    const BState& st = m.bstates()[i];
    bool served = st.assigned > 0 || st.served > 0;
    if (b.rec_flags & kRecCompletionNotSeen) {
      rep.losses.completion_not_seen++;
      if (served) rep.losses.completion_not_seen_served++;
    }
    if (b.rec_flags & kRecIssueNotSeen) rep.losses.issue_not_seen_records++;
    if (served) {
      rep.matched_block++;
      continue;
    }
    add_foreign(rep, b, by_proc);
  }
  for (auto& [k, p] : by_proc) rep.foreign_by_process.push_back(std::move(p));
  std::stable_sort(
      rep.foreign_by_process.begin(), rep.foreign_by_process.end(),
      [](const ForeignProcess& a, const ForeignProcess& b) { return a.requests > b.requests; });

  if (rep.losses.hides_requests()) {
    rep.verdict = Verdict::kUnknown;
    rep.verdict_reason = "the capture lost events, so requests may be missing from it";
  } else if (rep.covered == rep.submitted) {
    rep.verdict = Verdict::kComplete;
    rep.verdict_reason = "every submitted request was served by the block layer";
  } else {
    rep.verdict = Verdict::kIncomplete;
    rep.verdict_reason = std::to_string(rep.submitted - rep.covered) +
                         " submitted requests were not fully served as asked";
  }
  return rep;
}

}  // namespace blkrr::validate
