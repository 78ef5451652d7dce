#include "replay/dependency_gate.h"

#include <algorithm>

namespace blkrr::replay {

bool compensates(Compensation c, DependencyOptions::Think rule) {
  if (c == Compensation::kAuto) return rule == DependencyOptions::Think::kRecorded;
  return c == Compensation::kOn;
}

void DependencyGate::add(const PlannedRequest& r, uint8_t flags, uint64_t now) {
  if (!have_first_) {
    have_first_ = true;
    first_seq_ = r.seq;
  }
  outstanding_.insert(r.seq);
  Held h{r, flags, 0, 0, false, r.due_ns};
  Thread& t = threads_[r.pid];
  const bool chained = r.nparents > 0 || r.slots > 0;
  ++(chained ? t.chained : t.open);
  if (t.chained + t.open > 64) {  // recent ones weigh: halve both
    t.chained /= 2;
    t.open /= 2;
  }
  const bool history = t.seen || !t.pending.empty() || !t.queue.empty();
  if (r.slots > 0 || (!chained && history && t.chained > t.open)) {
    t.queue.push_back(h);
    ++queued_;
    release_queue(r.pid);
    c_.max_held = std::max<uint64_t>(c_.max_held, held());
    return;
  }
  for (uint8_t i = 0; i < r.nparents; ++i) {
    const uint64_t p = r.parents[i];
    if (p < first_seq_) continue;  // before the window: never replayed
    if (outstanding_.count(p) != 0) {
      ++h.remaining;
      children_[p].push_back(r.seq);
      continue;
    }
    auto d = done_at_.find(p);
    // Not found: skipped by the planner (unsupported operation, mapping) or
    // completed so long ago that it was forgotten: taken as done now.
    h.ready_ns = std::max(h.ready_ns, d != done_at_.end() ? d->second : now);
    h.known = true;
  }
  if (h.remaining > 0) {
    t.pending.insert(r.seq);
    waiting_.emplace(r.seq, h);
  } else {
    make_ready(h);
  }
  c_.max_held = std::max<uint64_t>(c_.max_held, held());
}

// All parents are done: due at the latest one's completion plus the think
// time, less the measured reaction time, never before that completion. With
// no parent replayed, the recorded due time stands.
void DependencyGate::make_ready(Held h) {
  if (h.req.nparents > 0 && h.known) {
    due_after(h, h.ready_ns);
  } else if (h.req.nparents > 0) {
    ++c_.parents_unknown;
  }
  const uint32_t pid = h.req.pid;
  Thread& t = threads_[pid];
  ++t.active;  // every request handed out takes one of its thread's slots until done
  out_.emplace(h.req.seq, pid);
  note_due(t, h);
  ready_.push(h);
  release_queue(pid);
}

// Due at `event_ns` plus the think time, less the measured reaction (never
// before the event); counted as a dependent request.
void DependencyGate::due_after(Held& h, uint64_t event_ns) {
  const uint64_t comp = compensate_ ? std::min(reaction_ns_, h.req.think_ns) : 0;
  h.req.due_ns = event_ns + h.req.think_ns - comp;
  h.req.ready_ns = event_ns;
  h.req.after_parents = true;
  c_.compensated_ns += comp;
  ++c_.dependent;
}

void DependencyGate::note_due(Thread& t, const Held& h) {
  t.seen = true;
  t.last_ns = std::max(t.last_ns, h.req.due_ns);
  t.last_due = h.req.due_ns;
  t.last_rec_due = h.rec_due;
}

// A queued request's due time. Slot: the thread's latest event plus the
// think time (less the reaction). Independent: the thread's previous due
// plus their recorded distance. The first request of a thread keeps its
// recorded time.
void DependencyGate::time_queued(Thread& t, Held& h) {
  if (!t.seen) return;
  if (h.req.slots > 0) {
    due_after(h, t.last_ns);
    ++c_.slot;
  } else {
    h.req.due_ns = t.last_due + (h.rec_due > t.last_rec_due ? h.rec_due - t.last_rec_due : 0);
    ++c_.paced;
  }
}

// Hands out the thread's queued requests in order once its earlier requests
// were handed out, a slot request only while its thread has a free slot.
void DependencyGate::release_queue(uint32_t pid) {
  auto it = threads_.find(pid);
  if (it == threads_.end()) return;
  Thread& t = it->second;
  // (A later request waiting for parents may wait for a queued one.)
  while (!t.queue.empty() && (t.pending.empty() || *t.pending.begin() > t.queue.front().req.seq)) {
    const uint32_t slots = t.queue.front().req.slots;
    if (slots > 0 && t.active >= slots) break;
    Held h = t.queue.front();
    t.queue.pop_front();
    --queued_;
    ++t.active;
    out_.emplace(h.req.seq, pid);
    time_queued(t, h);
    note_due(t, h);
    ready_.push(h);
  }
  if (t.queue.empty() && t.active == 0 && t.pending.empty() && threads_.size() > kMaxThreads)
    threads_.erase(it);
}

void DependencyGate::on_done(uint64_t seq, uint64_t t) {
  if (outstanding_.erase(seq) == 0) return;
  if (auto o = out_.find(seq); o != out_.end()) {
    const uint32_t pid = o->second;
    out_.erase(o);
    Thread& th = threads_[pid];
    if (th.active > 0) --th.active;
    th.last_ns = std::max(th.last_ns, t);
    release_queue(pid);
  }
  done_at_[seq] = t;
  done_order_.push_back(seq);
  if (done_order_.size() > kRecentDone) {
    done_at_.erase(done_order_.front());
    done_order_.pop_front();
  }
  auto kids = children_.find(seq);
  if (kids == children_.end()) return;
  for (uint64_t k : kids->second) {
    auto w = waiting_.find(k);
    if (w == waiting_.end()) continue;
    Held& h = w->second;
    h.ready_ns = std::max(h.ready_ns, t);
    h.known = true;
    if (--h.remaining == 0) {
      Held ready = h;
      waiting_.erase(w);
      threads_[ready.req.pid].pending.erase(ready.req.seq);
      make_ready(ready);
    }
  }
  children_.erase(kids);
}

void DependencyGate::put_back(const PlannedRequest& r, uint8_t flags) {
  ready_.push(Held{r, flags, 0, r.ready_ns, r.after_parents, r.due_ns});
}

PlannedRequest DependencyGate::pop(uint8_t& flags) {
  Held h = ready_.top();
  ready_.pop();
  flags = h.flags;
  return h.req;
}

void DependencyGate::drain(const std::function<void(const PlannedRequest&, uint8_t)>& fn) {
  while (!ready_.empty()) {
    fn(ready_.top().req, ready_.top().flags);
    ready_.pop();
  }
  std::vector<const Held*> rest;
  for (const auto& [seq, h] : waiting_) rest.push_back(&h);
  for (const auto& [pid, t] : threads_)
    for (const Held& h : t.queue) rest.push_back(&h);
  std::sort(rest.begin(), rest.end(),
            [](const Held* a, const Held* b) { return a->req.seq < b->req.seq; });
  for (const Held* h : rest) fn(h->req, h->flags);
  waiting_.clear();
  children_.clear();
  threads_.clear();
  queued_ = 0;
}

// A running mean over the last ~16 samples: the loop's reaction is steady,
// and one slow wake-up should not make every later request early.
void DependencyGate::learn_reaction(uint64_t late_ns) {
  ++c_.reaction_samples;
  c_.reaction_sum_ns += late_ns;
  c_.reaction_max_ns = std::max(c_.reaction_max_ns, late_ns);
  reaction_ns_ =
      c_.reaction_samples == 1 ? late_ns : reaction_ns_ - reaction_ns_ / 16 + late_ns / 16;
}

}  // namespace blkrr::replay
