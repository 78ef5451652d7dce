// The report's index.html: every plot (embedded as data: URIs, so the file
// stands alone) with the summary tables of its section.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "report/context.h"
#include "report/dataset.h"
#include "report/plot.h"

namespace blkrr::report {

std::string base64(const std::string& bytes);

// The executive summary block (also recorded in the JSON summary under
// "summary"): what was measured, the numbers that matter, the replay's
// fidelity (with `compare`: inputs[0] is the original) and what looks wrong.
// The inputs' Timings come from `ctx`.
Result<std::string> executive_summary(const Context& ctx, const std::vector<const Dataset*>& inputs,
                                      bool compare, nlohmann::json& js);

// How the numbers were computed (memory, sorted passes, exact or histogram
// percentiles), for the page and report.json.
std::string method_note(const Context& ctx, const std::vector<const Dataset*>& inputs);

Status write_html(const Context& ctx, const std::vector<const Dataset*>& inputs,
                  const RenderResult& render, const std::string& command_line,
                  const std::string& summary);

}  // namespace blkrr::report
