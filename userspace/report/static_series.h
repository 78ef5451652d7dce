// Working-set and seek-distance plots of the static section; see
// static_report.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/context.h"
#include "report/dataset.h"

namespace blkrr::report {

// Window lengths of the working-set and seek-distance analyses: 1, 6, 60
// and 600 s for a span of 10 minutes or more; a shorter span scales the
// ladder down by powers of ten until its longest window fits the span (an
// 8 s trace: 10 ms, 60 ms, 600 ms and 6 s), to 1 ms windows at the least.
std::vector<uint64_t> static_windows_ns(uint64_t span_ns);
// A window's name in files, plots and report.json: "600s", "6s", "600ms", "10ms".
std::string window_tag(uint64_t ns);

// The longest set-point span of the inputs, in seconds.
double span_s(const std::vector<const Dataset*>& data);

// Working set per 1/6/60/600 s window and cumulative, linear and log scale.
Status working_set_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                         nlohmann::json& js);
// Seek distance summed and averaged per window, and the turns (backward seeks).
Status seek_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                  nlohmann::json& js);

}  // namespace blkrr::report
