#include "capture/bpf_types.h"

#include <cerrno>
#include <cstring>

#include "core/volume_stripes.h"

namespace blkrr::capture {

static_assert(sizeof(blkrr_event) == 96, "ring-buffer record layout changed");
static_assert(sizeof(blkrr_seg) == 64, "stacked volume piece layout changed");
static_assert(static_cast<int>(Op::kWriteZeroes) == BLKRR_OP_WRITE_ZEROES);
static_assert(static_cast<int>(Op::kOther) == BLKRR_OP_OTHER);
static_assert(static_cast<int>(kFlagPrio) == static_cast<int>(BLKRR_F_PRIO));
static_assert(static_cast<int>(kFlagReadahead) == static_cast<int>(BLKRR_F_READAHEAD));
static_assert(static_cast<int>(kRecTaskFromIssue) == static_cast<int>(BLKRR_R_TASK_FROM_ISSUE));
static_assert(static_cast<int>(kRecTaskFromBio) == static_cast<int>(BLKRR_R_TASK_FROM_BIO));
static_assert(static_cast<int>(kRecKernelViaStack) == static_cast<int>(BLKRR_R_KERNEL_VIA_STACK));
static_assert(static_cast<int>(kRecBioLevel) == static_cast<int>(BLKRR_R_BIO_LEVEL));
static_assert(static_cast<int>(kRecCompletionNotSeen) ==
              static_cast<int>(BLKRR_R_COMPLETION_NOT_SEEN));

int blk_status_to_errno(int status) {
  switch (status) {
    case 0:
      return 0;
    case 1:
      return -EOPNOTSUPP;
    case 2:
      return -ETIMEDOUT;
    case 3:
      return -ENOSPC;
    case 4:
      return -ENOLINK;
    case 5:
      return -EREMOTEIO;
    case 6:
      return -EBADE;
    case 7:
      return -ENODATA;
    case 8:
      return -EILSEQ;
    case 9:
      return -ENOMEM;
    case 10:
      return -EIO;
    case 11:
      return -EREMCHG;
    case 12:
      return -EAGAIN;
    case 13:
      return -EBUSY;
    case 14:
      return -ETOOMANYREFS;
    case 15:
      return -EOVERFLOW;
    case 16:
      return -ENODEV;
    case 17:
      return -ETIME;
    case 19:
      return -EINVAL;
    default:
      return -EIO;
  }
}

static Op to_op(__u8 op) {
  return op <= BLKRR_OP_OTHER ? static_cast<Op>(op) : Op::kOther;
}

static void set_comm(Request& r, const char (&comm)[BLKRR_COMM_LEN]) {
  for (size_t i = 0; i < r.comm.size(); i++) r.comm[i] = i < BLKRR_COMM_LEN - 1 ? comm[i] : '\0';
  // Bytes after the first NUL are zero (stable output, comparable records).
  bool end = false;
  for (char& c : r.comm) {
    if (end) c = '\0';
    if (c == '\0') end = true;
  }
}

Request event_to_request(const blkrr_event& ev) {
  Request r;
  r.issue_ns = ev.issue_ns;
  r.complete_ns = ev.complete_ns;  // ~0 == kNoTime
  r.disk_time_ns = ev.disk_time_ns;
  r.sector = ev.sector;
  r.cgroup_id = ev.cgroup_id;
  r.bytes = ev.bytes;
  r.dev = ev.disk;
  r.part = ev.part;
  r.pid = ev.pid;
  r.tgid = ev.tgid;
  r.error = blk_status_to_errno(ev.error);
  r.op = to_op(ev.op);
  r.flags = ev.flags;
  r.rec_flags = ev.rec_flags;
  set_comm(r, ev.comm);
  return r;
}

Request inflight_to_request(const blkrr_inflight& e) {
  Request r;
  r.issue_ns = e.issue_ns;
  r.complete_ns = kNoTime;
  r.disk_time_ns = e.disk_time_ns;
  r.sector = e.sector;
  r.cgroup_id = e.task.cgroup_id;
  r.bytes = e.bytes;
  r.dev = e.disk;
  r.part = e.part;
  r.pid = e.task.pid;
  r.tgid = e.task.tgid;
  r.op = to_op(e.op);
  r.flags = e.flags;
  r.rec_flags = static_cast<uint8_t>(e.rec_flags | kRecCompletionNotSeen);
  set_comm(r, e.task.comm);
  return r;
}

AggEntry agg_entry(const blkrr_agg_key& k, const blkrr_agg_val& v) {
  AggEntry e;
  e.key.pid = k.tgid;
  e.key.tid = k.pid;
  e.key.cgroup_id = k.cgroup_id;
  e.key.disk = k.disk;
  e.key.dev = k.part ? k.part : k.disk;
  e.key.dir = to_op(k.op);
  e.key.via = k.via;
  for (size_t i = 0; i < e.key.comm.size() && i < BLKRR_COMM_LEN; i++) e.key.comm[i] = k.comm[i];
  e.value.requests = v.requests;
  e.value.bytes = v.bytes;
  e.value.disk_time_ns = v.disk_time_ns;
  e.value.latency_ns = v.latency_ns;
  static_assert(AggValue::kLatencySlots == BLKRR_LAT_SLOTS);
  for (size_t i = 0; i < AggValue::kLatencySlots; i++) e.value.latency_hist[i] = v.lat_hist[i];
  e.uid = v.uid;
  e.ppid = v.ppid;
  return e;
}

std::vector<blkrr_agg_key> agg_kernel_keys(const AggKey& a) {
  blkrr_agg_key k{};
  k.cgroup_id = a.cgroup_id;
  k.tgid = a.pid;
  k.pid = a.tid;
  k.part = a.dev;
  k.disk = a.disk;
  k.op = static_cast<__u8>(a.dir);
  k.via = a.via;
  for (size_t i = 0; i < a.comm.size() && i < BLKRR_COMM_LEN; i++) k.comm[i] = a.comm[i];
  std::vector<blkrr_agg_key> out{k};
  if (a.dev == a.disk) {
    k.part = 0;
    out.push_back(k);
  }
  return out;
}

const char* counter_name(int index) {
  switch (index) {
    case BLKRR_CNT_ISSUES:
      return "issues";
    case BLKRR_CNT_COMPLETIONS:
      return "completions";
    case BLKRR_CNT_EVENTS:
      return "events";
    case BLKRR_CNT_RINGBUF_FULL:
      return "ringbuf_reserve_failed";
    case BLKRR_CNT_INFLIGHT_FULL:
      return "inflight_map_full";
    case BLKRR_CNT_NO_ISSUE:
      return "completion_without_issue";
    case BLKRR_CNT_PARTIAL:
      return "partial_completions";
    case BLKRR_CNT_REQUEUE:
      return "requeues";
    case BLKRR_CNT_NOT_SEEN_REISSUE:
      return "completion_not_seen_reissued";
    case BLKRR_CNT_TASK_FROM_ISSUE:
      return "task_from_issue";
    case BLKRR_CNT_AGG_FULL:
      return "agg_map_full";
    case BLKRR_CNT_DEVSTATE_FULL:
      return "devstate_map_full";
    case BLKRR_CNT_PENDING_CLAMPED:
      return "pending_clamped";
    case BLKRR_CNT_SWEEP_APPLIED:
      return "sweep_corrections_applied";
    case BLKRR_CNT_FAULT_SKIPPED:
      return "fault_skipped_completions";
    case BLKRR_CNT_NOT_SEEN_CHECKED:
      return "completion_not_seen_checked";
    case BLKRR_CNT_CHECK_SUSPECTS:
      return "checker_suspects";
    case BLKRR_CNT_DONE_FALLBACK:
      return "completion_from_io_done";
    case BLKRR_CNT_STACK_BIOS:
      return "volume_bios_noted";
    case BLKRR_CNT_STACK_MATCHED:
      return "volume_submitter_found";
    case BLKRR_CNT_STACK_UNMATCHED:
      return "volume_submitter_unknown";
    case BLKRR_CNT_BIO_NOT_QUEUED:
      return "bio_completion_not_queued";
    default:
      return "unknown";
  }
}

blkrr_seg stack_seg(const VolumePiece& p) {
  const Extent& e = p.extent;
  blkrr_seg s{};
  s.vol_start = e.vol_start;
  s.len = e.len;
  s.disk_start = e.dev_start;
  s.disk_len = dev_len(e);
  s.vol = p.volume;
  s.disk = e.dev;
  s.stripes = 1;
  if (is_striped(e)) {
    s.chunk = e.chunk;
    s.phase = e.phase;
    s.stripes = e.stripes;
    s.stripe = e.stripe;
  }
  return s;
}

}  // namespace blkrr::capture
