#include "replay/record_bus.h"

#include <pthread.h>
#include <sched.h>

namespace blkrr::replay {

RecordBus::RecordBus(bool threaded, size_t batch) : threaded_(threaded), batch_size_(batch) {
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

void RecordBus::flush() {
  if (batch_.empty()) return;
  if (!threaded_) {
    deliver(batch_);
    batch_.clear();
    return;
  }
  {
    std::lock_guard<std::mutex> g(m_);
    queue_.push_back(std::move(batch_));
  }
  cv_.notify_one();
  // Reuse a delivered batch's storage: a fresh 4096-record vector would be
  // a new mapping, page-faulted in on the replay thread.
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

void RecordBus::finish() {
  flush();
  if (!threaded_) return;
  std::unique_lock<std::mutex> l(m_);
  idle_cv_.wait(l, [this] { return queue_.empty() && !busy_; });
}

void RecordBus::run() {
  // Writing results is never urgent: if the replay runs SCHED_FIFO
  // (--realtime), this thread must not compete with it or with the kernel's
  // I/O workers.
  sched_param sp{};
  pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
  std::unique_lock<std::mutex> l(m_);
  for (;;) {
    cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;
    std::vector<ReplayRecord> b = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    l.unlock();
    deliver(b);
    l.lock();
    if (spare_.size() < 4) spare_.push_back(std::move(b));
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace blkrr::replay
