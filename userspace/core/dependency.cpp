#include "core/dependency.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

namespace blkrr {

namespace {

// The k-th smallest of the first n samples of a thread's ring (selected in
// place in its copy g).
template <typename T, size_t N>
T kth(std::array<T, N>& g, uint32_t n, uint32_t k) {
  std::nth_element(g.begin(), g.begin() + k, g.begin() + n);
  return g[k];
}

// Where the quantile (percent) of n samples lies among them, sorted.
uint32_t quantile_index(uint32_t n, uint32_t quantile) {
  return (n - 1) * std::min<uint32_t>(quantile, 100) / 100;
}

}  // namespace

std::string_view dep_kind_name(DepKind k) {
  switch (k) {
    case DepKind::kIndependent:
      return "independent";
    case DepKind::kThread:
      return "thread";
    case DepKind::kCross:
      return "cross";
    case DepKind::kSibling:
      return "sibling";
    case DepKind::kSlot:
      return "slot";
  }
  return "?";
}

std::string_view think_rule_name(DependencyOptions::Think t) {
  return t == DependencyOptions::Think::kWork ? "work" : "recorded";
}

std::string_view async_rule_name(DependencyOptions::Async a) {
  return a == DependencyOptions::Async::kSlots ? "slots" : "completion";
}

uint32_t DependencyInferrer::ThreadState::settle(uint64_t issue_ns) {
  while (!inflight.empty() && inflight.front().first <= issue_ns) {
    if (inflight.front().first >= last_done_ns) {
      last_done_ns = inflight.front().first;
      last_done_seq = inflight.front().second;
    }
    std::pop_heap(inflight.begin(), inflight.end(), std::greater<>());
    inflight.pop_back();
  }
  return static_cast<uint32_t>(inflight.size()) + 1;
}

uint32_t DependencyInferrer::ThreadState::depth(uint32_t count) {
  depths[ndepth++ % kDepthSamples] = count;
  const uint32_t n = std::min(ndepth, kDepthSamples);
  return *std::max_element(depths.begin(), depths.begin() + n);
}

// A thread is tight when, over its long history, its quantile gap is at
// least tight_pct % of its median gap. Judged over many gaps, not the 32 of
// the cut: a thread whose gaps are all wake-ups has runs of alike gaps.
void DependencyInferrer::ThreadState::judge(uint32_t quantile, uint32_t tight_pct) {
  const uint32_t n = std::min(nlong, kTightSamples);
  std::array<uint32_t, kTightSamples> g = long_gaps;
  const uint64_t low = kth(g, n, quantile_index(n, quantile));
  const uint64_t median = kth(g, n, (n - 1) / 2);
  tight = median > 0 && low * 100 >= median * tight_pct;
}

// The gap's part that is the thread's own work: at most the quantile of its
// recent gaps (this one included), or their median when the thread is tight.
uint64_t DependencyInferrer::ThreadState::work(uint64_t gap, uint32_t quantile,
                                               uint32_t tight_pct) {
  gaps[ngaps++ % kThinkSamples] = gap;
  const uint32_t n = std::min(ngaps, kThinkSamples);
  long_gaps[nlong++ % kTightSamples] =
      static_cast<uint32_t>(std::min<uint64_t>(gap / 1000, std::numeric_limits<uint32_t>::max()));
  if (tight_pct == 0) {
    tight = false;
  } else if (nlong >= kTightMin && nlong % kTightEvery == 0) {
    judge(quantile, tight_pct);
  }
  std::array<uint64_t, kThinkSamples> g = gaps;
  uint64_t cut = kth(g, n, quantile_index(n, quantile));
  if (tight) cut = std::max(cut, kth(g, n, (n - 1) / 2));
  return std::min(gap, cut);
}

DependencyInferrer::DependencyInferrer(const DependencyOptions& o) : o_(o) {
  o_.max_fanin = std::clamp<uint32_t>(o_.max_fanin, 1, kMaxParents);
  if (o_.max_tracked == 0) o_.max_tracked = 1;
}

void DependencyInferrer::forget_oldest() {
  const Entry& e = by_complete_.begin()->second;
  auto t = thread_done_.find(e.tid);
  if (t != thread_done_.end()) {
    auto [lo, hi] = t->second.equal_range(e.complete_ns);
    for (auto x = lo; x != hi; ++x)
      if (x->second == e.seq) {
        t->second.erase(x);
        break;
      }
    if (t->second.empty()) thread_done_.erase(t);
  }
  by_seq_.erase(e.seq);
  by_complete_.erase(by_complete_.begin());
}

// Completions that ended before every window of a request issued at
// `issue_ns` can never be a parent again (issue times only grow).
void DependencyInferrer::prune(uint64_t issue_ns) {
  const uint64_t window = std::max(o_.thread_window_ns, o_.cross_window_ns);
  const uint64_t horizon = issue_ns > window ? issue_ns - window : 0;
  while (!by_complete_.empty() && by_complete_.begin()->first < horizon) forget_oldest();
  if (threads_.size() > 4096) {
    const uint64_t keep = std::max(window, o_.sibling_ns);
    std::erase_if(threads_,
                  [&](const auto& kv) { return kv.second.last_issue_ns + keep < issue_ns; });
  }
}

// The thread's latest completion at or before the issue (within the skew),
// when it lies inside the thread window.
const DependencyInferrer::Entry* DependencyInferrer::thread_parent(uint32_t tid,
                                                                   uint64_t issue_ns) const {
  auto t = thread_done_.find(tid);
  if (t == thread_done_.end()) return nullptr;
  auto it = t->second.upper_bound(issue_ns + o_.skew_ns);
  if (it == t->second.begin()) return nullptr;
  --it;
  if (it->first + o_.thread_window_ns < issue_ns) return nullptr;
  return &by_seq_.at(it->second)->second;
}

// A candidate whose completion another candidate's own dependency already
// waited for adds nothing (a transitive edge).
bool DependencyInferrer::implied(const Entry& e, const Dependency& d) const {
  for (uint8_t i = 0; i < d.nparents; ++i) {
    const auto it = by_seq_.find(d.parents[i]);
    if (it == by_seq_.end()) continue;
    const Entry& f = it->second->second;
    for (uint8_t j = 0; j < f.nparents; ++j)
      if (f.parents[j] == e.seq) return true;
  }
  return false;
}

// Other threads' completions inside the cross window, newest first, at most
// max_fanin of them, transitive ones dropped.
void DependencyInferrer::cross_parents(uint32_t tid, uint64_t issue_ns, Dependency& d) {
  const uint64_t lo = issue_ns > o_.cross_window_ns ? issue_ns - o_.cross_window_ns : 0;
  std::vector<const Entry*> cand;
  auto it = by_complete_.upper_bound(issue_ns + o_.skew_ns);
  while (it != by_complete_.begin()) {
    --it;
    if (it->first < lo) break;
    if (it->second.tid != tid) cand.push_back(&it->second);
  }
  for (const Entry* e : cand) {
    if (d.nparents == o_.max_fanin) {
      ++c_.fanin_capped;
      break;
    }
    if (implied(*e, d)) {
      ++c_.transitive_dropped;
      continue;
    }
    d.parents[d.nparents++] = e->seq;
  }
  // Candidates were taken newest first; a candidate taken before one it
  // implies was kept: drop parents that a later-kept parent depends on.
  Dependency kept = d;
  kept.nparents = 0;
  for (uint8_t i = 0; i < d.nparents; ++i) {
    const Entry& e = by_seq_.at(d.parents[i])->second;
    Dependency others = d;
    others.nparents = 0;
    for (uint8_t j = 0; j < d.nparents; ++j)
      if (j != i) others.parents[others.nparents++] = d.parents[j];
    if (implied(e, others)) {
      ++c_.transitive_dropped;
      continue;
    }
    kept.parents[kept.nparents++] = d.parents[i];
  }
  d = kept;
  std::sort(d.parents.begin(), d.parents.begin() + d.nparents);
}

void DependencyInferrer::remember(const Request& r, uint64_t seq, uint64_t issue_ns,
                                  const Dependency& d) {
  ThreadState& ts = threads_[r.pid];
  if (r.completed() && d.kind != DepKind::kSibling && ts.inflight.size() < kMaxSlots) {
    ts.inflight.emplace_back(std::max(r.complete_ns, issue_ns), seq);
    std::push_heap(ts.inflight.begin(), ts.inflight.end(), std::greater<>());
  }
  ts.last_seq = seq;
  ts.last_issue_ns = issue_ns;
  ts.last_end_sector = r.sector + r.sectors();
  ts.last_complete_ns = r.complete_ns;
  ts.last_dep = d;
  if (!r.completed()) {
    ++c_.no_completion;
    return;
  }
  while (by_complete_.size() >= o_.max_tracked) {
    forget_oldest();
    ++c_.forgotten;
  }
  // A completion stamped before its issue (skewed clocks) is taken at the issue.
  const uint64_t c = std::max(r.complete_ns, issue_ns);
  Entry e{seq, issue_ns, c, r.pid, d.depth, d.nparents, d.parents};
  by_seq_[seq] = by_complete_.emplace(c, e);
  thread_done_[r.pid].emplace(c, seq);
}

void count_kind(DependencyCounters& c, DepKind k) {
  ++c.requests;
  switch (k) {
    case DepKind::kIndependent:
      ++c.independent;
      break;
    case DepKind::kThread:
      ++c.thread;
      break;
    case DepKind::kCross:
      ++c.cross;
      break;
    case DepKind::kSibling:
      ++c.sibling;
      break;
    case DepKind::kSlot:
      ++c.slot;
      break;
  }
}

void DependencyInferrer::count(const Dependency& d) {
  count_kind(c_, d.kind);
}

// At least 8 gaps, their median at most half the window.
bool DependencyInferrer::ThreadState::quick(uint64_t window) const {
  const uint32_t n = std::min(ngaps, kThinkSamples);
  if (n < 8) return false;
  std::array<uint64_t, kThinkSamples> g = gaps;
  return kth(g, n, n / 2) <= window / 2;
}

// A gap beyond the thread window after the thread's latest completion is
// still the thread's when it is under ten windows and the thread's typical
// gap is at most half of one: a wake-up of the recording host that came
// late, not a pause of the application.
bool DependencyInferrer::late_thread_parent(ThreadState& ts, uint64_t issue_ns,
                                            Dependency& d) const {
  if (ts.last_done_seq == ~0ull || ts.last_done_ns > issue_ns + o_.skew_ns) return false;
  const uint64_t gap = issue_ns > ts.last_done_ns ? issue_ns - ts.last_done_ns : 0;
  if (gap > 10 * o_.thread_window_ns || !ts.quick(o_.thread_window_ns)) return false;
  d.kind = DepKind::kThread;
  d.parents[d.nparents++] = ts.last_done_seq;
  return true;
}

void DependencyInferrer::set_think(ThreadState& ts, uint64_t gap, Dependency& d) {
  d.think_ns = gap;
  if (o_.think != DependencyOptions::Think::kWork) return;
  d.think_ns = ts.work(gap, o_.think_quantile, o_.think_tight);
  c_.think_cut_ns += gap - d.think_ns;
  c_.think_tight += ts.tight ? 1 : 0;
}

// A thread that had several requests in flight at its recent issues goes by
// queue depth: the request waits for one of its thread's slots, then its
// think time after the thread's latest event (its previous issue or a
// completion). Beyond the thread window the request is not the thread's
// (open loop), unless its typical gap is at most half a window: then up to
// ten windows count (a late wake-up, as for a chain).
bool DependencyInferrer::slot_parent(ThreadState& ts, uint64_t issue_ns, uint32_t count,
                                     Dependency& d) {
  if (o_.async != DependencyOptions::Async::kSlots) return false;
  const uint32_t depth = ts.depth(count);
  if (depth < 2 || ts.last_seq == ~0ull) return false;
  const uint64_t event = std::max(ts.last_issue_ns, ts.last_done_ns);
  const uint64_t gap = issue_ns > event ? issue_ns - event : 0;
  if (gap > o_.thread_window_ns &&
      (gap > 10 * o_.thread_window_ns || !ts.quick(o_.thread_window_ns)))
    return false;
  d.kind = DepKind::kSlot;
  d.slots = depth;
  d.depth = 1;
  set_think(ts, gap, d);
  return true;
}

// Depth and think time of a request with parents: after the latest parent's
// completion (the thread's own work part of it for a thread parent).
void DependencyInferrer::parent_times(ThreadState& ts, uint64_t issue, bool sibling,
                                      Dependency& d) {
  uint64_t latest = 0;
  uint32_t depth = sibling ? d.depth : 0;
  for (uint8_t i = 0; i < d.nparents; ++i) {
    const auto it = by_seq_.find(d.parents[i]);
    if (it == by_seq_.end()) continue;
    latest = std::max(latest, it->second->first);
    depth = std::max(depth, it->second->second.depth + 1);
  }
  if (latest == 0 && d.kind == DepKind::kThread) latest = ts.last_done_ns;  // parent pruned
  d.depth = std::max<uint32_t>(depth, 1);
  if (latest > issue) ++c_.skewed;
  const uint64_t gap = issue > latest ? issue - latest : 0;
  if (sibling) {
    if (latest == 0)  // the parent was forgotten: from the previous request
      d.think_ns = ts.last_dep.think_ns + (issue - ts.last_issue_ns);
    else
      d.think_ns = std::min(gap, ts.last_dep.think_ns + (issue - ts.last_issue_ns));
  } else if (d.kind == DepKind::kThread) {
    set_think(ts, gap, d);
  } else {
    d.think_ns = gap;
  }
}

Dependency DependencyInferrer::add(const Request& r, uint64_t seq) {
  const uint64_t issue = std::max(r.issue_ns, last_issue_);
  last_issue_ = issue;
  prune(issue);
  Dependency d;
  d.seq = seq;
  ThreadState& ts = threads_[r.pid];
  const bool sibling = ts.last_seq != ~0ull && ts.last_end_sector == r.sector &&
                       issue - ts.last_issue_ns <= o_.sibling_ns &&
                       (ts.last_complete_ns == kNoTime || ts.last_complete_ns > issue + o_.skew_ns);
  if (sibling) {
    d = ts.last_dep;
    d.seq = seq;
    if (d.slot()) d.think_ns = issue - ts.last_issue_ns;  // paced from the previous piece
    if (d.nparents > 0) d.kind = DepKind::kSibling;
  } else {
    const uint32_t count = ts.settle(issue + o_.skew_ns);
    const bool slot = slot_parent(ts, issue, count, d);
    const Entry* p = slot ? nullptr : thread_parent(r.pid, issue);
    if (p != nullptr) {
      d.kind = DepKind::kThread;
      d.parents[d.nparents++] = p->seq;
    } else if (!slot && !late_thread_parent(ts, issue, d)) {
      cross_parents(r.pid, issue, d);
      if (d.nparents > 0) d.kind = DepKind::kCross;
    }
  }
  if (d.nparents > 0) parent_times(ts, issue, sibling, d);
  count(d);
  remember(r, seq, issue, d);
  return d;
}

}  // namespace blkrr
