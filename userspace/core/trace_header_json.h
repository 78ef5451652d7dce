// The native trace's header as JSON (trace_format.cpp writes and reads it).
#pragma once

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/trace_format.h"

namespace blkrr {

// A device as the header and `blkrr devices -j` describe it (one vocabulary).
nlohmann::json device_info_json(const DeviceInfo& d);

nlohmann::json header_to_json(const TraceHeader& h);

// JSON text that must be an object whose objects name no key twice (a
// duplicate would silently win over the first); the error says which key.
Result<nlohmann::json> parse_json_unique_keys(const std::string& text);

// Every number must be an integer that fits its field, every text a string,
// devices and partitions arrays of objects; "format" must be "blkrr-trace"
// and "clock" CLOCK_MONOTONIC when present. Errors name the key.
Result<TraceHeader> header_from_json(const nlohmann::json& j);

// The trailer's counters: a JSON object of unsigned integers, each key once.
// A counter cannot be negative: a negative, fractional or non-numeric value
// is an error naming the counter.
Result<Counters> trailer_counters(const std::string& text);

}  // namespace blkrr
