// The sweep of the matcher (internal to blkrr_validate): one pass over the
// block-layer requests in issue-time order against a sector-indexed set of
// the replayed requests whose windows are open. Incremental: requests and
// block records are added in any order and resolved up to a time w once
// everything before w has been added (advance(w)); what a pass resolves goes
// to its callbacks at once and leaves the sweep. WindowMatcher
// (window_matcher.h) runs the passes and builds the report.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "core/request.h"
#include "validate/validation.h"
#include "validate/name_table.h"

namespace blkrr::validate::detail {

struct Range {
  uint64_t s, e;
};

// A block-layer request as the matcher holds it: 48 bytes, the task name in
// a NameTable. `count` > 1: the same record arrived `count` times in a row
// (arrival indexes seq .. seq + count - 1), held once (see Sweep::add).
struct Block {
  uint64_t seq = 0;  // arrival order (0 = first)
  uint64_t issue_ns = 0;
  uint64_t complete_ns = kNoTime;  // kNoTime: the completion was not seen
  uint64_t sector = 0;
  uint32_t bytes = 0;
  uint32_t pid = 0;   // process id (tgid, else the thread id)
  uint16_t comm = 0;  // index into the NameTable
  Op op = Op::kRead;
  uint8_t rec_flags = 0;
  uint32_t count = 1;
  bool completed() const { return complete_ns != kNoTime; }
};
static_assert(sizeof(Block) == 48);

// A replayed request with its arrival order (0 = first): 48 bytes. `count`
// > 1: `count` requests equal but for their ids (r.id .. r.id + count - 1)
// arrived in a row (seq .. seq + count - 1), held once (see Sweep::add).
struct RItem {
  ReplayedRequest r;
  uint64_t seq : 48 = 0;
  uint64_t count : 16 = 1;
};
static_assert(sizeof(RItem) == 48);
constexpr uint64_t kMaxRun = 0xFFFF;  // longest run one RItem holds

inline uint32_t sectors_of(const Block& b) {
  return (b.bytes + 511) / 512;
}

inline uint64_t b_time(const Block& b) {
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

class Sweep {
 public:
  using RequestDone = std::function<void(const RItem&, const RState&)>;
  using BlockDone = std::function<void(const Block&, const BState&)>;
  // `closed` gets each request when its window closes, `assigned` each block
  // request once it was given to the requests it serves (or to none).
  Sweep(Mode mode, const MatchOptions& o, RequestDone closed, BlockDone assigned)
      : mode_(mode), o_(o), closed_(std::move(closed)), assigned_(std::move(assigned)) {}

  // The caller adds only requests whose window starts at or after done() and
  // blocks whose time is at or after done(): anything earlier is too late.
  // A record equal to the one added just before it (a request: all but its
  // id, which follows the other's; the arrival index follows too) is held
  // once with a count and resolved as the records one by one: a load that
  // repeats one request, submitted and reaped in one batch (one submission
  // and one completion time), takes the memory of one.
  void add(const RItem& r);
  void add(const Block& b);
  // Resolves everything before w: the blocks of time < w, then the windows
  // that end before w. Everything before w must have been added.
  void advance(uint64_t w);
  // Resolves everything (the end of the input).
  void finish();
  // Everything before this instant is resolved.
  uint64_t done() const { return done_; }
  // The earliest window start of the requests not closed yet (max if none).
  uint64_t first_unclosed_start() const;
  // The earliest time of a record held (a window start or a block's time;
  // max if none).
  uint64_t first_held() const;
  // Records held (a run of equal ones counts once).
  size_t held_requests() const { return pending_r_.size() + open_.size() + run_r_.has_value(); }
  size_t held_blocks() const { return pending_b_.size() + run_b_.has_value(); }
  // Of those, the requests whose windows are open (the others wait).
  size_t open_requests() const { return open_.size(); }

  uint64_t wstart(const ReplayedRequest& r) const {
    if (o_.by_order) return 0;  // pairing by order: every window open from the start to the end
    return r.submit_ns > o_.pre_slack_ns ? r.submit_ns - o_.pre_slack_ns : 0;
  }
  uint64_t wend(const ReplayedRequest& r) const {
    if (o_.by_order) return std::numeric_limits<uint64_t>::max();
    uint64_t end = r.complete_ns != kNoTime ? r.complete_ns : r.submit_ns + o_.open_window_ns;
    return end + o_.post_slack_ns;
  }

  uint64_t merged_block = 0, merged_requests = 0, partly_foreign = 0;
  // Records held as a count on an equal one added just before them.
  uint64_t identical_requests = 0, identical_blocks = 0;

 private:
  struct Active {
    RItem item;
    RState st;
    std::vector<Range> cov;
    std::multimap<uint64_t, uint32_t>::iterator it;
    std::multiset<uint64_t>::iterator start_it;  // its window start in starts_
  };
  // Issued after the submission and completed before the replayer saw the
  // completion, within the clock tolerance.
  bool strictly_inside(const ReplayedRequest& r, const Block& b) const {
    const uint64_t tol = o_.clock_tolerance_ns;
    if (b_time(b) + tol < r.submit_ns) return false;
    if (r.complete_ns == kNoTime) return true;
    return (b.completed() ? b.complete_ns : b_time(b)) <= r.complete_ns + tol;
  }
  template <class T>
  void gather(std::optional<T>& run, const T& x, uint64_t& identical);
  void push(const RItem& r);
  void push(const Block& b);
  void end_runs();                // pushes the runs being gathered
  void open_through(uint64_t t);  // opens the windows starting at or before t
  void open_one(const RItem& item);
  Block pop_block();
  void close_before(uint64_t t);  // closes the windows ending before t
  void close(uint32_t slot);
  void assign(const Block& b);
  void assign_flush(const Block& b, BState& bs);
  void collect_candidates(const Block& b);
  bool r_before(const RItem& x, const RItem& y) const;  // heap order: later window start first

  Mode mode_;
  const MatchOptions o_;
  RequestDone closed_;
  BlockDone assigned_;
  uint64_t done_ = 0;
  // Heaps (earliest window start / block time on top) in deques: they grow
  // and shrink by small blocks, without the 2x of a vector's reallocation.
  std::deque<RItem> pending_r_;
  std::deque<Block> pending_b_;
  // The runs of equal records being gathered (not yet in the heaps).
  std::optional<RItem> run_r_;
  std::optional<Block> run_b_;
  // Open windows: pool slots indexed by start sector.
  std::vector<Active> pool_;
  std::vector<uint32_t> free_;
  std::multimap<uint64_t, uint32_t> open_;
  std::multiset<uint64_t> starts_;              // window starts of the open requests
  using Close = std::pair<uint64_t, uint32_t>;  // window end, pool slot
  std::vector<Close> closing_;                  // heap: earliest end on top
  uint64_t max_len_ = 0;
  // Scratch.
  std::vector<uint32_t> cands_, served_;
  std::vector<Range> bcov_, tmp_, tmp2_;
};

}  // namespace blkrr::validate::detail
