// A bounded queue between two threads: the producer waits while it is full,
// the consumer while it is empty, and stop() releases both. The readers that
// work ahead of their consumer (inflating, parsing) use it, so that what they
// hold stays bounded whatever the input.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

namespace blkrr {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : cap_(capacity == 0 ? 1 : capacity) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // Waits for room; false (and the item dropped) once stopped.
  bool push(T item) {
    std::unique_lock<std::mutex> lk(m_);
    not_full_.wait(lk, [&] { return stopped_ || q_.size() < cap_; });
    if (stopped_) return false;
    q_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }
  // Adds the item if there is room now; false otherwise.
  bool try_push(T item) {
    std::lock_guard<std::mutex> lk(m_);
    if (stopped_ || q_.size() >= cap_) return false;
    q_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }
  // Waits for an item; nullopt once stopped (items still queued are dropped).
  std::optional<T> pop() {
    std::unique_lock<std::mutex> lk(m_);
    not_empty_.wait(lk, [&] { return stopped_ || !q_.empty(); });
    if (stopped_) return std::nullopt;
    return take(lk);
  }
  // An item if one is queued now.
  std::optional<T> try_pop() {
    std::unique_lock<std::mutex> lk(m_);
    if (q_.empty()) return std::nullopt;
    return take(lk);
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stopped_ = true;
    }
    not_full_.notify_all();
    not_empty_.notify_all();
  }

 private:
  std::optional<T> take(std::unique_lock<std::mutex>& lk) {
    std::optional<T> v(std::move(q_.front()));
    q_.pop_front();
    lk.unlock();
    not_full_.notify_one();
    return v;
  }

  const size_t cap_;
  std::mutex m_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> q_;
  bool stopped_ = false;
};

}  // namespace blkrr
