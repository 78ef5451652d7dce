// The report's "Dependencies" section: for each trace with completion times,
// the dependencies inferred between its requests (core/dependency.h): the
// share that depends on another, kinds, fan-in, think times and the chains
// of its busiest threads. Read from the input file again (issue order).
#pragma once

#include <vector>

#include "core/result.h"
#include "report/context.h"
#include "report/dataset.h"

namespace blkrr::report {

Status add_dependencies(Context& ctx, const std::vector<const Dataset*>& data);

}  // namespace blkrr::report
