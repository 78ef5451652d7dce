// One request as JSON, the record of the blkrr.requests stream
// (docs/schema/requests.json) that `dump -j` and `snoop -j` write, and that
// `convert` writes to JSON lines (converters/sink_text.cpp spells the same
// keys without nlohmann for speed; tests validate both against the schema).
//   start_ns     the request's time on the stream's axis (dump: since the
//                first request's issue; snoop: since snoop started), null
//                when the issue was not seen
//   issue_ns, complete_ns   CLOCK_MONOTONIC of the recording host, or null
//   latency_ns, disk_time_ns, queue_ns (snoop -Q)
//   dev, part    "MAJ:MIN" of the disk and of the partition (== dev if none)
//   device       the kernel's name of `part` when known
//   pid          the process (tgid, what ps shows); tid: the thread
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/request.h"

namespace blkrr {

struct RequestJsonContext {
  uint64_t origin_ns = 0;            // start_ns = issue_ns - origin_ns
  std::string device;                // the name of r.part ("" = omitted)
  bool with_queue = false;           // add queue_ns
  std::optional<uint64_t> queue_ns;  // null when with_queue and unknown
};

nlohmann::json request_json(const Request& r, const RequestJsonContext& c);

// The first line of a blkrr.requests stream: type, schema, the writing tool
// ("blkrr dump") and blkrr's version.
nlohmann::json requests_header(std::string_view tool);

// One JSON line (no newline): invalid UTF-8 in strings replaced, not thrown.
std::string json_line(const nlohmann::json& j);

}  // namespace blkrr
