// The validation report as JSON (for summaries) and as a readable block (for
// stderr).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "validate/validation.h"

namespace blkrr::validate {

nlohmann::json to_json(const Report& r);
// Several lines ending in '\n'; at most `list_lines` entries of each list.
std::string format_text(const Report& r, size_t list_lines = 10);

}  // namespace blkrr::validate
