// The replay loop: one thread that keeps an absolute schedule from one start
// instant, applies the ordering and conflict policies, hands due requests to
// the engine in batches and reaps completions without ever blocking while a
// request is due.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "replay/buffers.h"
#include "replay/replay_clock.h"
#include "replay/conflict.h"
#include "replay/dependency_gate.h"
#include "replay/engine.h"
#include "replay/failures.h"
#include "replay/ordering.h"
#include "replay/planner.h"
#include "replay/record.h"
#include "replay/record_bus.h"
#include "replay/verify_state.h"

namespace blkrr::replay {

struct Progress {
  uint64_t elapsed_ns = 0;  // since the start instant
  uint64_t due_ns = 0;      // due time of the last request started
  uint64_t completed = 0;
  uint64_t in_flight = 0;
  int64_t last_delay_ns = 0;  // delay of the last completed request
};

struct ReplayConfig {
  OrderMode order = OrderMode::kNone;
  ConflictMode cmode = ConflictMode::kPartial;
  int strong = 1;
  VerifyMode vmode = VerifyMode::kNone;
  uint64_t run_id = 0;
  uint32_t queue_depth = 128;                // requests in flight at most
  uint32_t logical_block = 512;              // for final-verify reads
  uint64_t spin_ns = 100'000;                // sleep until this long before a deadline, then spin
  bool adaptive_spin = true;                 // spin longer when timer wake-ups come late
  uint64_t max_spin_ns = 2'000'000;          // ... but never longer than this
  uint64_t lead_ns = 2'000'000;              // start instant = now + lead (unless start_instant_ns)
  std::optional<uint64_t> start_instant_ns;  // --start-at, on the replay clock
  uint32_t max_waiting = 65536;              // requests parked on the push-back / ordering list
  uint32_t max_batch = 32;                   // operations per submission call
  uint64_t progress_interval_ns = 1'000'000'000;
  std::function<void(const Progress&)> on_progress;  // called from the replay thread
  size_t max_verify_errors_kept = 1000;
  // --timing dependency: requests wait for their parents (DependencyGate);
  // up to max_waiting of them are read ahead and held.
  bool dependency = false;
  bool compensate_reaction = true;  // take the measured reaction time off think times
  // Waiting for a completion with nothing due: poll the engine this long
  // before sleeping in it (a sleeping thread's wake-up costs tens of µs on a
  // VM, more than a fast device's request). 0 = sleep at once.
  uint64_t reap_spin_ns = 0;
  // --stop-on-error: the first failed request ends the replay as a stop
  // signal does (what is in flight completes, the rest is not started).
  bool stop_on_error = false;
  // Asked after a failed request (at most every 100 ms): false when the
  // device has gone away, which ends the replay (Failures::device_gone).
  std::function<bool()> device_present;
};

struct ReplayResult {
  uint64_t start_instant_ns = 0;                                           // on the replay clock
  uint64_t first_submit_ns = 0, last_submit_ns = 0, last_complete_ns = 0;  // after start
  uint64_t completed = 0, errors = 0, dropped = 0, pushed_back = 0, waited = 0, conflicts = 0;
  uint64_t not_started = 0;  // still waiting when interrupted
  uint64_t max_in_flight = 0;
  uint64_t reads_done = 0, writes_done = 0, flushes_done = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
  std::string first_error;  // first failed request, readable
  Failures failures;        // every failed request by errno, the first listed, an early stop
  uint64_t verify_reads = 0, verify_read_errors = 0;  // paranoia + final passes
  uint64_t verify_errors = 0;
  std::vector<VerifyError> verify_error_list;  // the first max_verify_errors_kept
  uint64_t sectors_verified = 0, sectors_unverifiable = 0;
  bool interrupted = false;
  uint64_t thread_cpu_ns = 0;     // CPU time of the replay thread in run()
  uint64_t sleeps = 0;            // timed sleeps before a deadline
  uint64_t wake_late_max_ns = 0;  // the latest a sleep woke after its target
  uint64_t spin_max_ns = 0;       // the longest spin margin used (adaptive)
  uint64_t reap_spins = 0;        // waits for a completion that began with a spin (reap_spin_ns)
  uint64_t reap_spin_hits = 0;    // of which a completion came while spinning (no sleep)
  GateCounters gate;              // --timing dependency
  uint64_t reaction_ns = 0;       // the reaction time estimate at the end
};

class Replayer {
 public:
  static constexpr uint64_t kMaxWaitNs = 50'000'000;  // re-check the stop flag at least this often

