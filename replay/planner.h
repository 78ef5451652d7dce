// Turns the input stream into planned requests: issue-time order (native
// traces are written in completion order), load time, window, supported
// operations, device mapping and due time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "converters/source.h"
#include "converters/dependency_graph.h"
#include "converters/device_map.h"
#include "converters/issue_order.h"
#include "replay/record.h"
#include "replay/schedule.h"

namespace blkrr::replay {

struct PlanCounters {
  uint64_t read = 0;             // requests read from the input
  uint64_t before_window = 0;    // skipped: before --start
  uint64_t after_window = 0;     // 1 when reading stopped at the end of the window
  uint64_t unsupported_ops = 0;  // skipped: discard, secure erase, ... (only read, write, flush)
  uint64_t skipped_map = 0;      // skipped by the device mapping (alignment, too large)
  uint64_t out_of_order = 0;     // arrived later than the reorder window allowed; started late
  uint64_t planned = 0;          // handed to the replayer
  uint64_t planned_reads = 0, planned_writes = 0, planned_flushes = 0;
  uint64_t planned_bytes_read = 0, planned_bytes_written = 0;
  uint64_t first_load_ns = 0, last_load_ns = 0;  // of planned requests
  uint64_t first_due_ns = 0, last_due_ns = 0;    // the same in replay time
};

// Anything that yields planned requests in due order: the Planner itself, or
// a ReadAhead that runs one on its own thread.
class PlannedSource {
 public:
  virtual ~PlannedSource() = default;
  // false at the end; an error ends the stream (later calls repeat it).
  virtual Result<bool> next(PlannedRequest& out) = 0;
};

class Planner final : public PlannedSource {
 public:
  // `reorder_window_ns`: how far out of issue order the input may be (used
  // when the source says it is not sorted by issue time).
  Planner(RequestSource& src, const Schedule& sched, DeviceMap& map,
          uint64_t reorder_window_ns = 10'000'000'000ull);

  Result<bool> next(PlannedRequest& out) override;
  const PlanCounters& counters() const { return c_; }
  // Load time of a request as the planner sees it (for the first request: 0
  // when the input uses absolute clock readings).
  uint64_t base_ns() const { return base_; }
  // --timing dependency with --dependencies FILE: the stored graph gives each
  // request's parents instead of the inference (its lines are checked
  // against the requests read). `g` must outlive the planner.
  void use_graph(DependencyGraphReader& g) { graph_ = &g; }
  // --timing dependency: what the inference (or the stored graph) gave the
  // requests read so far.
  const DependencyCounters* dependency_counters() const {
    if (graph_) return &graph_->counters();
    return deps_ ? &deps_->counters() : nullptr;
  }

 private:
  Result<Dependency> dependency_of(const Request& q, uint64_t seq);

  const Schedule& sched_;
  DeviceMap& map_;
  IssueOrder order_;
  bool absolute_;
  bool have_base_ = false;
  uint64_t base_ = 0;
  uint64_t seq_ = 0;
  PlanCounters c_;
  std::optional<DependencyInferrer> deps_;  // with --timing dependency
  DependencyGraphReader* graph_ = nullptr;  // with --dependencies FILE
};

}  // namespace blkrr::replay
