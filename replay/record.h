// What the replay did with each request of the load, and the interface for
// whoever consumes that (result file, statistics, a validator).
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/dependency.h"
#include "core/request.h"

namespace blkrr::replay {

// One request of the load, planned for the device.
struct PlannedRequest {
  uint64_t seq = 0;      // index of the request in the load (0 = first)
  uint64_t load_ns = 0;  // recorded time since the start of the load
  uint64_t due_ns = 0;   // due time after the start instant (timing policy applied)
  uint64_t orig_sector = 0;
  uint32_t orig_sectors = 0;
  uint64_t sector = 0;   // submitted sector on the device (after wrap/scale/align)
  uint32_t sectors = 0;  // submitted length
  Op op = Op::kRead;     // kRead, kWrite or kFlush
  uint32_t pid = 0;      // original process (native traces), 0 if unknown
  // --timing dependency: the requests (by seq) whose completion released this
  // one, and its think time after the latest of them (divided by --speedup).
  uint8_t nparents = 0;
  bool after_parents = false;  // due_ns was set from its parents' completions in this replay
  std::array<uint64_t, kMaxParents> parents{};
  uint64_t think_ns = 0;
  // Kind slot: goes when its thread (pid) has fewer than this many slot
  // requests in flight, its think time after the thread's latest event.
  uint32_t slots = 0;
  uint64_t ready_ns = 0;  // after_parents: when the last parent completed (after the start)
  bool is_write() const { return op == Op::kWrite; }
};

enum ReplayFlag : uint8_t {
  kReplayPushedBack = 1u << 0,  // waited on the push-back list for a conflict (--cmode partial)
  kReplayWaited = 1u << 1,      // waited for earlier requests (ordering policy or --cmode ordering)
  kReplayConflict = 1u << 2,    // overlapped a request in flight or waiting
  kReplayDropped = 1u << 3,     // not submitted (--cmode drop)
  kReplayError = 1u << 4,       // completed with an error or a short transfer
  kReplayNotStarted = 1u << 5,  // still waiting when the replay was interrupted
};

struct ReplayRecord {
  PlannedRequest req;
  uint64_t submit_ns = 0;    // after the start instant (0 if never submitted)
  uint64_t complete_ns = 0;  // after the start instant
  int32_t result = 0;        // bytes transferred or -errno
  uint8_t flags = 0;

  bool submitted() const { return (flags & (kReplayDropped | kReplayNotStarted)) == 0; }
  int64_t delay_ns() const {
    return static_cast<int64_t>(submit_ns) - static_cast<int64_t>(req.due_ns);
  }
  uint64_t latency_ns() const { return complete_ns - submit_ns; }
};

// Receives records in completion order (dropped and never-started requests
// included, flagged), in batches, on one thread at a time.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Once, before the first record: the start instant (CLOCK_MONOTONIC ns)
  // the records' times are relative to.
  virtual void on_start(uint64_t /*start_instant_ns*/) {}
  virtual void on_records(std::span<const ReplayRecord> records) = 0;
};

}  // namespace blkrr::replay
