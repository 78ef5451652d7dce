// The static section of a report: analyses of where and when a load or trace
// touches the disk (no replay results needed).
#pragma once

#include <vector>

#include "report/context.h"
#include "report/dataset.h"

namespace blkrr::report {

Status add_static(Context& ctx, const std::vector<const Dataset*>& data);

}  // namespace blkrr::report
