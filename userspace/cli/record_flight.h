// The flight recorder (record --ring): the last TIME of requests in memory,
// written to a new file on SIGUSR1 or when a trigger fires (a request slower
// than --trigger-latency, also one still in flight; a device busier than
// --trigger-util over a second), with --post TIME after a trigger, at most
// one trigger per --holdoff. A dump is written by its own thread while the
// capture goes on. docs/recording.md describes it for users.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "cli/record_output.h"
#include "core/flight_ring.h"
#include "core/signals.h"

namespace blkrr::cli {

struct FlightPlan {
  uint64_t ring_ns = 0;                  // 0: no flight recorder
  uint64_t ring_bytes = 256ull << 20;    // --ring-memory
  uint64_t post_ns = 10'000'000'000ull;  // --post
  uint64_t holdoff_ns = 60'000'000'000ull;
  uint64_t trigger_latency_ns = 0;  // 0: off
  double trigger_util = 0;          // percent; 0: off
};

// One window to write: why, and the requests issued in [start_ns, end_ns).
struct DumpRequest {
  std::string trigger;   // "signal", "latency", "util"
  std::string fired_by;  // the request or the second that fired it
  uint64_t fire_ns = 0, start_ns = 0, end_ns = 0;
};

// Writes dumps one after the other in its own thread.
class DumpWriter {
 public:
  struct Job {
    std::string path;
    TraceHeader header;
    RingSnapshot window;
    Counters counters;
  };
  DumpWriter();
  ~DumpWriter();
  void submit(Job job);
  // Waits until every job submitted is written.
  void drain();
  // The first write error, if any (the file, the error).
  std::optional<Error> error();
  uint64_t written() const { return written_.load(); }
  uint64_t bytes() const { return bytes_.load(); }
  std::string last_path();

 private:
  void run();
  Status write(const Job& job);
  std::mutex mu_;
  std::condition_variable cv_, idle_;
  std::deque<Job> jobs_;
  bool stop_ = false, busy_ = false;
  std::optional<Error> err_;
  std::string last_;
  std::atomic<uint64_t> written_{0}, bytes_{0};
  std::thread thread_;
};

class FlightRecorder : public RecordSink {
 public:
  // hold_ns: how long the recording holds a record before write() (its disk time).
  // min_free: a window is not written while the folder's file system has
  // less free (--min-free; counted, said on standard error).
  FlightRecorder(const FlightPlan& plan, const std::string& stem, const TraceHeader& header,
                 uint64_t t0, uint64_t hold_ns, uint64_t min_free);
  Status received(const Request& r) override;
  Status write(const Request& r) override;
  Status tick(uint64_t now, const Capture& cap, const CountersNow& counters) override;
  Status finish(const Counters& cumulative) override;
  void abandon(const Counters& cumulative) override;
  uint64_t records_written() const override { return records_; }
  uint64_t bytes_written() const override { return writer_.bytes(); }
  std::string summary_target() const override;
  OutputProgress progress() const override;
  std::string kept_after_error() const override;

 private:
  void fire(const std::string& trigger, uint64_t at_ns, const std::string& fired_by);
  void check_inflight(uint64_t now, const Capture& cap);
  void check_util(uint64_t now);
  Status start_ready(uint64_t now, const Capture& cap, const CountersNow& counters);
  Status submit(const DumpRequest& d, const Counters& counters);
  std::string next_path(uint64_t real_ns);

  FlightPlan plan_;
  std::string stem_;
  TraceHeader header_;
  uint64_t t0_, hold_ns_, min_free_, skipped_ = 0;
  FlightRing ring_;
  Usr1Requests usr1_;
  std::deque<DumpRequest> pending_;
  CloseView view_;
  std::map<DevT, std::map<uint64_t, uint64_t>> busy_;  // disk time by second since t0
  uint64_t last_fire_ = 0, last_hung_issue_ = 0, held_off_ = 0, fired_ = 0;
  uint64_t records_ = 0, last_seal_ = 0, next_seq_ = 0;
  DumpWriter writer_;
};

}  // namespace blkrr::cli
