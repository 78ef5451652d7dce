// Admission of the next request and the push-back list: what a request that
// conflicts with one in flight or waiting does (--cmode, --order), and when
// a parked request may go.
#include "replay/replayer.h"

#include <algorithm>

namespace blkrr::replay {

namespace {
// What a request that overlaps one in flight or waiting does under --cmode;
// flags get the conflict and the mode's mark. earlier_pending: requests
// before it are in flight or waiting (--cmode ordering waits for them all).
enum class OnConflict { kStart, kDrop, kPushBack, kWait };

OnConflict on_conflict(ConflictMode mode, bool earlier_pending, uint8_t& flags) {
  flags |= kReplayConflict;
  switch (mode) {
    case ConflictMode::kConflicts:
      return OnConflict::kStart;
    case ConflictMode::kDrop:
      flags |= kReplayDropped;
      return OnConflict::kDrop;
    case ConflictMode::kPartial:
      flags |= kReplayPushedBack;
      return OnConflict::kPushBack;
    case ConflictMode::kOrdering:
      flags |= kReplayWaited;
      return earlier_pending ? OnConflict::kWait : OnConflict::kStart;
  }
  return OnConflict::kStart;
}
}  // namespace

void Replayer::park(const PlannedRequest& r, uint8_t flags) {
  parked_at_[r.seq] = parked_.insert(parked_.end(), Parked{r, flags});
  if (has_extent(r)) parked_ext_.insert(r.seq, r.sector, r.sector + r.sectors, r.is_write());
  ++parked_pids_[r.pid];
  // A request parked for a conflict releases nothing; with an order mode a
  // parked request changes what its process may start.
  if (cfg_.order != OrderMode::kNone) dirty_ = true;
}

// What a completion may release. Without an order mode a request is parked
// only behind overlapping requests (in flight, or parked before it), so only
// the parked requests that overlap the completed one can go now: they are
// noted as candidates instead of rescanning the whole list, which keeps a
// completion O(log n) when thousands wait (a repeated load's pass
// boundaries). With an order mode, or after a flush, the whole list is
// scanned again.
void Replayer::note_completion(const PlannedRequest& done) {
  if (parked_.empty() || dirty_) return;
  if (cfg_.order != OrderMode::kNone || !has_extent(done)) {
    dirty_ = true;
    return;
  }
  parked_ext_.overlapping(done.sector, done.sector + done.sectors, cfg_.strong, candidates_);
}

void Replayer::unpark_bookkeeping(const Parked& p) {
  parked_at_.erase(p.req.seq);
  if (has_extent(p.req)) parked_ext_.erase(p.req.seq, p.req.sector, p.req.sector + p.req.sectors);
  auto it = parked_pids_.find(p.req.pid);
  if (it != parked_pids_.end() && --it->second == 0) parked_pids_.erase(it);
}

Result<Replayer::Admit> Replayer::admit_head() {
  PlannedRequest& r = *head_;
  uint8_t& f = head_flags_;
  if (cfg_.order == OrderMode::kGlobal && (in_flight_ > 0 || !parked_.empty())) {
    f |= kReplayWaited;
    return Admit::kHeld;
  }
  if (cfg_.order == OrderMode::kPerProcess &&
      (!order_.may_start(r.pid) || parked_pids_.count(r.pid) != 0)) {
    f |= kReplayWaited;
    park(r, f);
    return Admit::kParked;
  }
  if (has_extent(r) &&
      (inflight_ext_.conflicts(r.sector, r.sector + r.sectors, r.is_write(), cfg_.strong) ||
       parked_ext_.conflicts(r.sector, r.sector + r.sectors, r.is_write(), cfg_.strong))) {
    switch (on_conflict(cfg_.cmode, in_flight_ > 0 || !parked_.empty(), f)) {
      case OnConflict::kStart:
        break;
      case OnConflict::kDrop:
        emit_unstarted(r, f);
        return Admit::kDropped;
      case OnConflict::kPushBack:
        park(r, f);
        return Admit::kParked;
      case OnConflict::kWait:
        return Admit::kHeld;
    }
  } else if ((f & kReplayConflict) && cfg_.cmode == ConflictMode::kOrdering &&
             (in_flight_ > 0 || !parked_.empty())) {
    return Admit::kHeld;  // total order: wait for everything before it
  }
  BLKRR_TRY(start(r, f, Purpose::kLoad));
  return Admit::kStarted;
}

Status Replayer::release_parked() {
  if (parked_.empty()) {
    candidates_.clear();
    return {};
  }
  if (dirty_) {
    candidates_.clear();
    return rescan_parked();
  }
  return release_candidates();
}

// The candidates a completion noted, in the order they were parked: each
// starts unless it still conflicts with a request in flight or one parked
// before it (the test the full scan makes).
Status Replayer::release_candidates() {
  if (candidates_.empty()) return {};
  std::sort(candidates_.begin(), candidates_.end());
  candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
  size_t i = 0;
  for (; i < candidates_.size() && in_flight_ < cfg_.queue_depth; ++i) {
    auto at = parked_at_.find(candidates_[i]);
    if (at == parked_at_.end()) continue;
    const auto it = at->second;
    const PlannedRequest& r = it->req;
    if (inflight_ext_.conflicts(r.sector, r.sector + r.sectors, r.is_write(), cfg_.strong) ||
        parked_ext_.conflicts_below(r.sector, r.sector + r.sectors, r.is_write(), cfg_.strong,
                                    r.seq))
      continue;
    unpark_bookkeeping(*it);
    BLKRR_TRY(start(r, it->flags, Purpose::kLoad));
    parked_.erase(it);
  }
  // Without room the rest stay candidates for the next completion.
  candidates_.erase(candidates_.begin(), candidates_.begin() + static_cast<ptrdiff_t>(i));
  return {};
}

Status Replayer::rescan_parked() {
  dirty_ = false;
  scan_ext_.clear();
  blocked_pids_.clear();
  bool earlier_blocked = false;
  for (auto it = parked_.begin(); it != parked_.end();) {
    if (in_flight_ >= cfg_.queue_depth) {
      dirty_ = true;  // come back when there is room
      break;
    }
    Parked& p = *it;
    const PlannedRequest& r = p.req;
    bool blocked = false;
    if (cfg_.order == OrderMode::kPerProcess)
      blocked = blocked_pids_.count(r.pid) != 0 || !order_.may_start(r.pid);
    if (cfg_.order == OrderMode::kGlobal) blocked = in_flight_ > 0 || earlier_blocked;
    if (!blocked && has_extent(r) &&
        (inflight_ext_.conflicts(r.sector, r.sector + r.sectors, r.is_write(), cfg_.strong) ||
         scan_ext_.conflicts(r.sector, r.sector + r.sectors, r.is_write(), cfg_.strong))) {
      const OnConflict act = on_conflict(cfg_.cmode, in_flight_ > 0 || earlier_blocked, p.flags);
      if (act == OnConflict::kDrop) {
        unpark_bookkeeping(p);
        emit_unstarted(r, p.flags);
        it = parked_.erase(it);
        continue;
      }
      blocked = act != OnConflict::kStart;
    }
    if (blocked) {
      earlier_blocked = true;
      if (has_extent(r)) scan_ext_.insert(r.seq, r.sector, r.sector + r.sectors, r.is_write());
      blocked_pids_.insert(r.pid);
      ++it;
      continue;
    }
    unpark_bookkeeping(p);
    BLKRR_TRY(start(r, p.flags, Purpose::kLoad));
    it = parked_.erase(it);
  }
  return {};
}

}  // namespace blkrr::replay
