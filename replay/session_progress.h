// The replay's live progress line on stderr.
#pragma once

#include <cstdint>

#include "core/result.h"
#include "replay/replayer.h"

namespace blkrr::replay {

// One progress line: position in the load (and ETA), IOPS since the last line,
// delay, requests in flight. last_* carry the previous line's numbers.
void print_progress(const Progress& p, uint64_t window_ns, uint64_t& last_completed,
                    uint64_t& last_elapsed);

// The last progress line: 100 % when the replay ran to its end.
void print_final_progress(const Result<ReplayResult>& res);

}  // namespace blkrr::replay
