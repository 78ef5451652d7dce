// The flight recorder's memory (record --ring): the last requests kept as
// compressed blocks, each sealed from the records written in about a second,
// so that a window of minutes at tens of thousands of requests a second
// takes a few bytes a request. Blocks are shared, immutable once sealed: a
// snapshot hands a window to a thread that writes it while the recording
// goes on adding and evicting.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/request.h"
#include "core/result.h"

namespace blkrr {

struct RingBlock {
  std::vector<uint8_t> zdata;  // zlib of the column-packed records (core/record_codec.h)
  uint32_t nrec = 0;
  uint32_t raw_len = 0;
  uint64_t min_issue = UINT64_MAX, max_issue = 0;
};

// Records issued in [start, end), from sealed blocks and the records not yet
// sealed, as they were when the snapshot was taken.
struct RingSnapshot {
  uint64_t start = 0, end = 0;
  std::vector<std::shared_ptr<const RingBlock>> blocks;
  std::vector<Request> pending;
  // Calls `each` with every record of the window, in the order written
  // (completion order); stops at the first error.
  Status for_each(const std::function<Status(const Request&)>& each) const;
};

class FlightRing {
 public:
  // max_bytes bounds the blocks plus the records not yet sealed.
  explicit FlightRing(uint64_t max_bytes) : max_bytes_(max_bytes) {}

  void add(const Request& r);
  // The records added since the last seal become one block; then the oldest
  // blocks go while the ring holds more than max_bytes.
  Status seal();
  // Drops the oldest blocks whose every record was issued before keep_from.
  void evict_before(uint64_t keep_from);
  RingSnapshot snapshot(uint64_t start, uint64_t end) const;

  uint64_t bytes() const { return bytes_ + pending_.size() * sizeof(Request); }
  uint64_t records() const { return records_ + pending_.size(); }
  size_t pending() const { return pending_.size(); }
  // Records dropped early to stay within max_bytes, and the latest issue time
  // among them (a window starting before it is incomplete).
  uint64_t evicted_by_memory() const { return evicted_mem_; }
  uint64_t memory_floor_ns() const { return memory_floor_ns_; }

 private:
  void drop_front();
  uint64_t max_bytes_;
  std::vector<std::shared_ptr<const RingBlock>> blocks_;  // oldest first
  size_t front_ = 0;                                      // blocks_[0, front_) are gone
  std::vector<Request> pending_;
  std::vector<uint8_t> shuffled_, packed_;
  uint64_t bytes_ = 0, records_ = 0, evicted_mem_ = 0, memory_floor_ns_ = 0;
};

}  // namespace blkrr
