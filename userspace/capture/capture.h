// Loader for bpf/capture.bpf.c: the only code that includes the skeleton.
// Used by record, snoop, top and the replay validator.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/bio_level.h"
#include "core/device.h"
#include "core/request.h"
#include "core/result.h"
#include "core/trace_format.h"
#include "core/volume_map.h"

namespace blkrr {

// Sector ranges the capture's device filter holds per disk (a selected
// partition or a piece of a mapped volume each take one).
constexpr size_t kCaptureRangesPerDisk = 8;

struct CaptureConfig {
  std::vector<DeviceSelection> devices;  // empty: every device
  std::optional<uint32_t> tgid;          // -p PID (process id)
  std::optional<std::string> comm;       // exact task name
  std::optional<uint64_t> cgroup_id;     // cgroup v2 id (inode of the cgroup dir)
  bool emit_events = true;  // one ring-buffer record per request (record, snoop, validator)
  bool aggregate = false;   // in-kernel per {pid,comm,cgroup,dev,dir} counters (top)
  bool queue_time = false;  // also track block_rq_insert (snoop -Q)
  // Lean capture (replay validator): records carry dev, part, sector, bytes,
  // op and flags, issue and completion times, error, pid, tgid and comm; no
  // per-device state is kept (disk_time_ns = 0, device_busy() empty) and the
  // cgroup id is 0 unless cgroup_id filters on it. Ignored with aggregate.
  bool lean = false;
  // record: compute the disk time in user space (core/disktime_stream.h) so
  // that the kernel keeps no per-device state and takes no lock. Applies only
  // when every request of the selected disks is emitted (no task filter, whole
  // disks only, no aggregation); disk_time_in_user_space() tells whether it did.
  // The records then carry disk_time_ns = 0 and device_busy() is empty.
  bool user_disk_time = false;
  uint32_t ringbuf_mb = 64;
  // Fault injection for tests: ignore every Nth completion on the selected
  // devices, as the kernel occasionally does by not running the completion
  // program (0: off). When 0, the environment variable
  // BLKRR_FAULT_SKIP_COMPLETION=N sets it (any blkrr command); counter
  // fault_skipped_completions.
  uint32_t fault_skip_completion_every = 0;
  // With it: true loses the request's whole completion (block_io_done
  // ignores it too), false skips block_rq_complete alone, so that
  // block_io_done (loaded where map iterators are not) completes it.
  // BLKRR_FAULT_SKIP_COMPLETION=N:complete sets false.
  bool fault_whole = true;
  // Load block_io_done as a second completion source where the checker
  // cannot run (environment BLKRR_IO_DONE=1). Off by default: it did not
  // fire for the completions the kernel lost (docs/capture.md).
  bool io_done_fallback = false;
  // Pieces of stacked volumes (dm, md) on their disks: the disk requests
  // their bios become are charged to the bios' submitters (block_bio_queue;
  // docs/capture.md). At most kCaptureStackPieces.
  std::vector<VolumePiece> stack_pieces;
  // Selected devices (each also in `devices`, whole) captured at the bio
  // level: their bios from block_bio_queue to block_bio_complete, written
  // as their requests (bpf/bio_level.bpf.h; core/bio_level.h). Loads the
  // two programs; without them (empty) the capture runs as before.
  std::vector<BioLevelDevice> bio_level;
};
constexpr size_t kCaptureStackPieces = 64;

// Cumulative in-kernel counters for one {pid, comm, cgroup, device, direction}.
struct AggKey {
  uint32_t pid = 0;  // tgid of the task that created the requests
  uint32_t tid = 0;
  uint64_t cgroup_id = 0;
  DevT dev = 0;  // partition the requests fell in (whole disk if none)
  DevT disk = 0;
  Op dir = Op::kRead;  // read, write, or other ops grouped as their op
  std::array<char, 16> comm{};
  // kRecTaskFromBio / kRecKernelViaStack: I/O of a stacked volume (`dev` is
  // the volume then), charged to its bio's submitter / a kernel thread.
  uint8_t via = 0;
};
struct AggValue {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  uint64_t disk_time_ns = 0;
  uint64_t latency_ns = 0;  // sum of issue->completion (biotop's measure, for comparison)
  // Requests by latency: [0] under 1 us, [i] in [2^(i-1), 2^i) us, the last
  // from 2^(kLatencySlots-2) us up (bpf/capture_events.h BLKRR_LAT_SLOTS).
  static constexpr size_t kLatencySlots = 24;
  std::array<uint64_t, kLatencySlots> latency_hist{};
};
// The slot of latency_hist a latency falls in (the kernel's lat_slot()).
inline size_t latency_slot(uint64_t ns) {
  uint64_t us = ns / 1000;
  size_t s = us ? static_cast<size_t>(64 - __builtin_clzll(us)) : 0;
  return s < AggValue::kLatencySlots ? s : AggValue::kLatencySlots - 1;
}
inline constexpr uint32_t kNoUid = UINT32_MAX;
struct AggEntry {
  AggKey key;
  AggValue value;
  // Of the task whose request created the entry, read in the kernel at that
  // moment (so still right after the process exited).
  uint32_t uid = kNoUid;  // real uid; kNoUid when unknown
  uint32_t ppid = 0;      // parent's process id; 0 when unknown
};

// Per whole-disk state of the adaptive algorithm, cumulative since attach.
struct DeviceBusy {
  DevT disk = 0;
  uint64_t busy_ns = 0;  // sum of disk time charged on this device
  uint64_t pending = 0;  // requests in flight now
  uint64_t requests = 0;
};

// What a record carries beyond the trace model (see Capture::current_extra).
struct RequestExtra {
  uint64_t insert_ns = kNoTime;  // block_rq_insert time (queue_time only; kNoTime if none)
  // Delivered by stop(): still in flight in the capture when it stopped.
  bool at_stop = false;
  // With at_stop: the kernel reported its disk idle (nothing in flight) at
  // stop, so the request did complete and only its completion was not seen.
  // Otherwise it may still be running on the device.
  bool disk_idle_at_stop = false;
};

class Capture {
 public:
  using EventFn = std::function<void(const Request&)>;

