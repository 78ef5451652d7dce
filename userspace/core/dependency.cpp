#include "core/dependency.h"

#include <algorithm>
#include <vector>

namespace blkrr {

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
  }
  return "?";
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
  }
}

void DependencyInferrer::count(const Dependency& d) {
  count_kind(c_, d.kind);
}

Dependency DependencyInferrer::add(const Request& r, uint64_t seq) {
  const uint64_t issue = std::max(r.issue_ns, last_issue_);
  last_issue_ = issue;
  prune(issue);
  Dependency d;
  d.seq = seq;
  auto ts = threads_.find(r.pid);
  const bool sibling =
      ts != threads_.end() && ts->second.last_seq != ~0ull &&
      ts->second.last_end_sector == r.sector && issue - ts->second.last_issue_ns <= o_.sibling_ns &&
      (ts->second.last_complete_ns == kNoTime || ts->second.last_complete_ns > issue + o_.skew_ns);
  if (sibling) {
    d = ts->second.last_dep;
    d.seq = seq;
    if (!d.independent()) d.kind = DepKind::kSibling;
  } else if (const Entry* p = thread_parent(r.pid, issue)) {
    d.kind = DepKind::kThread;
    d.parents[d.nparents++] = p->seq;
  } else {
    cross_parents(r.pid, issue, d);
    if (!d.independent()) d.kind = DepKind::kCross;
  }
  uint64_t latest = 0;
  uint32_t depth = sibling ? d.depth : 0;
  for (uint8_t i = 0; i < d.nparents; ++i) {
    const auto it = by_seq_.find(d.parents[i]);
    if (it == by_seq_.end()) continue;
    latest = std::max(latest, it->second->first);
    depth = std::max(depth, it->second->second.depth + 1);
  }
  d.depth = d.independent() ? 0 : depth;
  if (!d.independent()) {
    if (latest > issue) ++c_.skewed;
    d.think_ns = issue > latest ? issue - latest : 0;
    if (latest == 0 && sibling)  // the parent was forgotten: from the previous request
      d.think_ns = ts->second.last_dep.think_ns + (issue - ts->second.last_issue_ns);
  }
  count(d);
  remember(r, seq, issue, d);
  return d;
}

}  // namespace blkrr
