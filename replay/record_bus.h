// Hands completion records from the replay thread to the sinks in batches,
// on a background thread, so that writing results never delays submissions.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "replay/record.h"

namespace blkrr::replay {

class RecordBus {
 public:
  // threaded=false runs the sinks inline (unit tests).
  explicit RecordBus(bool threaded, size_t batch = 4096);
  ~RecordBus();
  RecordBus(const RecordBus&) = delete;
  RecordBus& operator=(const RecordBus&) = delete;

  void add_sink(RecordSink* s) { sinks_.push_back(s); }
  void push(const ReplayRecord& r) {
    batch_.push_back(r);
    if (batch_.size() >= batch_size_) flush();
  }
  // Hands the current batch over.
  void flush();
  // Flushes and waits until the sinks have seen everything.
  void finish();

 private:
  void run();
  void deliver(const std::vector<ReplayRecord>& b);

  bool threaded_;
  size_t batch_size_;
  std::vector<RecordSink*> sinks_;
  std::vector<ReplayRecord> batch_;
  std::mutex m_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::vector<ReplayRecord>> queue_;
  std::vector<std::vector<ReplayRecord>> spare_;  // delivered batches, for reuse
  bool busy_ = false, stop_ = false;
  std::thread thread_;
};

}  // namespace blkrr::replay
