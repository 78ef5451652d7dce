// Hands completion records from the replay thread to the sinks in batches,
// on a background thread, so that writing results does not delay submissions.
//
// Memory is bounded whatever the length of the run: at most max_queued
// batches wait in memory (~88 bytes a record: 64 x 4096 records = 23 MB).
// When the sinks fall further behind (a fullspeed replay outrunning gzip),
// further batches go to an unlinked spill file (in $TMPDIR, else /var/tmp)
// and are read back in order; the file is emptied each time the sinks catch
// up. The spill file is bounded too (max_spill_bytes, 1 GiB: ~12 M records
// behind): past it, and if no spill file can be made, the replay thread waits
// for room (counted in waits()), so a fullspeed replay that outruns gzip for
// hours runs at the writer's pace instead of filling the disk.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/fd.h"
#include "replay/record.h"

namespace blkrr::replay {

class RecordBus {
 public:
  // threaded=false runs the sinks inline (unit tests).
  static constexpr uint64_t kMaxSpillBytes = 1ull << 30;
  explicit RecordBus(bool threaded, size_t batch = 4096, size_t max_queued = 64,
                     uint64_t max_spill_bytes = kMaxSpillBytes);
  ~RecordBus();
  RecordBus(const RecordBus&) = delete;
  RecordBus& operator=(const RecordBus&) = delete;

  void add_sink(RecordSink* s) { sinks_.push_back(s); }
  // Tells the sinks the start instant (RecordSink::on_start), on the calling
  // thread: call it before the first push().
  void start(uint64_t start_instant_ns) {
    for (RecordSink* s : sinks_) s->on_start(start_instant_ns);
  }
  void push(const ReplayRecord& r) {
    batch_.push_back(r);
    if (batch_.size() >= batch_size_) flush();
  }
  // Hands the current batch over.
  void flush();
  // Flushes and waits until the sinks have seen everything.
  void finish();
  // Times flush() waited for room in a full queue, and for how long.
  uint64_t waits() const { return waits_; }
  uint64_t waited_ns() const { return waited_ns_; }
  // Batches that went through the spill file, and the file's largest size
  // (at most max_spill_bytes).
  uint64_t spilled_batches() const { return spilled_; }
  uint64_t spill_peak_bytes() const { return spill_peak_; }
  // Records the spill file could not give back (an I/O error): not delivered.
  uint64_t lost() const { return lost_; }

 private:
  // A queued batch: in memory, or `count` records at `offset` of the spill file.
  struct Entry {
    std::vector<ReplayRecord> records;
    size_t count = 0;
    uint64_t offset = 0;
    bool spilled = false;
  };
  void run();
  void deliver(const std::vector<ReplayRecord>& b);
  bool spill_locked();  // batch_ to the spill file; false if it cannot
  void wait_for_room(std::unique_lock<std::mutex>& l);
  void read_back(const Entry& e, std::vector<ReplayRecord>& out);
  void next_batch();

  bool threaded_;
  size_t batch_size_, max_queued_;
  uint64_t max_spill_;
  uint64_t waits_ = 0, waited_ns_ = 0, spilled_ = 0, spill_peak_ = 0, lost_ = 0;
  std::vector<RecordSink*> sinks_;
  std::vector<ReplayRecord> batch_;
  std::mutex m_;
  std::condition_variable cv_, idle_cv_, room_cv_;
  std::deque<Entry> queue_;
  size_t in_memory_ = 0, spilled_queued_ = 0;  // entries of queue_ of each kind
  Fd spill_;
  bool spill_failed_ = false;
  uint64_t spill_end_ = 0;
  std::vector<std::vector<ReplayRecord>> spare_;  // delivered batches, for reuse
  bool busy_ = false, stop_ = false;
  std::thread thread_;
};

}  // namespace blkrr::replay
