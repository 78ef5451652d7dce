// A JSON Schema validator for the subset docs/schema/*.json use: type (one
// or a list), required, properties, additionalProperties (false or a schema),
// items, enum, const, minimum, and local $ref to "#/$defs/NAME". Annotations
// ($schema, $id, title, description, $comment, $defs) are skipped; any other
// keyword is reported as unsupported, so a schema cannot ask for a check this
// validator would silently skip. (nlohmann_json has no validator; Debian's
// python3-jsonschema would add a Python dependency to the unit tests for a
// few hundred lines: docs/json.md.)
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace blkrr::testing {

// Every violation of `schema` by `doc`, as "PATH: what" ("/rows/0/pid: is a
// string, expected integer"); empty when `doc` is valid.
std::vector<std::string> schema_violations(const nlohmann::json& schema, const nlohmann::json& doc);

}  // namespace blkrr::testing
