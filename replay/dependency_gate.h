// --timing dependency: holds the requests read ahead of the replay until
// their parents completed on the lab device, then hands them out in due
// order (the latest parent's completion plus the think time, less the
// replayer's own measured reaction time). Independent requests keep their
// recorded due time. Memory: the requests it holds (bounded by the caller)
// and the completion times of the last kRecentDone requests.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "replay/record.h"

namespace blkrr::replay {

struct GateCounters {
  uint64_t dependent = 0;         // requests timed from their parents' completions
  uint64_t parents_unknown = 0;   // parents not replayed (before the window, skipped): kept time
  uint64_t reaction_samples = 0;  // dependent requests whose lateness was measured
  uint64_t reaction_sum_ns = 0;   // their summed lateness (submit - aimed due)
  uint64_t reaction_max_ns = 0;   // the worst
  uint64_t compensated_ns = 0;    // think time taken off in all (compensation)
  uint64_t max_held = 0;          // requests held at most
};

class DependencyGate {
 public:
  // `compensate`: subtract the measured reaction time from think times.
  explicit DependencyGate(bool compensate) : compensate_(compensate) {}

  // The next request of the load (seq order). `now` is after the start instant.
  void add(const PlannedRequest& r, uint8_t flags, uint64_t now);
  // A load request completed (or was dropped) at `t` after the start instant.
  void on_done(uint64_t seq, uint64_t t);
  // A request handed out but not started (a later one became due first).
  void put_back(const PlannedRequest& r, uint8_t flags);

  bool ready() const { return !ready_.empty(); }
  uint64_t next_due() const { return ready_.top().req.due_ns; }
  PlannedRequest pop(uint8_t& flags);
  size_t held() const { return ready_.size() + waiting_.size(); }
  // Every request still held, for the records of an interrupted replay.
  void drain(const std::function<void(const PlannedRequest&, uint8_t)>& fn);

  // How late a request timed from its parents was submitted (its due time
  // already had the compensation taken off).
  void learn_reaction(uint64_t late_ns);
  uint64_t reaction_ns() const { return reaction_ns_; }
  const GateCounters& counters() const { return c_; }

 private:
  struct Held {
    PlannedRequest req;
    uint8_t flags = 0;
    uint32_t remaining = 0;  // parents not completed yet
    uint64_t ready_ns = 0;   // latest completion of a parent so far
    bool known = false;      // a parent completed in this replay
  };
  struct Later {
    bool operator()(const Held& a, const Held& b) const {
      if (a.req.due_ns != b.req.due_ns) return a.req.due_ns > b.req.due_ns;
      return a.req.seq > b.req.seq;
    }
  };
  static constexpr size_t kRecentDone = 1u << 16;

  void make_ready(Held h);

  bool compensate_;
  bool have_first_ = false;
  uint64_t first_seq_ = 0;  // the first request held: parents before it were never replayed
  uint64_t reaction_ns_ = 0;
  std::priority_queue<Held, std::vector<Held>, Later> ready_;
  std::unordered_map<uint64_t, Held> waiting_;                    // by seq
  std::unordered_map<uint64_t, std::vector<uint64_t>> children_;  // parent seq -> waiting seqs
  std::unordered_set<uint64_t> outstanding_;                      // held or in flight
  std::unordered_map<uint64_t, uint64_t> done_at_;                // seq -> completion
  std::deque<uint64_t> done_order_;                               // for forgetting done_at_
  GateCounters c_;
};

}  // namespace blkrr::replay
