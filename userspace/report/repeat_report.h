// The spread of repeated replays on the compare page (report/repeat_spread.h):
// a table per timing, data/cmp-repeat-spread.csv and report.json's
// fidelity.repeats; the executive summary names the timing that reproduced
// the original best.
#pragma once

#include <vector>

#include "report/context.h"
#include "report/dataset.h"
#include "report/repeat_spread.h"

namespace blkrr::report {

// The replays grouped by timing (replays that do not state one, such as
// blkreplay results, form the group "unstated") against the original.
std::vector<TimingSpread> replay_spreads(const Context& ctx, const Dataset& orig,
                                         const std::vector<const Dataset*>& replays);

Status add_repeat_spread(Context& ctx, Section& sec, const Dataset& orig,
                         const std::vector<const Dataset*>& replays, nlohmann::json& js);

}  // namespace blkrr::report
