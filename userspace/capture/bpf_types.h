// The kernel/user shared structures of bpf/capture_events.h, seen from C++, and
// their translation into blkrr's trace model.
#pragma once

#include <linux/types.h>

#include <string>

#include <vector>

#include "bpf/capture_events.h"
#include "capture/capture.h"
#include "core/request.h"
#include "core/volume_map.h"

namespace blkrr::capture {

// Layout of a devstate map value as user space sees it (the kernel's
// struct bpf_spin_lock is 4 bytes, followed by 4 bytes of padding).
struct DevStateValue {
  __u32 lock;
  __u32 pad;
  blkrr_devstate_pub s;
};
static_assert(sizeof(DevStateValue) == 8 + 9 * 8);

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

// An aggregation map entry as the API shows it, and back: the kernel keys an
// AggKey can stand for (its dev is the whole disk when the kernel had no
// partition device, part == 0).
AggEntry agg_entry(const blkrr_agg_key& k, const blkrr_agg_val& v);
std::vector<blkrr_agg_key> agg_kernel_keys(const AggKey& k);

// A piece of a stacked volume as the capture's cfg_segs entry: a striped
// member with its stripes, index, chunk and phase; a linear piece with
// stripes 1 (bpf/capture_events.h).
blkrr_seg stack_seg(const VolumePiece& p);

// Names of the in-kernel counters (index = enum blkrr_counter).
const char* counter_name(int index);

}  // namespace blkrr::capture
