#include "replay/read_ahead.h"
#include "core/clock.h"

#include "replay/replay_clock.h"

#include <pthread.h>
#include <sched.h>

namespace blkrr::replay {

ReadAhead::ReadAhead(PlannedSource& src, const ReadAheadOptions& o) : src_(src), o_(o) {
  if (o_.batch == 0) o_.batch = 1;
  if (o_.max_batches == 0) o_.max_batches = 1;
  thread_ = std::thread([this] { read_loop(); });
}

ReadAhead::~ReadAhead() {
  stop();
}

void ReadAhead::stop() {
  {
    std::lock_guard<std::mutex> g(m_);
    stop_ = true;
  }
  not_full_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<PlannedRequest> ReadAhead::fresh_vector() {
  std::vector<PlannedRequest> v;
  {
    std::lock_guard<std::mutex> g(m_);
    if (!spare_.empty()) {
      v = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  v.clear();
  v.reserve(o_.batch);
  return v;
}

bool ReadAhead::publish(Batch&& b) {
  {
    std::unique_lock<std::mutex> l(m_);
    not_full_.wait(l, [this] { return stop_ || full_.size() < o_.max_batches; });
    if (stop_) {
      unpublished_ = std::move(b.reqs);  // read but never queued: for taken_counters()
      return false;
    }
    if (b.end != End::kNone) ended_ = true;
    full_.push_back(std::move(b));
    hungry_.store(false, std::memory_order_relaxed);
  }
  not_empty_.notify_all();
  return true;
}

void ReadAhead::read_loop() {
  if (o_.reader_sched_other) {
    // Parsing is not urgent while the queue has requests: under --realtime
    // it must not compete with the replay thread or the device's workers.
    sched_param sp{};
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
  }
  for (;;) {
    Batch b;
    b.reqs = fresh_vector();
    while (b.reqs.size() < o_.batch) {
      PlannedRequest p;
      auto r = src_.next(p);
      if (!r) {
        b.end = End::kError;
        b.error = r.error();
        break;
      }
      if (!*r) {
        b.end = End::kEof;
        break;
      }
      b.reqs.push_back(p);
      // A waiting consumer gets what there is rather than a full batch.
      if (hungry_.load(std::memory_order_relaxed)) break;
    }
    const bool last = b.end != End::kNone;
    if (!publish(std::move(b)) || last) break;
  }
  reader_cpu_ns_.store(thread_cpu_ns());
}

void ReadAhead::prefill() {
  std::unique_lock<std::mutex> l(m_);
  not_empty_.wait(l, [this] { return ended_ || stop_ || full_.size() >= o_.max_batches; });
}

Result<bool> ReadAhead::next(PlannedRequest& out) {
  while (pos_ >= cur_.reqs.size()) {
    if (cur_.end == End::kError) return *cur_.error;
    if (cur_.end == End::kEof) return false;
    std::unique_lock<std::mutex> l(m_);
    if (cur_.reqs.capacity() > 0) spare_.push_back(std::move(cur_.reqs));
    if (full_.empty()) {
      ++waits_;
      hungry_.store(true, std::memory_order_relaxed);
      not_empty_.wait(l, [this] { return !full_.empty() || stop_; });
      if (full_.empty()) return Error(ErrorKind::kInternal, "the load's reader was stopped");
    }
    cur_ = std::move(full_.front());
    full_.pop_front();
    pos_ = 0;
    l.unlock();
    not_full_.notify_one();
  }
  out = cur_.reqs[pos_++];
  ++taken_;
  last_taken_ = out;
  return true;
}

PlanCounters ReadAhead::taken_counters(const PlanCounters& reader_side) const {
  PlanCounters c = reader_side;
  auto untake = [&c](const PlannedRequest& r) {
    --c.planned;
    const uint64_t bytes = uint64_t{r.sectors} * 512;
    if (r.op == Op::kRead) {
      --c.planned_reads;
      c.planned_bytes_read -= bytes;
    } else if (r.op == Op::kWrite) {
      --c.planned_writes;
      c.planned_bytes_written -= bytes;
    } else {
      --c.planned_flushes;
    }
  };
  for (size_t i = pos_; i < cur_.reqs.size(); ++i) untake(cur_.reqs[i]);
  for (const PlannedRequest& r : unpublished_) untake(r);
  for (const Batch& b : full_)
    for (const PlannedRequest& r : b.reqs) untake(r);
  if (last_taken_) {
    c.last_load_ns = last_taken_->load_ns;
    c.last_due_ns = last_taken_->due_ns;
  } else {
    c.first_load_ns = c.last_load_ns = c.first_due_ns = c.last_due_ns = 0;
  }
  return c;
}

}  // namespace blkrr::replay
