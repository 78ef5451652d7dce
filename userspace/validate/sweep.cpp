// Sweep over time with a sector-indexed set of the replayed requests whose
// windows are open; each block-layer request assigns its sectors to the
// candidates it overlaps, preferring requests whose window strictly contains
// it, then the closest replayer completion after its completion, then the
// earliest submitted (or, pairing by order, the earliest submitted alone).
// See docs/validate.md for the rules.
#include "validate/sweep.h"

#include <algorithm>
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

// Heap order of blocks: the earliest time (then arrival) on top.
constexpr auto b_after = [](const Block& x, const Block& y) {
  return std::make_pair(b_time(x), x.seq) > std::make_pair(b_time(y), y.seq);
};

}  // namespace

bool Sweep::r_before(const RItem& x, const RItem& y) const {
  return std::make_pair(wstart(x.r), uint64_t{x.seq}) >
         std::make_pair(wstart(y.r), uint64_t{y.seq});
}

namespace {

// `r` arrived right after the run `run` and equals its records but for the
// id, which follows theirs.
bool extends(const RItem& run, const RItem& r) {
  const ReplayedRequest &a = run.r, &b = r.r;
  return r.seq == run.seq + run.count && b.id == a.id + run.count &&
         run.count + r.count <= kMaxRun && a.sector == b.sector && a.sectors == b.sectors &&
         a.op == b.op && a.status == b.status && a.submit_ns == b.submit_ns &&
         a.complete_ns == b.complete_ns;
}

bool extends(const Block& run, const Block& b) {
  return b.seq == run.seq + run.count && run.count <= UINT32_MAX - b.count &&
         b.issue_ns == run.issue_ns && b.complete_ns == run.complete_ns && b.sector == run.sector &&
         b.bytes == run.bytes && b.pid == run.pid && b.comm == run.comm && b.op == run.op &&
         b.rec_flags == run.rec_flags;
}

}  // namespace

// `x` joins the run being gathered, or ends it and starts the next.
template <class T>
void Sweep::gather(std::optional<T>& run, const T& x, uint64_t& identical) {
  if (run && extends(*run, x)) {
    run->count += x.count;
    identical += x.count;
    return;
  }
  if (run) push(*run);
  run = x;
}

void Sweep::add(const RItem& r) {
  gather(run_r_, r, identical_requests);
}

void Sweep::add(const Block& b) {
  gather(run_b_, b, identical_blocks);
}

void Sweep::end_runs() {
  if (run_r_) push(*run_r_);
  if (run_b_) push(*run_b_);
  run_r_.reset();
  run_b_.reset();
}

void Sweep::push(const RItem& r) {
  max_len_ = std::max<uint64_t>(max_len_, r.r.sectors);
  pending_r_.push_back(r);
  std::push_heap(pending_r_.begin(), pending_r_.end(),
                 [this](const RItem& x, const RItem& y) { return r_before(x, y); });
}

void Sweep::push(const Block& b) {
  pending_b_.push_back(b);
  std::push_heap(pending_b_.begin(), pending_b_.end(), b_after);
}

// A run of equal requests opens as its requests one by one, in arrival
// order: as they would have been had they been held one by one.
void Sweep::open_through(uint64_t t) {
  auto later = [this](const RItem& x, const RItem& y) { return r_before(x, y); };
  while (!pending_r_.empty() && wstart(pending_r_.front().r) <= t) {
    std::pop_heap(pending_r_.begin(), pending_r_.end(), later);
    const RItem run = pending_r_.back();
    pending_r_.pop_back();
    for (uint64_t i = 0; i < run.count; ++i) {
      RItem one = run;
      one.r.id += i;
      one.seq = run.seq + i;
      one.count = 1;
      open_one(one);
    }
  }
}

void Sweep::open_one(const RItem& item) {
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<uint32_t>(pool_.size());
    pool_.emplace_back();
  }
  Active& a = pool_[slot];
  a.item = item;
  a.st = RState{};
  a.it = open_.emplace(mode_ == Mode::kFlush ? 0 : a.item.r.sector, slot);
  a.start_it = starts_.insert(wstart(a.item.r));
  closing_.emplace_back(wend(a.item.r), slot);
  std::push_heap(closing_.begin(), closing_.end(), std::greater<>());
}

void Sweep::close(uint32_t slot) {
  Active& a = pool_[slot];
  if (a.it != open_.end()) open_.erase(a.it);
  a.it = open_.end();
  starts_.erase(a.start_it);
  closed_(a.item, a.st);
  a.cov.clear();
  free_.push_back(slot);
}

void Sweep::close_before(uint64_t t) {
  while (!closing_.empty() && closing_.front().first < t) {
    std::pop_heap(closing_.begin(), closing_.end(), std::greater<>());
    uint32_t slot = closing_.back().second;
    closing_.pop_back();
    close(slot);
  }
}

// The next block of the heap (the earliest), a run as its records one by one.
Block Sweep::pop_block() {
  Block& top = pending_b_.front();
  if (top.count > 1) {  // the run's first record; the rest stay on top
    Block one = top;
    one.count = 1;
    top.seq++;
    top.count--;
    return one;
  }
  std::pop_heap(pending_b_.begin(), pending_b_.end(), b_after);
  const Block b = pending_b_.back();
  pending_b_.pop_back();
  return b;
}

