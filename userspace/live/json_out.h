// `blkrr top --json`: one JSON object per interval with every counter.
#pragma once

#include <nlohmann/json.hpp>

#include "live/top_model.h"

namespace blkrr::live {

// {"seq", "time" (ISO 8601 UTC), "timestamp_ns", "interval_s", "loadavg",
//  "group_by", "totals": {read, write, all}, "devices": [...], "rows": [...],
//  "lost": {counter: delta}}. Rows carry requests, bytes, disk_time_ns,
//  disk_time_us, io_percent and latency_ns (biotop's sum of latencies).
nlohmann::json snapshot_json(const Snapshot& s);
// ISO 8601 UTC with milliseconds: "2026-11-21T16:02:03.123Z".
std::string iso_time(uint64_t wall_ns);

}  // namespace blkrr::live