  static Result<std::unique_ptr<Capture>> start(const CaptureConfig& cfg);
  virtual ~Capture() = default;

  // Wait up to timeout_ms for events and hand each finished request to fn.
  // Returns the number of records delivered.
  virtual Result<int> poll(int timeout_ms, const EventFn& fn) = 0;
  // Detach, deliver what is still buffered, and emit every still-in-flight
  // request as a record flagged kRecCompletionNotSeen.
  virtual Status stop(const EventFn& fn) = 0;
  // Drops and anomalies, by name (see docs/trace-format.md for the list).
  virtual Counters counters() const = 0;
  virtual Result<std::vector<AggEntry>> aggregates() const = 0;
  // Removes the entries of these keys from the kernel's aggregation map and
  // returns their final cumulative values (keys not in the map are left out
  // of the result). New I/O of a taken key starts a new entry from zero.
  // For `top` to forget processes that exited, so that the map does not fill
  // up on long runs. A request completing on another CPU exactly while its
  // entry is taken may be lost from the counters (docs/capture.md).
  virtual Result<std::vector<AggEntry>> take_aggregates(const std::vector<AggKey>& keys) = 0;
  virtual Result<std::vector<DeviceBusy>> device_busy() const = 0;
  // The oldest issue time (CLOCK_MONOTONIC) among the requests that pass the
  // filters and are in flight in the capture now, UINT64_MAX when none is:
  // one walk over the request map (record's rotation asks it to know when no
  // request issued before a boundary can still arrive). A request leaves
  // this set a moment before its record is in the ring buffer: poll() once
  // after the walk before relying on it.
  virtual uint64_t oldest_inflight_issue_ns() const = 0;
  // True when the kernel has block_io_start (attribution to the creating task).
  virtual bool has_io_start() const = 0;
  // True when CaptureConfig::user_disk_time applied: the caller computes disk time.
  virtual bool disk_time_in_user_space() const = 0;
  // Valid inside an EventFn callback: the extra data of the record being
  // delivered (queue time needs CaptureConfig::queue_time).
  virtual RequestExtra current_extra() const = 0;
  // True when queue_time was asked for and the kernel has block_rq_insert.
  virtual bool has_queue_time() const = 0;
  // What this capture runs with (attribution, queue time, how lost
  // completions are found, tracepoint prototypes, BLKRR_DENY), for trace
  // headers and JSON documents: see capture/load_plan.h.
  virtual std::map<std::string, std::string> features() const = 0;
};

// Why the capture cannot run here (not root, no BTF, tracepoints or program
// types refused...), or ok. Probes the kernel on its first call.
Status capture_preflight();

}  // namespace blkrr
