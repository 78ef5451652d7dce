// --timing dependency: holds the requests read ahead of the replay until
// their parents completed on the lab device, then hands them out in due
// order (the latest parent's completion plus the think time, less the
// replayer's own measured reaction time). Requests of kind slot (an async
// thread's) wait instead for one of their thread's slots: each goes when its
// thread has fewer than `slots` requests out, at the thread's latest event
// (its previous request's due time or a completion) plus the think time.
// An independent request of a thread already seen whose recent requests
// were mostly chained (parents or a slot) keeps its recorded gap after its
// thread's previous request (that one's due time in this replay plus the
// difference of their recorded times): a pause of a closed loop, on the
// thread's clock. In a mostly open-loop thread it keeps its recorded time. A thread's slot and
// independent requests go in its order, after its earlier requests were handed out. Memory: the
// requests it holds (bounded by the caller), the completion times of the last kRecentDone requests
// and a few words per thread.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/dependency.h"
#include "replay/record.h"

namespace blkrr::replay {

struct GateCounters {
  uint64_t dependent = 0;         // requests timed from their parents' completions or a slot
  uint64_t slot = 0;              // of which released by a free slot of their thread
  uint64_t paced = 0;             // independent requests timed from their thread's previous one
  uint64_t parents_unknown = 0;   // parents not replayed (before the window, skipped): kept time
  uint64_t reaction_samples = 0;  // dependent requests whose lateness was measured
  uint64_t reaction_sum_ns = 0;   // their summed lateness (submit - aimed due)
  uint64_t reaction_max_ns = 0;   // the worst
  uint64_t compensated_ns = 0;    // think time taken off in all (compensation)
  uint64_t max_held = 0;          // requests held at most
};

// Whether the replayer's measured reaction time is taken off think times.
// kAuto: only under --dep-think recorded, whose think times hold the
// recording host's reaction (its wake-up and return to the application) that
// the replay pays again with its own. Under --dep-think work the think time is
// the application's work (the recording's reaction cut off): the replay adds
// its reaction where the application adds its own, and taking it off too would
// make each request early by as much.
enum class Compensation : uint8_t { kAuto, kOn, kOff };
bool compensates(Compensation c, DependencyOptions::Think rule);

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
  size_t held() const { return ready_.size() + waiting_.size() + queued_; }
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
    uint64_t rec_due = 0;    // its recorded due time (before the gate's)
  };
  struct Later {
    bool operator()(const Held& a, const Held& b) const {
      if (a.req.due_ns != b.req.due_ns) return a.req.due_ns > b.req.due_ns;
      return a.req.seq > b.req.seq;
    }
  };
  static constexpr size_t kRecentDone = 1u << 16;
  static constexpr size_t kMaxThreads = 4096;  // idle threads beyond are forgotten

  // One thread of the load: its requests out (handed out, not done) and
  // those waiting for parents, its latest event (a due time or a
  // completion), its last handed-out request's due and recorded due, and
  // its slot and independent requests waiting their turn, in order.
  struct Thread {
    uint32_t active = 0;
    uint32_t chained = 0, open = 0;  // recent requests with parents or a slot, and without
    std::set<uint64_t> pending;      // seqs of its requests waiting for parents
    bool seen = false;
    uint64_t last_ns = 0, last_due = 0, last_rec_due = 0;
    std::deque<Held> queue;
  };

  void make_ready(Held h);
  void due_after(Held& h, uint64_t event_ns);
  void note_due(Thread& t, const Held& h);
  void release_queue(uint32_t pid);
  void time_queued(Thread& t, Held& h);

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
  std::unordered_map<uint32_t, Thread> threads_;                  // by pid
  std::unordered_map<uint64_t, uint32_t> out_;                    // seq -> pid, until done
  size_t queued_ = 0;
  GateCounters c_;
};

}  // namespace blkrr::replay
