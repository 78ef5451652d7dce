// What every JSON document of blkrr has in common (docs/json.md):
//   "schema": {"name": "blkrr.<document>", "version": N} first;
//   times as integer nanoseconds (*_ns) or float seconds (*_s);
//   percentiles keyed p50, p90, p99, p999;
//   64-bit identifiers that may exceed 2^53 (jq and JavaScript round them) as
//   decimal strings.
// A JSON-lines stream (dump -j, snoop -j, convert to .jsonl) is one document:
// its first line is {"type": "header", "schema": ...}, then one
// {"type": "request", ...} per request (request_json.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace blkrr {

struct SchemaId {
  std::string_view name;
  int version;
};

// The documents and their versions; docs/schema/<name without blkrr.>.json
// describes each. A version changes when a key changes meaning or goes away,
// not when one is added.
inline constexpr SchemaId kSchemaRequests{"blkrr.requests", 1};
inline constexpr SchemaId kSchemaTop{"blkrr.top", 1};
inline constexpr SchemaId kSchemaReplay{"blkrr.replay", 1};
inline constexpr SchemaId kSchemaValidate{"blkrr.validate", 1};
inline constexpr SchemaId kSchemaDevices{"blkrr.devices", 1};
inline constexpr SchemaId kSchemaFeatures{"blkrr.features", 1};
inline constexpr SchemaId kSchemaReport{"blkrr.report", 1};  // DIR/report.json
inline constexpr SchemaId kSchemaFleet{"blkrr.fleet", 1};    // DIR/fleet.json

inline nlohmann::json schema_tag(SchemaId id) {
  return {{"name", std::string(id.name)}, {"version", id.version}};
}

// A 64-bit identifier as JSON: a decimal string (always, so that its type
// does not depend on its value).
inline std::string id_string(uint64_t id) {
  return std::to_string(id);
}

}  // namespace blkrr
