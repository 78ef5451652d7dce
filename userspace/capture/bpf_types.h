// The kernel/user shared structures of bpf/capture.h, seen from C++, and
// their translation into blkrr's trace model.
#pragma once

#include <linux/types.h>

#include <string>

#include "bpf/capture.h"
#include "core/request.h"

namespace blkrr::capture {

// Layout of a devstate map value as user space sees it (the kernel's
// struct bpf_spin_lock is 4 bytes, followed by 4 bytes of padding).
struct DevStateValue {
  __u32 lock;
  __u32 pad;
  blkrr_devstate_pub s;
};
static_assert(sizeof(DevStateValue) == 8 + 7 * 8);

// Negative errno of a kernel blk_status_t (values of include/linux/blk_types.h
// since 6.5; unknown codes become -EIO).
int blk_status_to_errno(int status);

// A ring-buffer record as a trace request. part == 0 (kernels whose request
// has no partition device) is left 0 for the caller to resolve by sector.
Request event_to_request(const blkrr_event& ev);
// The record's insert time, kNoTime when not seen.
inline uint64_t event_insert_ns(const blkrr_event& ev) {
  return ev.insert_ns ? ev.insert_ns : kNoTime;
}
// An in-flight entry given up on (sweeper, end of capture): its completion
// was never seen.
Request inflight_to_request(const blkrr_inflight& e);

// Names of the in-kernel counters (index = enum blkrr_counter).
const char* counter_name(int index);

}  // namespace blkrr::capture
