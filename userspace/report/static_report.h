// The static section of a report: analyses of where and when a load or trace
// touches the disk (no replay results needed).
#pragma once

#include <vector>

#include "report/context.h"
#include "report/dataset.h"

namespace blkrr::report {

// Window lengths of the working-set and seek-distance analyses, seconds.
inline constexpr uint64_t kStaticWindows[] = {1, 6, 60, 600};

Status add_static(Context& ctx, const std::vector<const Dataset*>& data);

}  // namespace blkrr::report
