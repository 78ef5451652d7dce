// Dependencies between the requests of a recorded trace, inferred from issue
// and completion times and thread ids: which earlier completions released
// each request (its parents) and how long after the latest of them it was
// issued (its think time). Streaming and bounded: requests go in in issue
// order and each one's dependencies come out at once, from a sliding window
// of recent completions (docs/replay.md, "Dependency timing").
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/request.h"

namespace blkrr {

struct DependencyOptions {
  // A thread's own latest completion is a parent when it came at most this
  // long before the issue (a synchronous caller and its think time).
  uint64_t thread_window_ns = 1'000'000;
  // Other threads' completions are parents when they came at most this long
  // before the issue (only for a request without a parent of its own thread).
  uint64_t cross_window_ns = 100'000;
  // Issue and completion clocks may disagree by this much (blktrace's
  // per-CPU clocks): a completion up to this long after an issue counts as
  // before it.
  uint64_t skew_ns = 0;
  // A request contiguous with its thread's previous one, issued within this
  // time of it while that one was still in flight, is its sibling (one system
  // call split into several requests): same parents.
  uint64_t sibling_ns = 50'000;
  uint32_t max_fanin = 4;  // parents at most (1..kMaxParents)
  // Completions remembered at most (bounds memory on any trace; the oldest
  // are forgotten first and counted).
  uint32_t max_tracked = 1u << 18;
  // Think time: kWork takes, of a dependent request's gap (issue - the event
  // that released it), at most the thread's own work: the think_quantile
  // (percent) of its last kThinkSamples gaps; the rest of a gap is the
  // recording host's wake-up latency, which a replay pays on its own.
  // A tight thread, whose low quantile is at least think_tight percent of its
  // median gap, is cut at its median instead: its gaps are mostly its own
  // work (a timer sleep that overshoots, a computation), which a wake-up of a
  // few microseconds does not explain; 0 cuts every thread at the quantile.
  // kRecorded keeps the whole gap.
  enum class Think : uint8_t { kWork, kRecorded } think = Think::kWork;
  uint32_t think_quantile = 10;
  uint32_t think_tight = 75;
  // Threads with several requests in flight (libaio, io_uring): kSlots
  // replays them by queue depth (kind slot: a request goes when one of its
  // thread's `slots` frees); kCompletion chains each to the thread's latest
  // completion before it.
  enum class Async : uint8_t { kSlots, kCompletion } async = Async::kSlots;
};

std::string_view think_rule_name(DependencyOptions::Think t);
std::string_view async_rule_name(DependencyOptions::Async a);
// A thread's depth: the most requests it had in flight (the new one included,
// split pieces of one call counted once) at any of its last kDepthSamples
// issues. Its think quantile: over its last kThinkSamples dependent gaps.
// Whether it is tight: over its last kTightSamples gaps (at least
// kTightMin), judged again every kTightEvery gaps.
constexpr uint32_t kDepthSamples = 64, kThinkSamples = 32;
constexpr uint32_t kTightSamples = 256, kTightMin = 64, kTightEvery = 16;
constexpr uint32_t kMaxSlots = 1024;  // in-flight requests of one thread tracked at most

// Why a request has the parents it has.
enum class DepKind : uint8_t {
  kIndependent = 0,  // no completion explains it: keeps its timestamp
  kThread = 1,       // its thread's latest completion released it
  kCross = 2,        // completions of other threads just before it
  kSibling = 3,      // split from the same call as its thread's previous request
  kSlot = 4,         // async thread: goes when one of its thread's `slots` frees
};
std::string_view dep_kind_name(DepKind k);

constexpr uint32_t kMaxParents = 4;

struct Dependency {
  uint64_t seq = 0;  // the request's index in issue order
  DepKind kind = DepKind::kIndependent;
  uint8_t nparents = 0;
  std::array<uint64_t, kMaxParents> parents{};  // seq of each parent, oldest first
  uint64_t think_ns = 0;  // issue - the latest parent's completion (0 when independent)
  uint32_t depth = 0;     // place in its chain: 0 when independent, else 1 + the deepest parent's
  uint32_t slots = 0;     // kSlot: its thread's depth (requests in flight at most), else 0
  bool slot() const { return kind == DepKind::kSlot; }
  // Keeps its recorded time: no parent and no slot to wait for.
  bool independent() const { return nparents == 0 && !slot(); }
};

struct DependencyCounters {
  uint64_t requests = 0;
  uint64_t independent = 0, thread = 0, cross = 0, sibling = 0, slot = 0;
  uint64_t transitive_dropped = 0;  // candidate parents implied by another candidate
  uint64_t fanin_capped = 0;        // requests that had more candidates than max_fanin
  uint64_t skewed = 0;              // parents that completed after the issue, within skew
  uint64_t forgotten = 0;           // completions dropped to stay within max_tracked
  uint64_t no_completion = 0;       // requests without a completion time (never parents)
  uint64_t think_cut_ns = 0;        // gap beyond the threads' work, taken off (Think::kWork)
  uint64_t think_tight = 0;         // requests of tight threads, cut at their median
};

// Adds one request of kind `k` to `c` (requests and the kind's count).
void count_kind(DependencyCounters& c, DepKind k);

class DependencyInferrer {
 public:
  explicit DependencyInferrer(const DependencyOptions& o = {});

