#include "replay/replayer.h"
#include "core/clock.h"

#include <algorithm>
#include <cstring>

namespace blkrr::replay {

namespace {

IoKind kind_of(Op op) {
  if (op == Op::kWrite) return IoKind::kWrite;
  if (op == Op::kFlush) return IoKind::kFlush;
  return IoKind::kRead;
}

}  // namespace

Replayer::Replayer(const ReplayConfig& cfg, Clock& clock, Engine& engine, BufferPool& buffers,
                   PlannedSource& planner, RecordBus& bus)
    : cfg_(cfg),
      clock_(clock),
      engine_(engine),
      buffers_(buffers),
      planner_(planner),
      bus_(bus),
      order_(cfg.order),
      verify_(cfg.run_id) {
  if (cfg_.queue_depth == 0) cfg_.queue_depth = 1;
  batch_.reserve(cfg_.max_batch);
  if (cfg_.dependency) gate_.emplace(cfg_.compensate_reaction);
}

// --timing dependency: read ahead into the gate (a bounded number per call,
// at most max_waiting held), then take the ready request due first as the
// head, putting back a head that is due later.
Status Replayer::fetch_dependent() {
  constexpr int kPullPerCall = 256;
  for (int i = 0; i < kPullPerCall && !src_done_ && gate_->held() < cfg_.max_waiting; ++i) {
    PlannedRequest p;
    auto r = planner_.next(p);
    if (!r) return r.error();
    if (!*r) {
      src_done_ = true;
      break;
    }
    gate_->add(p, 0, start_ != 0 ? rel(clock_.now_ns()) : 0);
  }
  if (head_ && gate_->ready() && gate_->next_due() < head_->due_ns) {
    gate_->put_back(*head_, head_flags_);
    head_.reset();
  }
  if (!head_ && gate_->ready()) head_ = gate_->pop(head_flags_);
  return {};
}

Status Replayer::fetch_head() {
  if (gate_) return fetch_dependent();
  if (head_ || src_done_ || parked_.size() >= cfg_.max_waiting) return {};
  PlannedRequest p;
  auto r = planner_.next(p);
  if (!r) return r.error();
  if (!*r) {
    src_done_ = true;
    return {};
  }
  head_ = p;
  head_flags_ = 0;
  return {};
}

Status Replayer::start(const PlannedRequest& r, uint8_t flags, Purpose purpose) {
  uint64_t id;
  if (free_.empty()) {
    id = slots_.size();
    slots_.emplace_back();
  } else {
    id = free_.back();
    free_.pop_back();
  }
  Slot& s = slots_[id];
  s.req = r;
  s.flags = flags;
  s.purpose = purpose;
  const IoKind kind = kind_of(r.op);
  const uint32_t bytes = r.sectors * 512u;
  IoOp op{id, kind, r.sector * 512, bytes, nullptr, -1};
  if (kind != IoKind::kFlush) {
    auto b = buffers_.get(id, kind, bytes);
    if (!b) return b.error();
    op.buf = b->data;
    op.buf_index = b->fixed_index;
    s.buf = b->data;
    inflight_ext_.insert(id, r.sector, r.sector + r.sectors, kind == IoKind::kWrite);
  }
  if (cfg_.vmode != VerifyMode::kNone) {
    if (kind == IoKind::kWrite) verify_.begin_write(r.seq, r.sector, r.sectors, s.buf);
    if (kind == IoKind::kRead) s.snapshot = verify_.begin_read();
  }
  if (purpose == Purpose::kLoad) {
    order_.on_start(r.pid);
    last_due_ = r.due_ns;
  }
  batch_.push_back(op);
  ++in_flight_;
  if (in_flight_ > res_.max_in_flight) res_.max_in_flight = in_flight_;
  return {};
}

Status Replayer::flush_batch() {
  if (batch_.empty()) return {};
  auto s = engine_.submit(batch_);
  batch_.clear();
  return s;
}

void Replayer::emit(const ReplayRecord& rec) {
  const uint8_t f = rec.flags;
  if (f & kReplayDropped) {
    ++res_.dropped;
    if (gate_) gate_->on_done(rec.req.seq, rel(clock_.now_ns()));
  }
  if (f & kReplayNotStarted) ++res_.not_started;
  if (f & kReplayPushedBack) ++res_.pushed_back;
  if (f & kReplayWaited) ++res_.waited;
  if (f & kReplayConflict) ++res_.conflicts;
  bus_.push(rec);
}

void Replayer::emit_unstarted(const PlannedRequest& r, uint8_t flags) {
  ReplayRecord rec;
  rec.req = r;
  rec.flags = flags;
  emit(rec);
}

Status Replayer::handle(std::vector<IoCompletion>& done) {
  for (const IoCompletion& c : done) {
    Slot& s = slots_[c.id];
    const PlannedRequest& r = s.req;
    const IoKind kind = kind_of(r.op);
    const int32_t want = static_cast<int32_t>(r.sectors * 512u);
    const bool ok = kind == IoKind::kFlush ? c.result >= 0 : c.result == want;
    if (kind != IoKind::kFlush) inflight_ext_.erase(c.id, r.sector, r.sector + r.sectors);
    --in_flight_;
    note_completion(r);
    if (s.purpose == Purpose::kLoad) {
      ReplayRecord rec;
      rec.req = r;
      rec.submit_ns = rel(c.submit_ns);
      rec.complete_ns = rel(c.complete_ns);
      rec.result = c.result;
      rec.flags = s.flags;
      if (!ok) {
        rec.flags |= kReplayError;
        note_failure(r, c.result, rec.submit_ns);
      } else if (kind == IoKind::kRead) {
        ++res_.reads_done;
        res_.bytes_read += static_cast<uint64_t>(want);
      } else if (kind == IoKind::kWrite) {
        ++res_.writes_done;
        res_.bytes_written += static_cast<uint64_t>(want);
      } else {
        ++res_.flushes_done;
      }
      if (res_.completed++ == 0 || rec.submit_ns < res_.first_submit_ns)
        res_.first_submit_ns = rec.submit_ns;
      res_.last_submit_ns = std::max(res_.last_submit_ns, rec.submit_ns);
      res_.last_complete_ns = std::max(res_.last_complete_ns, rec.complete_ns);
      last_delay_ = rec.delay_ns();
      order_.on_complete(r.pid);
      if (gate_) {
        // Only requests that went as soon as they were due: a wait for a
        // conflict or an order is not the loop's reaction.
        constexpr uint8_t kHeldBack = kReplayPushedBack | kReplayWaited | kReplayConflict;
        if (r.after_parents && (s.flags & kHeldBack) == 0)
          gate_->learn_reaction(rec.delay_ns() > 0 ? static_cast<uint64_t>(rec.delay_ns()) : 0);
        gate_->on_done(r.seq, rec.complete_ns);
      }
      if (cfg_.vmode != VerifyMode::kNone) {
        if (kind == IoKind::kWrite) verify_.end_write(r.seq, r.sector, r.sectors, ok);
        if (kind == IoKind::kRead && ok)
          verify_.check_read(VerifyPass::kRead, r.seq, r.sector, r.sectors, s.buf, s.snapshot,
                             res_.verify_error_list);
        trim_verify_errors();
      }
      emit(rec);
      const PlannedRequest again = r;
      free_.push_back(c.id);
      if (cfg_.vmode == VerifyMode::kParanoia && kind == IoKind::kWrite && ok) {
        PlannedRequest check = again;
        check.op = Op::kRead;
        ++res_.verify_reads;
        BLKRR_TRY(start(check, 0, Purpose::kParanoia));
      }
    } else {
      if (!ok) {
        ++res_.verify_read_errors;
      } else {
        verify_.check_read(
            s.purpose == Purpose::kFinal ? VerifyPass::kFinal : VerifyPass::kParanoia, r.seq,
            r.sector, r.sectors, s.buf, s.snapshot, res_.verify_error_list);
        trim_verify_errors();
      }
      free_.push_back(c.id);
    }
  }
  done.clear();
  return {};
}

// A failed request of the load: counted by errno and listed; it stops the
// replay with --stop-on-error, or when the device has gone away.
void Replayer::note_failure(const PlannedRequest& r, int32_t result, uint64_t submit_ns) {
  const FailedRequest f{r.seq, r.op, r.sector, r.sectors, result, submit_ns};
  if (res_.errors++ == 0) res_.first_error = Failures::describe(f);
  Failures& fl = res_.failures;
  fl.add(f);
  if (!fl.stop_reason.empty()) return;
  const uint64_t now = clock_.now_ns();
  if (cfg_.device_present && (fl.count == 1 || now - presence_checked_ns_ >= 100'000'000)) {
    presence_checked_ns_ = now;
    if (!cfg_.device_present()) {
      fl.device_gone = true;
      fl.stop_reason = "the device went away during the replay (request " + std::to_string(r.seq) +
                       " failed with " +
                       (result < 0 ? errno_name(-result) : std::string("a short transfer")) +
                       " and the device node no longer names a device)";
      return;
    }
  }
  if (cfg_.stop_on_error)
    fl.stop_reason = "--stop-on-error: request " + std::to_string(r.seq) + " failed (" +
                     Failures::describe(f) + ")";
}

void Replayer::trim_verify_errors() {
  if (res_.verify_error_list.size() <= cfg_.max_verify_errors_kept) return;
  verify_errors_dropped_ += res_.verify_error_list.size() - cfg_.max_verify_errors_kept;
  res_.verify_error_list.resize(cfg_.max_verify_errors_kept);
}

void Replayer::report_progress(uint64_t now) {
  if (!cfg_.on_progress || now < next_progress_) return;
  next_progress_ = now + cfg_.progress_interval_ns;
  Progress p;
  p.elapsed_ns = rel(now);
  p.due_ns = last_due_;
  p.completed = res_.completed;
  p.in_flight = in_flight_;
  p.last_delay_ns = last_delay_;
  cfg_.on_progress(p);
}

Status Replayer::final_verify() {
  const uint32_t lbs = std::max<uint32_t>(1, cfg_.logical_block / 512);
  const uint32_t max_len = std::max<uint32_t>(256 / lbs, 1) * lbs;
  auto extents = verify_.known_extents(max_len);
  for (auto [sector, len] : extents) {
    while (in_flight_ >= cfg_.queue_depth) {
      BLKRR_TRY(flush_batch());
      BLKRR_TRY(engine_.wait(done_, clock_.now_ns() + kMaxWaitNs));
      BLKRR_TRY(handle(done_));
    }
    PlannedRequest r;
    r.op = Op::kRead;
    uint64_t s = sector / lbs * lbs;
    uint64_t e = (sector + len + lbs - 1) / lbs * lbs;
    r.sector = s;
    r.sectors = static_cast<uint32_t>(e - s);
    ++res_.verify_reads;
    BLKRR_TRY(start(r, 0, Purpose::kFinal));
    if (batch_.size() >= cfg_.max_batch) BLKRR_TRY(flush_batch());
  }
  BLKRR_TRY(flush_batch());
  while (in_flight_ > 0) {
    BLKRR_TRY(engine_.wait(done_, clock_.now_ns() + kMaxWaitNs));
    BLKRR_TRY(handle(done_));
  }
  return {};
}

Result<bool> Replayer::start_due(uint64_t& now, bool& first) {
  while (head_ && in_flight_ < cfg_.queue_depth) {
    if (now < start_ + head_->due_ns) break;
    auto a = admit_head();
    if (!a) return a.error();
    if (*a == Admit::kHeld) return true;
    head_.reset();
    first = false;
    if (batch_.size() >= cfg_.max_batch) BLKRR_TRY(flush_batch());
    BLKRR_TRY(fetch_head());
    now = clock_.now_ns();
  }
  return false;
}

void Replayer::record_unstarted() {
  for (const Parked& p : parked_) emit_unstarted(p.req, p.flags | kReplayNotStarted);
  parked_.clear();
  parked_at_.clear();
  if (head_) emit_unstarted(*head_, head_flags_ | kReplayNotStarted);
  head_.reset();
  if (gate_)
    gate_->drain(
        [this](const PlannedRequest& r, uint8_t f) { emit_unstarted(r, f | kReplayNotStarted); });
}

void Replayer::finish_result(uint64_t cpu0) {
  trim_verify_errors();
  res_.verify_errors = verify_errors_dropped_ + res_.verify_error_list.size();
  res_.sectors_verified = verify_.sectors_checked();
  res_.sectors_unverifiable = verify_.sectors_unverifiable();
  res_.thread_cpu_ns = thread_cpu_ns() - cpu0;
  if (gate_) {
    res_.gate = gate_->counters();
    res_.reaction_ns = gate_->reaction_ns();
  }
}

Result<ReplayResult> Replayer::run(const std::atomic<bool>* stop) {
  const uint64_t cpu0 = thread_cpu_ns();
  BLKRR_TRY(fetch_head());  // the first read (and gzip start-up) happens before the clock starts
  start_ = cfg_.start_instant_ns ? *cfg_.start_instant_ns : clock_.now_ns() + cfg_.lead_ns;
  res_.start_instant_ns = start_;
  bus_.start(start_);
  next_progress_ = start_ + cfg_.progress_interval_ns;
  bool stopping = false;
  BLKRR_TRY(calibrate_wake());
  // When the start margin was too short to learn the timer's lateness, spin through
  // it (at most max_spin_ns) rather than risk a late first request.
  bool first = cfg_.adaptive_spin && res_.sleeps == 0;
  for (;;) {
    BLKRR_TRY(engine_.poll(done_));
    BLKRR_TRY(handle(done_));
    if (!stopping && stop != nullptr && stop->load(std::memory_order_relaxed)) {
      stopping = true;
      res_.interrupted = true;
    }
    if (!res_.failures.stop_reason.empty()) stopping = true;
    if (stopping) {
      BLKRR_TRY(flush_batch());
      if (in_flight_ == 0) break;
      BLKRR_TRY(engine_.wait(done_, clock_.now_ns() + kMaxWaitNs));
      BLKRR_TRY(handle(done_));
      continue;
    }
    BLKRR_TRY(release_parked());
    BLKRR_TRY(fetch_head());
    uint64_t now = clock_.now_ns();
    auto held = start_due(now, first);
    if (!held) return held.error();
    BLKRR_TRY(flush_batch());
    report_progress(now);
    if (!head_ && src_done_ && parked_.empty() && in_flight_ == 0 && (!gate_ || !gate_->held()))
      break;
    if (head_ && !*held && in_flight_ < cfg_.queue_depth) {
      const uint64_t due = start_ + head_->due_ns;
      now = clock_.now_ns();
      if (now >= due) continue;
      const uint64_t spin = first ? cfg_.max_spin_ns : spin_margin();
      if (due - now > spin) {
        const uint64_t target = std::min(due - spin, now + kMaxWaitNs);
        BLKRR_TRY(engine_.wait(done_, target));
        if (done_.empty()) learn_wake(clock_.now_ns() - std::min(target, clock_.now_ns()));
        BLKRR_TRY(handle(done_));
      } else {
        clock_.relax(due);
      }
      continue;
    }
    if (in_flight_ == 0) {
      if (dirty_ || !candidates_.empty()) continue;  // parked requests may go now
      if (!parked_.empty()) {
        // Each parked request waits behind one in flight, so this does not
        // happen; a full scan makes sure before calling it a stall.
        BLKRR_TRY(rescan_parked());
        BLKRR_TRY(flush_batch());
        if (in_flight_ > 0) continue;
      }
      return Error(ErrorKind::kInternal,
                   "replay stalled with " + std::to_string(parked_.size()) + " requests parked, " +
                       std::to_string(gate_ ? gate_->held() : 0) +
                       " waiting for parents and none in flight (internal error; please report)");
    }
    BLKRR_TRY(wait_completion());
  }
  if (stopping)
    record_unstarted();
  else if (cfg_.vmode == VerifyMode::kFinalVerify)
    BLKRR_TRY(final_verify());
  bus_.flush();
  finish_result(cpu0);
  return res_;
}

}  // namespace blkrr::replay