  Replayer(const ReplayConfig& cfg, Clock& clock, Engine& engine, BufferPool& buffers,
           PlannedSource& planner, RecordBus& bus);

  // Runs until the load is done or *stop becomes true (then finishes what is
  // in flight and records what never started).
  Result<ReplayResult> run(const std::atomic<bool>* stop);

 private:
  enum class Purpose : uint8_t { kLoad, kParanoia, kFinal };
  struct Slot {
    PlannedRequest req;
    uint8_t* buf = nullptr;
    uint64_t snapshot = 0;
    uint8_t flags = 0;
    Purpose purpose = Purpose::kLoad;
  };
  struct Parked {
    PlannedRequest req;
    uint8_t flags = 0;
  };
  enum class Admit { kStarted, kHeld, kParked, kDropped };

  Status fetch_head();
  Status fetch_dependent();
  Result<Admit> admit_head();
  // The pieces of run(): starts the requests due at `now` while there is
  // room (true when the head is held back); after a stop, the requests not
  // started recorded as such; the result's totals.
  Result<bool> start_due(uint64_t& now, bool& first);
  void record_unstarted();
  void finish_result(uint64_t cpu0);
  void trim_verify_errors();
  void note_failure(const PlannedRequest& r, int32_t result, uint64_t submit_ns);
  Status start(const PlannedRequest& r, uint8_t flags, Purpose purpose);
  void park(const PlannedRequest& r, uint8_t flags);
  void unpark_bookkeeping(const Parked& p);
  Status release_parked();
  Status release_candidates();
  Status rescan_parked();
  void note_completion(const PlannedRequest& done);
  Status flush_batch();
  Status handle(std::vector<IoCompletion>& done);
  // Nothing is due: reaps at least one completion (or returns after
  // kMaxWaitNs), polling up to reap_spin_ns before sleeping in the engine.
  Status wait_completion();
  void emit(const ReplayRecord& rec);
  void emit_unstarted(const PlannedRequest& r, uint8_t flags);
  Status final_verify();
  void report_progress(uint64_t now);
  uint64_t spin_margin() const;
  void learn_wake(uint64_t late_ns);
  Status calibrate_wake();
  uint64_t rel(uint64_t t) const { return t > start_ ? t - start_ : 0; }
  bool has_extent(const PlannedRequest& r) const { return r.sectors > 0 && r.op != Op::kFlush; }

  ReplayConfig cfg_;
  Clock& clock_;
  Engine& engine_;
  BufferPool& buffers_;
  PlannedSource& planner_;
  RecordBus& bus_;
  OrderTracker order_;
  VerifyState verify_;

  uint64_t start_ = 0;
  std::optional<PlannedRequest> head_;
  uint8_t head_flags_ = 0;
  bool src_done_ = false;
  std::list<Parked> parked_;
  std::unordered_map<uint64_t, std::list<Parked>::iterator> parked_at_;  // by seq
  std::vector<uint64_t> candidates_;  // parked requests a completion may release
  ExtentSet parked_ext_, inflight_ext_, scan_ext_;
  std::unordered_map<uint32_t, uint32_t> parked_pids_;
  std::unordered_set<uint32_t> blocked_pids_;
  bool dirty_ = false;  // a parked request may go: rescan the list

  std::vector<Slot> slots_;
  std::vector<uint64_t> free_;
  std::vector<IoOp> batch_;
  std::vector<IoCompletion> done_;
  uint64_t in_flight_ = 0;
  uint64_t next_progress_ = 0, last_due_ = 0;
  int64_t last_delay_ = 0;
  uint64_t wake_late_ = 0;              // decaying maximum of recent wake-up lateness
  uint64_t verify_errors_dropped_ = 0;  // beyond max_verify_errors_kept
  uint64_t presence_checked_ns_ = 0;    // last device_present() call
  ReplayResult res_;
  std::optional<DependencyGate> gate_;  // --timing dependency
};

}  // namespace blkrr::replay
