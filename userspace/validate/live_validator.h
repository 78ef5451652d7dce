// The live validator: captures what the block layer does on the replay
// device while a replay runs and matches it against what the replayer did,
// as both come, within a window (LiveOptions::window_ns): memory is bounded
// by the requests of one window, not by the run.
//
//   auto v = LiveValidator::start("/dev/sdX");   // before the first submission
//   ... replay: (*v)->add_replayed(requests) as they complete (any thread) ...
//   auto report = (*v)->finish();                // after the last completion
//
// See docs/validate.md for the whole API and an example.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "capture/capture.h"
#include "core/device.h"
#include "core/result.h"
#include "validate/event_store.h"
#include "validate/validation.h"
#include "validate/volume_lens.h"
#include "validate/window_matcher.h"

namespace blkrr::validate {

struct LiveOptions {
  MatchOptions match;  // flush_reaches_device is set from the device's write cache
  // Ring buffer of the capture: mapped twice, it counts twice in the RSS;
  // 32 MiB hold ~380,000 records, seconds of a full-speed replay.
  uint32_t ringbuf_mb = 32;
  int poll_ms = 50;         // longest wait for records in one read
  uint32_t settle_ms = 10;  // start() waits this long for requests in flight at attach
  // Lean capture (CaptureConfig::lean): no per-device disk-time state and no
  // cgroup id in the kernel programs; the validator uses neither.
  bool lean = true;
  // Sleep between two reads of the ring buffer: simulates a consumer that
  // cannot keep up (used to test that losses turn the verdict to "unknown").
  uint32_t consumer_pause_ms = 0;
  // Records of a time are awaited this long (after both the replayer's
  // completions and the capture have passed it) before what they could
  // serve is resolved; later ones are late (Report::late_*). The report
  // states it (MatchOptions::window_ns). 0: no window, everything is kept
  // until finish() (memory grows with the run).
  uint64_t window_ns = kDefaultWindowNs;
  static constexpr uint64_t kDefaultWindowNs = 5'000'000'000;
  // The records held unresolved (replayed and block-layer requests) take at
  // most this many bytes, whatever the rate (MatchOptions::max_held_bytes;
  // WindowMatcher::held_bytes() counts each record at the most it takes
  // where it is held): past it the window shrinks, counted in the report.
  // With the ring buffer, this bounds the validator's memory
  // (docs/validate.md "The window"): 50 MiB (52 MB), ~800,000 records
  // waiting for the window.
  uint64_t max_held_bytes = kDefaultMaxHeldBytes;
  static constexpr uint64_t kDefaultMaxHeldBytes = 50ull << 20;
  // Keep every block-layer record for stop()'s Observation instead of
  // matching (validate_attach: a capture to save and validate offline).
  bool keep_all = false;
};

// What the capture saw between start() and stop().
struct Observation {
  // Block-layer requests, whole-disk sectors, CLOCK_MONOTONIC (keep_all only).
  std::vector<Request> requests;
  Counters counters;  // capture counters; completion_without_issue counts from the end of start()
  std::map<std::string, std::string> capture_features;  // Capture::features()
  DeviceSelection device;
  uint64_t partition_offset = 0;  // start sector of the partition given to start(), else 0
  bool flush_reaches_device = true;
  ValidatorCost cost;  // records and CPU time of the consumer thread (matching not included)
};

class LiveValidator {
 public:
  // Attaches the capture, filtered to `device` (a disk with all its
  // partitions, or one partition), and starts collecting on a background
  // thread. Needs root and BTF (capture_preflight() says why not).
  static Result<std::unique_ptr<LiveValidator>> start(const std::string& device,
                                                      const LiveOptions& opts = {});
  // A dm or md device given by name (a volume with no requests of its own)
  // is mapped onto its disks (core/volume_stack.h) and validated through them.
  static Result<std::unique_ptr<LiveValidator>> start(const DeviceSelection& device,
                                                      const LiveOptions& opts = {});
  // `device` a stacked volume mapped as `volume`: the capture watches the
  // volume's pieces on its disks and the matching is in volume sectors
  // (validate/volume_lens.h); Report::stack says what was seen where.
  static Result<std::unique_ptr<LiveValidator>> start(const DeviceSelection& device,
                                                      const LiveOptions& opts, VolumeMap volume);
  // `device` a bio-based device whose mapping blkrr cannot follow (dm thin,
  // md RAID5, zram: core/bio_level.h): its bios are captured and matched as
  // its requests. That proves what reached the device's block layer, not
  // what the disks below it were asked (docs/validate.md).
  static Result<std::unique_ptr<LiveValidator>> start(const DeviceSelection& device,
                                                      const LiveOptions& opts, BioLevelDevice bio);
  ~LiveValidator();
  LiveValidator(const LiveValidator&) = delete;
  LiveValidator& operator=(const LiveValidator&) = delete;

  // The replayer's requests as they complete (any thread, in completion
  // order). Sectors are relative to the device given to start() (the
  // partition offset is added here); times are CLOCK_MONOTONIC nanoseconds.
  void add_replayed(std::span<const ReplayedRequest> replayed);
  // Detaches and returns the counters (and with keep_all every record). Call
  // once, after the replay's last completion.
  Result<Observation> stop();
  // stop(), then resolves everything left and returns the report.
  Result<Report> finish();
  // add_replayed(replayed), then finish().
  Result<Report> finish(const std::vector<ReplayedRequest>& replayed);

  uint64_t partition_offset() const { return part_offset_; }
  // Block-layer requests collected so far (any thread).
  uint64_t records() const { return records_.load(std::memory_order_relaxed); }

 private:
  explicit LiveValidator(const LiveOptions& opts);
  static Result<std::unique_ptr<LiveValidator>> start_plain(
      const DeviceSelection& device, const LiveOptions& opts,
      const std::vector<BioLevelDevice>& bio_level);
  Status attach(CaptureConfig cfg);  // starts the capture and the reader thread
  void reader();
  void on_record(const Request& r);
  void take_replayed();  // moves add_replayed()'s requests into the matcher

  LiveOptions opts_;
  DeviceSelection dev_;
  uint64_t part_offset_ = 0;
  bool flush_reaches_device_ = true;
  std::unique_ptr<Capture> cap_;
  // keep_all: written by the reader thread, then by stop() after the join.
  std::unique_ptr<EventStore> seen_;
  // The matcher: used by the reader thread, then by stop()/finish() after the join.
  std::unique_ptr<WindowMatcher> matcher_;
  std::unique_ptr<VolumeLens> lens_;  // a stacked volume: its disks' requests in its sectors
  uint64_t replay_clock_ = 0;         // latest completion among the replayed requests taken
  std::mutex in_mu_;
  std::vector<ReplayedRequest> incoming_, taking_;  // from add_replayed(), for the reader
  uint64_t seen_count_ = 0;                         // block-layer records received
  uint64_t reader_cpu_ns_ = 0;
  Counters baseline_;
  std::thread thread_;
  std::atomic<bool> quit_{false};
  std::atomic<uint64_t> records_{0};
  Error reader_error_;
  bool reader_failed_ = false;
  bool stopped_ = false;
};

// True when the device has a volatile write cache, i.e. flushes reach the
// block layer as requests ("write back" in /sys/block/DISK/queue/write_cache).
bool device_has_write_cache(const std::string& disk_name, const std::string& sysfs = "/sys");

}  // namespace blkrr::validate
