#include "replay/record_bus.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <type_traits>

#include "core/clock.h"
#include "core/file_io.h"

namespace blkrr::replay {

static_assert(std::is_trivially_copyable_v<ReplayRecord>, "records are spilled as bytes");

RecordBus::RecordBus(bool threaded, size_t batch, size_t max_queued, uint64_t max_spill_bytes)
    : threaded_(threaded),
      batch_size_(batch),
      max_queued_(std::max<size_t>(max_queued, 1)),
      max_spill_(max_spill_bytes) {
  batch_.reserve(batch_size_);
  if (threaded_) thread_ = std::thread([this] { run(); });
}

RecordBus::~RecordBus() {
  finish();
  if (threaded_) {
    {
      std::lock_guard<std::mutex> g(m_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
}

void RecordBus::deliver(const std::vector<ReplayRecord>& b) {
  for (RecordSink* s : sinks_) s->on_records(b);
}

bool RecordBus::spill_locked() {
  if (spill_failed_) return false;
  const size_t bytes = batch_.size() * sizeof(ReplayRecord);
  if (spill_end_ + bytes > max_spill_) return false;  // full: wait for room in memory
  if (!spill_) {
    auto f = open_scratch_file("the replay's results");
    if (f) spill_ = std::move(*f);
  }
  if (!spill_ ||
      !pwrite_all(spill_.get(), batch_.data(), bytes, spill_end_, "the results' spill")) {
    spill_failed_ = true;  // from now on the replay waits for room instead
    return false;
  }
  Entry e;
  e.spilled = true;
  e.count = batch_.size();
  e.offset = spill_end_;
  spill_end_ += bytes;
  spill_peak_ = std::max(spill_peak_, spill_end_);
  queue_.push_back(std::move(e));
  ++spilled_queued_;
  ++spilled_;
  return true;
}

void RecordBus::wait_for_room(std::unique_lock<std::mutex>& l) {
  const uint64_t t0 = mono_ns();
  room_cv_.wait(l, [this] { return in_memory_ < max_queued_; });
  ++waits_;
  waited_ns_ += mono_ns() - t0;
}

// Reuse a delivered batch's storage: a fresh 4096-record vector would be a
// new mapping, page-faulted in on the replay thread.
void RecordBus::next_batch() {
  batch_ = {};
  {
    std::lock_guard<std::mutex> g(m_);
    if (!spare_.empty()) {
      batch_ = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  batch_.clear();
  batch_.reserve(batch_size_);
}

void RecordBus::flush() {
  if (batch_.empty()) return;
  if (!threaded_) {
    deliver(batch_);
    batch_.clear();
    return;
  }
  {
    std::unique_lock<std::mutex> l(m_);
    if (in_memory_ >= max_queued_) {
      if (spill_locked()) {
        l.unlock();
        cv_.notify_one();
        batch_.clear();
        return;
      }
      wait_for_room(l);
    }
    Entry e;
    e.records = std::move(batch_);
    queue_.push_back(std::move(e));
    ++in_memory_;
  }
  cv_.notify_one();
  next_batch();
}

void RecordBus::finish() {
  flush();
  if (!threaded_) return;
  std::unique_lock<std::mutex> l(m_);
  idle_cv_.wait(l, [this] { return queue_.empty() && !busy_; });
}

void RecordBus::read_back(const Entry& e, std::vector<ReplayRecord>& out) {
  out.resize(e.count);
  if (!pread_all(spill_.get(), out.data(), e.count * sizeof(ReplayRecord), e.offset,
                 "the results' spill"))
    out.clear();  // unreadable (I/O error on the spill file): counted as lost
}

void RecordBus::run() {
  // Writing results is never urgent: if the replay runs SCHED_FIFO
  // (--realtime), this thread must not compete with it or with the kernel's
  // I/O workers.
  sched_param sp{};
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
  std::vector<ReplayRecord> back;  // a batch read back from the spill file
  std::unique_lock<std::mutex> l(m_);
  for (;;) {
    cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;
    Entry e = std::move(queue_.front());
    queue_.pop_front();
    --(e.spilled ? spilled_queued_ : in_memory_);
    busy_ = true;
    room_cv_.notify_one();
    l.unlock();
    if (e.spilled) read_back(e, back);
    if (e.spilled && back.size() != e.count) lost_ += e.count;
    deliver(e.spilled ? back : e.records);
    l.lock();
    if (!e.spilled && spare_.size() < 4) spare_.push_back(std::move(e.records));
    if (e.spilled && spilled_queued_ == 0) {  // caught up: empty the file
      if (::ftruncate(spill_.get(), 0) == 0) spill_end_ = 0;
    }
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace blkrr::replay
