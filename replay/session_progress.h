// The replay's live progress line on stderr.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "converters/source.h"
#include "core/result.h"
#include "replay/replayer.h"
#include "replay/schedule.h"

namespace blkrr::replay {

// How much load a replay has in all: its requests and the replay time from
// the first due time to the last.
struct LoadSize {
  uint64_t requests = 0;
  uint64_t span_ns = 0;  // 0 at full speed (no due times)
};

// Counts the load on a thread of its own at idle priority (SCHED_IDLE: it
// runs only when a CPU has nothing else to do, so the replay never waits for
// it), reading the inputs a second time. For an open-ended replay (no
// --start, no --duration), whose total the replay cannot know before its end.
class LoadCounter {
 public:
  using Opener = std::function<Result<std::unique_ptr<RequestSource>>()>;
  // `idle` false: at the thread's normal priority (tests, which must not wait
  // for an idle CPU on a busy machine).
  LoadCounter(Opener open, const Schedule& schedule, bool idle = true);
  ~LoadCounter();
  LoadCounter(const LoadCounter&) = delete;
  LoadCounter& operator=(const LoadCounter&) = delete;
  // Once counted (nullopt before, or when the inputs could not be read again).
  std::optional<LoadSize> size() const;
  // Waits for the count (tests).
  std::optional<LoadSize> wait();

 private:
  void run(const Opener& open, const Schedule& schedule, bool idle);
  std::atomic<bool> stop_{false}, done_{false}, ok_{false};
  LoadSize size_;
  std::thread thread_;
};

// One progress line (without "\r"): position in the load with its total and
// ETA, IOPS since the last line, delay, requests in flight, done of total.
// `window_ns`: the replay window's span when --duration set it; `total`: the
// counted load otherwise.
std::string progress_line(const Progress& p, uint64_t window_ns, std::optional<LoadSize> total,
                          double iops);

// The line on stderr; last_* carry the previous line's numbers.
void print_progress(const Progress& p, uint64_t window_ns, std::optional<LoadSize> total,
                    uint64_t& last_completed, uint64_t& last_elapsed);

// The last progress line: 100 % when the replay ran to its end.
void print_final_progress(const Result<ReplayResult>& res);

}  // namespace blkrr::replay