void Sweep::advance(uint64_t w) {
  end_runs();
  while (!pending_b_.empty() && b_time(pending_b_.front()) < w) {
    const Block b = pop_block();
    const uint64_t t = b_time(b);
    open_through(t);
    close_before(t);
    assign(b);
  }
  // No block before w is left: the windows that start before it open (and
  // those that end before it close) as they would at the next block.
  if (w > 0) open_through(w - 1);
  close_before(w);
  done_ = std::max(done_, w);
}

void Sweep::finish() {
  advance(std::numeric_limits<uint64_t>::max());
  while (!pending_b_.empty()) {  // blocks at the largest time (none in practice)
    const Block b = pop_block();
    open_through(b_time(b));
    assign(b);
  }
  open_through(std::numeric_limits<uint64_t>::max());
  while (!closing_.empty()) {
    std::pop_heap(closing_.begin(), closing_.end(), std::greater<>());
    uint32_t slot = closing_.back().second;
    closing_.pop_back();
    close(slot);
  }
}

uint64_t Sweep::first_unclosed_start() const {
  uint64_t first =
      pending_r_.empty() ? std::numeric_limits<uint64_t>::max() : wstart(pending_r_.front().r);
  if (run_r_) first = std::min(first, wstart(run_r_->r));
  return starts_.empty() ? first : std::min(first, *starts_.begin());
}

uint64_t Sweep::first_held() const {
  uint64_t first = first_unclosed_start();
  if (!pending_b_.empty()) first = std::min(first, b_time(pending_b_.front()));
  if (run_b_) first = std::min(first, b_time(*run_b_));
  return first;
}

void Sweep::assign_flush(const Block& b, BState& bs) {
  for (uint32_t slot : cands_) {
    RState& st = pool_[slot].st;
    if (st.pieces == 0) {
      st.first_issue = b.issue_ns;
      st.last_complete = b.completed() ? b.complete_ns : 0;
      st.completion_missing = !b.completed();
    }
    st.pieces++;
  }
  if (!cands_.empty()) bs.served = static_cast<uint32_t>(cands_.size());
}

void Sweep::collect_candidates(const Block& b) {
  cands_.clear();
  auto ok_completion = [&](const ReplayedRequest& r) {
    return o_.by_order || !b.completed() || r.complete_ns == kNoTime ||
           b.complete_ns <= r.complete_ns + o_.post_slack_ns;
  };
  if (mode_ == Mode::kFlush) {
    for (const auto& [key, slot] : open_)
      if (ok_completion(pool_[slot].item.r)) cands_.push_back(slot);
    return;
  }
  const uint64_t bs = b.sector, be = b.sector + sectors_of(b);
  const uint64_t lo = bs > max_len_ ? bs - max_len_ : 0;
  for (auto it = open_.lower_bound(lo); it != open_.end() && it->first < be; ++it) {
    const ReplayedRequest& r = pool_[it->second].item.r;
    if (r.sector + r.sectors <= bs) continue;
    if ((mode_ == Mode::kSameOp) != (r.op == b.op)) continue;
    if (!ok_completion(r)) continue;
    cands_.push_back(it->second);
  }
  // Among the requests whose window strictly contains b, the one whose
  // completion the replayer saw first after b completed: a request completes
  // on the device just before the replayer sees it, so this pairs repeated
  // I/O to one sector correctly even when the block layer issued it in
  // another order than it was submitted. Then the earliest submitted.
  auto key = [&](uint32_t slot) {
    const ReplayedRequest& r = pool_[slot].item.r;
    const uint64_t seq = pool_[slot].item.seq;
    if (o_.by_order) return std::make_tuple(false, uint64_t{0}, r.submit_ns, seq);
    bool inside = strictly_inside(r, b);
    uint64_t gap = 0;
    if (inside && b.completed())
      gap = r.complete_ns == kNoTime ? std::numeric_limits<uint64_t>::max()
                                     : r.complete_ns + o_.clock_tolerance_ns - b.complete_ns;
    return std::make_tuple(!inside, gap, r.submit_ns, seq);
  };
  std::sort(cands_.begin(), cands_.end(), [&](uint32_t x, uint32_t y) { return key(x) < key(y); });
}

void Sweep::assign(const Block& b) {
  BState bstate;
  collect_candidates(b);
  if (mode_ == Mode::kFlush) assign_flush(b, bstate);
  if (mode_ == Mode::kFlush || cands_.empty()) return assigned_(b, bstate);
  const uint64_t bs = b.sector, be = b.sector + sectors_of(b);
  bcov_.clear();
  served_.clear();
  for (uint32_t slot : cands_) {
    Active& a = pool_[slot];
    const ReplayedRequest& r = a.item.r;
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
    RState& st = a.st;
    if (mode_ == Mode::kSameOp) {
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
    served_.push_back(slot);
  }
  uint64_t assigned = 0;
  for (const Range& p : bcov_) assigned += p.e - p.s;
  bstate.assigned = static_cast<uint32_t>(assigned);
  bstate.served = static_cast<uint32_t>(served_.size());
  if (served_.size() >= 2) {
    merged_block++;
    merged_requests += served_.size();
  }
  if (mode_ == Mode::kSameOp && assigned > 0 && assigned < be - bs) {
    partly_foreign++;
    for (uint32_t slot : served_) pool_[slot].st.larger = true;
  }
  assigned_(b, bstate);
}

}  // namespace blkrr::validate::detail
