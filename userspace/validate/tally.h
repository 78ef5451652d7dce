// The report of the matcher (internal to blkrr_validate), built from each
// replayed request and block-layer request once the sweeps resolved it, in
// arrival order: counts, capped lists, latency distributions (constant
// memory past Distribution's exact limit), foreign I/O per process, the
// replayer's own probe, and at the end the verdict. See docs/validate.md.
#pragma once

#include <map>
#include <string>
#include <utility>

#include "core/distribution.h"
#include "validate/validation.h"
#include "validate/sweep.h"

namespace blkrr::validate::detail {

// What a resolved block-layer request was.
enum class BlockClass : uint8_t {
  kServed,    // served replayed requests
  kOwnProbe,  // the replayer's own I/O before its first request
  kForeign,   // served no replayed request
  kLate,      // came after the window closed on its time: not matched
};

class Tally {
 public:
  explicit Tally(const MatchOptions& o) { rep_.options = o; }
  void request(const ReplayedRequest& r, const RState& st);
  void block(const Block& b, BlockClass c, std::string_view comm);
  // The report, with the capture's losses and the sweeps' merge counters.
  Report finish(const Losses& losses, uint64_t merged_block, uint64_t merged_requests,
                uint64_t partly_foreign, uint64_t late_requests);

 private:
  void covered(const ReplayedRequest& r, const RState& st);
  void not_covered(const ReplayedRequest& r, const RState& st);
  void foreign(const Block& b, std::string_view comm);
  void own_probe(const Block& b, std::string_view comm);
  void latency_summaries();
  void verdict();

  Report rep_;
  Distribution replay_, block_, overhead_;  // µs
  uint64_t completion_not_seen_ = 0, completion_not_seen_served_ = 0, issue_not_seen_ = 0;
  std::map<std::pair<uint32_t, std::string>, ForeignProcess> by_proc_;
};

}  // namespace blkrr::validate::detail
