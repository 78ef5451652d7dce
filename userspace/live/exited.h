// Forgetting the tasks that exited: the kernel's aggregation map has one
// entry per {process, thread, comm, cgroup, partition, direction} and is never
// emptied by the kernel, so `top` removes the entries of tasks that are gone
// (Capture::take_aggregates) once their final values have been counted.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "capture/capture.h"  // AggEntry (plain structs, header only)

namespace blkrr::live {

// True while thread `tid` of process `pid` exists (PROCFS/PID/task/TID).
bool task_alive(uint32_t pid, uint32_t tid, const std::string& procfs = "/proc");

// Keys of the entries whose task is no longer alive, in the order of `agg`.
// A key read twice (two kernel entries showing as one key) is listed twice,
// so that take_aggregates removes both.
std::vector<AggKey> exited_keys(const std::vector<AggEntry>& agg,
                                const std::function<bool(uint32_t pid, uint32_t tid)>& alive);

// Replaces the entries of `agg` whose key is in `taken` by the final values
// returned by take_aggregates (which include what completed between the read
// and the removal). Returns the distinct keys that were taken.
std::vector<AggKey> fold_taken(std::vector<AggEntry>& agg, const std::vector<AggEntry>& taken);

}  // namespace blkrr::live
