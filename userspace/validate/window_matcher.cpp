// Runs the three sweeps of the matcher on streams: pass 1 (same operation),
// pass 2 (another operation, on the requests and block records pass 1 left
// unserved; it lags pass 1 until those are known) and flushes; then reports
// each resolved record in arrival order. See window_matcher.h.
#include "validate/window_matcher.h"

#include <algorithm>

namespace blkrr::validate {

using detail::BDone;
using detail::Block;
using detail::BlockClass;
using detail::BState;
using detail::Mode;
using detail::RDone;
using detail::RItem;
using detail::RState;

namespace {

constexpr auto r_later = [](const RDone& x, const RDone& y) { return x.item.seq > y.item.seq; };
constexpr auto b_later = [](const BDone& x, const BDone& y) { return x.b.seq > y.b.seq; };

}  // namespace

WindowMatcher::WindowMatcher(const MatchOptions& o)
    : o_(o),
      data_(
          Mode::kSameOp, o,
          [this](const RItem& r, const RState& st) {
            if (st.covered == 0)
              other_.add(r);
            else
              request_done(r, st);
          },
          [this](const Block& b, const BState& st) {
            if (st.assigned == 0)
              other_.add(b);
            else
              block_done(b, st, false);
          }),
      other_(
          Mode::kOtherOp, o, [this](const RItem& r, const RState& st) { request_done(r, st); },
          [this](const Block& b, const BState& st) { block_done(b, st, false); }),
      flush_(
          Mode::kFlush, o, [this](const RItem& r, const RState& st) { request_done(r, st); },
          [this](const Block& b, const BState& st) { block_done(b, st, false); }),
      tally_(o),
      own_(o.own_pid != 0 || !o.own_comm.empty()) {}

void WindowMatcher::add_replayed(const ReplayedRequest& r) {
  add_replayed(r, added_r_++);
}

void WindowMatcher::add_block(const Request& b) {
  add_block(b, added_b_++);
}

uint64_t WindowMatcher::time_of(const Request& b) {
  Block k;
  k.issue_ns = b.issue_ns;
  k.complete_ns = b.complete_ns;
  k.rec_flags = b.rec_flags;
  return detail::b_time(k);
}

void WindowMatcher::add_replayed(const ReplayedRequest& r, uint64_t index) {
  const RItem item{r, index};
  if (!r.submitted()) return request_done(item, {});
  first_submit_ = std::min(first_submit_, r.submit_ns);
  detail::Sweep* s = r.op == Op::kFlush ? &flush_ : r.sectors > 0 ? &data_ : nullptr;
  if (s == nullptr) return request_done(item, {});
  if (s->wstart(r) < s->done()) {  // too late: the blocks of its window are resolved
    late_r_++;
    return request_done(item, {});
  }
  s->add(item);
  note_held(s->wstart(r));
}

void WindowMatcher::add_block(const Request& q, uint64_t index) {
  Block b;
  b.seq = index;
  b.issue_ns = q.issue_ns;
  b.complete_ns = q.complete_ns;
  b.sector = q.sector;
  b.bytes = q.bytes;
  b.pid = q.tgid ? q.tgid : q.pid;
  b.comm = names_.intern(q.comm);
  b.op = q.op;
  b.rec_flags = q.rec_flags;
  detail::Sweep& s = b.op == Op::kFlush ? flush_ : data_;
  if (detail::b_time(b) < s.done()) return block_done(b, {}, true);
  s.add(b);
  note_held(detail::b_time(b));
}

void WindowMatcher::advance(uint64_t w) {
  if (w <= data_.done()) return;
  data_.advance(w);
  flush_.advance(w);
  // Pass 2 needs to know which requests pass 1 left unserved: it goes up to
  // the first window pass 1 has not closed.
  other_.advance(std::min(w, data_.first_unclosed_start()));
  drain();
}

Report WindowMatcher::finish(const Losses& losses) {
  data_.finish();
  flush_.finish();
  other_.finish();
  drain();
  Report rep =
      tally_.finish(losses, data_.merged_block + other_.merged_block + flush_.merged_block,
                    data_.merged_requests + other_.merged_requests + flush_.merged_requests,
                    data_.partly_foreign + other_.partly_foreign + flush_.partly_foreign, late_r_);
  rep.window_shrinks = shrinks_;
  rep.min_window_ns = shrinks_ ? min_window_ : 0;
  return rep;
}

// Reported at once when every earlier arrival is; else kept until then.
void WindowMatcher::request_done(const RItem& r, const RState& st) {
  if (r.seq == next_r_) {
    tally_.request(r.r, st);
    next_r_++;
    return drain();
  }
  rdone_.push_back({r, st});
  std::push_heap(rdone_.begin(), rdone_.end(), r_later);
}

void WindowMatcher::block_done(const Block& b, const BState& st, bool late) {
  const bool served = st.assigned > 0 || st.served > 0;
  if (served) first_served_issue_ = std::min(first_served_issue_, b.issue_ns);
  bdone_.push_back({b, served, late});
  std::push_heap(bdone_.begin(), bdone_.end(), b_later);
  if (b.seq == next_b_) drain();
}

// The replayer's own probe: a block request serving no replayed request,
// issued by the replayer's process before its first submission (when times
// are mapped) and before the first block request that served one. Decided
// once everything issued up to it is resolved (both firsts are final then).
bool WindowMatcher::classify(const BDone& d, BlockClass& c) const {
  if (d.served) {
    c = BlockClass::kServed;
    return true;
  }
  if (d.late) {
    c = BlockClass::kLate;
    return true;
  }
  c = BlockClass::kForeign;
  if (!own_) return true;
  const bool own_process =
      o_.own_pid != 0 ? d.b.pid == o_.own_pid : names_.name(d.b.comm) == o_.own_comm;
  if (!own_process) return true;
  const uint64_t end = std::min(o_.by_order ? UINT64_MAX : first_submit_, first_served_issue_);
  if (d.b.issue_ns >= end) return true;
  const uint64_t resolved = std::min({data_.done(), other_.done(), flush_.done()});
  if (d.b.issue_ns >= resolved) return false;
  c = BlockClass::kOwnProbe;
  return true;
}

void WindowMatcher::drain() {
  while (!rdone_.empty() && rdone_.front().item.seq == next_r_) {
    std::pop_heap(rdone_.begin(), rdone_.end(), r_later);
    tally_.request(rdone_.back().item.r, rdone_.back().st);
    rdone_.pop_back();
    next_r_++;
  }
  BlockClass c;
  while (!bdone_.empty() && bdone_.front().b.seq == next_b_ && classify(bdone_.front(), c)) {
    std::pop_heap(bdone_.begin(), bdone_.end(), b_later);
    tally_.block(bdone_.back().b, c, names_.name(bdone_.back().b.comm));
    bdone_.pop_back();
    next_b_++;
  }
}

uint64_t WindowMatcher::held_requests() const {
  return data_.held_requests() + other_.held_requests() + flush_.held_requests() + rdone_.size();
}

uint64_t WindowMatcher::held_blocks() const {
  return data_.held_blocks() + other_.held_blocks() + flush_.held_blocks() + bdone_.size();
}

uint64_t WindowMatcher::held_bytes() const {
  return open_bytes() + (rdone_.size() + bdone_.size()) * kResolvedBytes +
         (held_requests() + held_blocks() - rdone_.size() - bdone_.size() - open_requests()) *
             kWaitingBytes;
}

uint64_t WindowMatcher::open_requests() const {
  return data_.open_requests() + other_.open_requests() + flush_.open_requests();
}

void WindowMatcher::note_held(uint64_t t) {
  latest_ = std::max(latest_, t);
  enforce_cap();
  max_held_r_ = std::max(max_held_r_, held_requests());
  max_held_b_ = std::max(max_held_b_, held_blocks());
  if (o_.max_held_bytes) max_held_bytes_ = std::max(max_held_bytes_, held_bytes());
}

// Resolves up to ever later instants until a quarter of the cap is free (but
// for the requests whose windows are open: advancing opens more of them, and
// they are only those in flight and of the last slack, rate x (latency +
// slack), whatever the window): the
// window is shortened to latest_ - done() for the records held now, and
// whatever comes later for the instants passed is late. The first step is an
// eighth of the time the held records span (from the earliest held, not from
// done(), which may lie far before it), doubled until enough is free. It goes
// no further than the latest record added: requests whose windows reach past
// it (their completion plus the slack) stay held, so the cap can be passed by
// the requests of that last stretch (rate x (latency + slack)), never by a
// window.
void WindowMatcher::enforce_cap() {
  const uint64_t cap = o_.max_held_bytes;
  if (cap == 0 || held_bytes() <= cap) return;
  ++shrinks_;
  const uint64_t target = cap - cap / 4;
  const uint64_t first = std::min(
      latest_, std::max(data_.done(),
                        std::min({data_.first_held(), other_.first_held(), flush_.first_held()})));
  uint64_t step = std::max<uint64_t>((latest_ - std::min(latest_, first)) / 8, 1000);
  for (;;) {
    const uint64_t w = std::min(latest_ + 1, first + step);
    advance(w);
    if (held_bytes() - open_bytes() <= target || w > latest_) break;
    step *= 2;
  }
  min_window_ = std::min(min_window_, latest_ - std::min(latest_, data_.done()));
}

}  // namespace blkrr::validate
