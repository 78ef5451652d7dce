// The native trace's header as JSON (trace_format.cpp writes and reads it).
#pragma once

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/trace_format.h"

namespace blkrr {

// A device as the header and `blkrr devices -j` describe it (one vocabulary).
nlohmann::json device_info_json(const DeviceInfo& d);

nlohmann::json header_to_json(const TraceHeader& h);

// Every number must be an integer that fits its field; errors name the key.
Result<TraceHeader> header_from_json(const nlohmann::json& j);

}  // namespace blkrr
