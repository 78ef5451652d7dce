// Adaptive disk time of records that arrive as they complete (record's
// user-space disk time, CaptureConfig::user_disk_time), so that the kernel
// programs keep no device state and take no lock.
//
// Records are held until a watermark: every issue and completion before it is
// applied per device in time order with the rule of core/disktime.h, which
// charges each request what the kernel's in-kernel state would have. A record
// that arrives after the watermark passed its issue (a request in flight for
// longer than the caller's delay) is charged the part of its interval the
// device was idle for, as far as already processed, and takes part in the
// rule from the watermark on. Either way the sum of the charges of a device is
// the length of the union of its completed records' issue..completion
// intervals (within `horizon_ns` of the watermark for late records).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <vector>

#include "core/disktime.h"
#include "core/request.h"

namespace blkrr {

class DiskTimeStream {
 public:
  using Sink = std::function<void(const Request&)>;
  struct DeviceTotal {
    DevT dev = 0;
    uint64_t busy_ns = 0;      // sum of the charges
    uint64_t completions = 0;  // records charged (completed ones)
  };

  explicit DiskTimeStream(uint64_t horizon_ns = 60'000'000'000ull) : horizon_ns_(horizon_ns) {}

  // A record as it arrives; its disk_time_ns is ignored and replaced.
  void add(const Request& r);
  // Applies every event before `watermark` and hands each record whose
  // completion is before it (and each record without completion) to sink,
  // in completion order.
  void release(uint64_t watermark, const Sink& sink);
  // Hands every record still held to sink.
  void finish(const Sink& sink);
  std::vector<DeviceTotal> totals() const;
  size_t held() const { return slots_.size() - free_.size(); }

 private:
  struct Ev {
    uint64_t t;
    bool is_complete;
    uint32_t slot;
  };
  struct Later {  // min-heap order: time, completions first at equal times
    bool operator()(const Ev& a, const Ev& b) const {
      if (a.t != b.t) return a.t > b.t;
      return !a.is_complete && b.is_complete;
    }
  };
  struct Device {
    DiskTimeTracker tracker;
    uint64_t idle_since = 0;    // start of the open idle period (tracker idle)
    std::deque<Interval> gaps;  // closed idle periods before the watermark
    DeviceTotal total;
  };

  uint32_t hold(const Request& r);
  void apply(const Ev& e, const Sink& sink);
  uint64_t fill_idle(Device& d, uint64_t from, uint64_t to);
  void trim(Device& d);

  uint64_t horizon_ns_;
  uint64_t watermark_ = 0;  // every event before it is applied
  std::vector<Request> slots_;
  std::vector<uint32_t> free_;
  std::priority_queue<Ev, std::vector<Ev>, Later> events_;
  std::vector<Request> ready_;  // records without completion: out at the next release
  std::map<DevT, Device> devices_;
};

}  // namespace blkrr
