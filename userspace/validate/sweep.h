// The sweep of the matcher (internal to blkrr_validate): one pass over the
// block-layer requests in issue-time order against a sector-indexed set of
// the replayed requests whose windows are open. match_requests() (matcher.h)
// runs the passes and builds the report from the states they leave.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "core/request.h"
#include "validate/model.h"

namespace blkrr::validate::detail {

struct Range {
  uint64_t s, e;
};

inline uint32_t sectors_of(const Request& b) {
  return (b.bytes + 511) / 512;
}

inline uint64_t b_time(const Request& b) {
  return (b.rec_flags & kRecIssueNotSeen) && b.completed() ? b.complete_ns : b.issue_ns;
}

enum class Mode { kSameOp, kOtherOp, kFlush };

struct RState {
  uint32_t covered = 0;      // sectors served with the right operation
  uint32_t alt_covered = 0;  // sectors served with another operation
  uint32_t pieces = 0;
  uint64_t first_issue = std::numeric_limits<uint64_t>::max();
  uint64_t last_complete = 0;
  uint64_t seen_lo = std::numeric_limits<uint64_t>::max(), seen_hi = 0;
  bool completion_missing = false;  // a serving block request lacks its completion or issue time
  bool larger = false;
  bool alt_op = false;
  Op seen_op = Op::kRead;
};

struct BState {
  uint32_t assigned = 0;
  uint32_t served = 0;
};

class Matcher {
 public:
  Matcher(const std::vector<ReplayedRequest>& r, const std::vector<Request>& b,
          const MatchOptions& o)
      : R_(r), B_(b), o_(o), rs_(r.size()), bs_(b.size()) {}

  void pass(std::vector<uint32_t> rs, std::vector<uint32_t> bs, Mode mode);
  const std::vector<RState>& rstates() const { return rs_; }
  const std::vector<BState>& bstates() const { return bs_; }
  uint64_t merged_block = 0, merged_requests = 0, partly_foreign = 0;

 private:
  struct Active {
    uint32_t r = 0;
    std::vector<Range> cov;
    std::multimap<uint64_t, uint32_t>::iterator it;
  };
  // Pairing by order: every window open from the start to the end.
  uint64_t wstart(const ReplayedRequest& r) const {
    if (o_.by_order) return 0;
    return r.submit_ns > o_.pre_slack_ns ? r.submit_ns - o_.pre_slack_ns : 0;
  }
  uint64_t wend(const ReplayedRequest& r) const {
    if (o_.by_order) return std::numeric_limits<uint64_t>::max();
    uint64_t end = r.complete_ns != kNoTime ? r.complete_ns : r.submit_ns + o_.open_window_ns;
    return end + o_.post_slack_ns;
  }
  // Issued after the submission and completed before the replayer saw the
  // completion, within the clock tolerance.
  bool strictly_inside(const ReplayedRequest& r, const Request& b) const {
    const uint64_t tol = o_.clock_tolerance_ns;
    if (b_time(b) + tol < r.submit_ns) return false;
    if (r.complete_ns == kNoTime) return true;
    return (b.completed() ? b.complete_ns : b_time(b)) <= r.complete_ns + tol;
  }
  void assign(uint32_t bi, Mode mode);

  const std::vector<ReplayedRequest>& R_;
  const std::vector<Request>& B_;
  const MatchOptions& o_;
  std::vector<RState> rs_;
  std::vector<BState> bs_;
  // Open windows: pool slots indexed by start sector.
  std::vector<Active> pool_;
  std::vector<uint32_t> free_;
  std::multimap<uint64_t, uint32_t> open_;
  uint64_t max_len_ = 0;
  // Scratch.
  std::vector<uint32_t> cands_, served_;
  std::vector<Range> bcov_, tmp_, tmp2_;
};

}  // namespace blkrr::validate::detail
