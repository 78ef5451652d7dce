// Working-set and seek-distance plots of the static section; see
// static_report.h.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "report/context.h"
#include "report/dataset.h"

namespace blkrr::report {

// Window lengths of the working-set and seek-distance analyses, seconds.
inline constexpr uint64_t kStaticWindows[] = {1, 6, 60, 600};

// The longest set-point span of the inputs, in seconds.
double span_s(const std::vector<const Dataset*>& data);

// Working set per 1/6/60/600 s window and cumulative, linear and log scale.
Status working_set_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                         nlohmann::json& js);
// Seek distance summed and averaged per window, and the turns (backward seeks).
Status seek_plots(Context& ctx, Section& sec, const std::vector<const Dataset*>& data,
                  nlohmann::json& js);

}  // namespace blkrr::report