  // The next request in issue order (issue times never go back; a request
  // issued earlier than the previous one is taken at the previous one's
  // time). `seq` must grow by one per call.
  Dependency add(const Request& r, uint64_t seq);
  const DependencyCounters& counters() const { return c_; }
  size_t tracked() const { return by_complete_.size(); }
  const DependencyOptions& options() const { return o_; }

 private:
  struct Entry {
    uint64_t seq, issue_ns, complete_ns;
    uint32_t tid;
    uint32_t depth;
    uint8_t nparents;
    std::array<uint64_t, kMaxParents> parents;
  };
  struct ThreadState {
    uint64_t last_seq = ~0ull, last_issue_ns = 0, last_end_sector = 0, last_complete_ns = kNoTime;
    Dependency last_dep;  // what the previous request got (for siblings)
    // min-heap: (completion, seq) of its requests still in flight
    std::vector<std::pair<uint64_t, uint64_t>> inflight;
    uint64_t last_done_ns = 0;       // its latest completion at or before the last issue
    uint64_t last_done_seq = ~0ull;  // ... and its request
    uint32_t ndepth = 0, ngaps = 0;  // samples taken (rings below)
    std::array<uint32_t, kDepthSamples> depths{};
    std::array<uint64_t, kThinkSamples> gaps{};
    uint32_t nlong = 0;  // gaps taken into long_gaps (in microseconds, saturated)
    bool tight = false;
    std::array<uint32_t, kTightSamples> long_gaps{};
    void judge(uint32_t quantile, uint32_t tight_pct);  // sets tight
    uint32_t settle(uint64_t issue_ns);  // drops completions up to issue_ns: the count in flight
    uint32_t depth(uint32_t count);      // records a count, returns the thread's depth
    // Records a gap, returns its work part (cut at the median when tight).
    uint64_t work(uint64_t gap, uint32_t quantile, uint32_t tight_pct);
    bool quick(uint64_t window) const;  // its typical gap is at most half the window
  };
  using CompleteMap = std::multimap<uint64_t, Entry>;  // by completion time

  void forget_oldest();
  void prune(uint64_t issue_ns);
  const Entry* thread_parent(uint32_t tid, uint64_t issue_ns) const;
  void cross_parents(uint32_t tid, uint64_t issue_ns, Dependency& d);
  bool implied(const Entry& e, const Dependency& d) const;
  void remember(const Request& r, uint64_t seq, uint64_t issue_ns, const Dependency& d);
  void count(const Dependency& d);
  bool slot_parent(ThreadState& ts, uint64_t issue_ns, uint32_t count, Dependency& d);
  bool late_thread_parent(ThreadState& ts, uint64_t issue_ns, Dependency& d) const;
  void set_think(ThreadState& ts, uint64_t gap, Dependency& d);
  void parent_times(ThreadState& ts, uint64_t issue, bool sibling, Dependency& d);

  DependencyOptions o_;
  DependencyCounters c_;
  uint64_t last_issue_ = 0;
  CompleteMap by_complete_;
  std::unordered_map<uint64_t, CompleteMap::iterator> by_seq_;
  std::unordered_map<uint32_t, ThreadState> threads_;
  std::unordered_map<uint32_t, std::multimap<uint64_t, uint64_t>> thread_done_;  // tid: c -> seq
};

}  // namespace blkrr
