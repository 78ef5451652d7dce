// Read-ahead for the replay loop: a reader thread pulls planned requests
// (parsing and decompressing the load) into a bounded queue of batches, so
// that the replay thread only schedules and submits. Memory is bounded by
// batch size x batch count whatever the load's length; an input error
// reaches the consumer as a value after every request read before it; the
// reader stops and is joined on stop() or destruction (Ctrl-C, early end).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "replay/planner.h"

namespace blkrr::replay {

struct ReadAheadOptions {
  size_t batch = 256;              // requests per batch
  size_t max_batches = 64;         // batches queued at most (16384 requests by default)
  bool reader_sched_other = true;  // the reader thread never runs SCHED_FIFO (--realtime)
};

class ReadAhead final : public PlannedSource {
 public:
  // Starts the reader thread on `src`, which from then on belongs to it until
  // stop() returned.
  explicit ReadAhead(PlannedSource& src, const ReadAheadOptions& o = {});
  ~ReadAhead() override;
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Consumer side (one thread): the next request, false at the end, or the
  // reader's error once every request before it was taken.
  Result<bool> next(PlannedRequest& out) override;

  // Blocks until the queue is full or the input ended (so that a replay
  // starts with requests in hand).
  void prefill();

  // Stops the reader (if still reading) and joins it. Idempotent.
  void stop();

  // After stop(): the reader's counters with the requests that were read
  // ahead but never taken removed (planned counts, bytes, last times).
  PlanCounters taken_counters(const PlanCounters& reader_side) const;

  uint64_t taken() const { return taken_; }
  uint64_t consumer_waits() const { return waits_; }  // next() found the queue empty
  uint64_t reader_cpu_ns() const { return reader_cpu_ns_.load(); }

 private:
  enum class End : uint8_t { kNone, kEof, kError };
  struct Batch {
    std::vector<PlannedRequest> reqs;
    End end = End::kNone;
    std::optional<Error> error;
  };

  void read_loop();
  bool publish(Batch&& b);  // false when stopped
  std::vector<PlannedRequest> fresh_vector();

  PlannedSource& src_;
  ReadAheadOptions o_;

  std::mutex m_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Batch> full_;
  std::vector<std::vector<PlannedRequest>> spare_;  // recycled batch storage
  std::vector<PlannedRequest> unpublished_;         // the batch in hand when stopped
  bool stop_ = false;
  bool ended_ = false;  // the reader published its last batch
  std::atomic<bool> hungry_{false};
  std::atomic<uint64_t> reader_cpu_ns_{0};

  // Consumer side.
  Batch cur_;
  size_t pos_ = 0;
  uint64_t taken_ = 0, waits_ = 0;
  std::optional<PlannedRequest> last_taken_;

  std::thread thread_;
};

}  // namespace blkrr::replay
