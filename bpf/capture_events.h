/* Structures shared by bpf/capture.bpf.c and the loader (userspace/capture).
 * Plain C, no kernel or libc includes: both sides must see the same layout.
 * Fixed-width types come from vmlinux.h on the BPF side and from
 * <linux/types.h> in user space. */
#ifndef BLKRR_BPF_CAPTURE_H
#define BLKRR_BPF_CAPTURE_H

#define BLKRR_COMM_LEN 16
#define BLKRR_MAX_RANGES 8 /* selected partitions per disk */
#define BLKRR_MAX_DISKS 64 /* selected disks (-d) */
#define BLKRR_INFLIGHT_MAX 65536
#define BLKRR_AGG_MAX 16384
/* Pieces of stacked volumes (dm, md) whose bios are followed to the disks
 * below for attribution (bpf/stack_attr.bpf.h), and the submitters held. */
#define BLKRR_MAX_SEGS 64
#define BLKRR_OWNERS_MAX 16384
/* Latency histogram of an aggregation entry: slot 0 counts latencies under
 * 1 us, slot i (1..BLKRR_LAT_SLOTS-2) those in [2^(i-1), 2^i) us, the last
 * slot everything from 2^(BLKRR_LAT_SLOTS-2) us (4.2 s) up. */
#define BLKRR_LAT_SLOTS 24

/* Indexes of the per-CPU counter array. Names in userspace/capture/counters.cpp. */
enum blkrr_counter {
  BLKRR_CNT_ISSUES = 0,       /* requests issued on selected devices */
  BLKRR_CNT_COMPLETIONS,      /* final completions paired with an issue */
  BLKRR_CNT_EVENTS,           /* records written to the ring buffer */
  BLKRR_CNT_RINGBUF_FULL,     /* ring-buffer reserve failures (record lost) */
  BLKRR_CNT_INFLIGHT_FULL,    /* in-flight map full at issue (request not tracked) */
  BLKRR_CNT_NO_ISSUE,         /* completion without a seen issue */
  BLKRR_CNT_PARTIAL,          /* partial completions (entry kept) */
  BLKRR_CNT_REQUEUE,          /* requeues */
  BLKRR_CNT_NOT_SEEN_REISSUE, /* rq issued again while in flight: old one flagged */
  BLKRR_CNT_TASK_FROM_ISSUE,  /* attributed to the task current at issue */
  BLKRR_CNT_AGG_FULL,         /* aggregation map full */
  BLKRR_CNT_DEVSTATE_FULL,    /* per-device state map full */
  BLKRR_CNT_PENDING_CLAMPED,  /* completion while pending was already 0 */
  BLKRR_CNT_SWEEP_APPLIED,    /* sweeper corrections applied to pending */
  BLKRR_CNT_FAULT_SKIPPED,    /* completions ignored on purpose (fault injection) */
  BLKRR_CNT_NOT_SEEN_CHECKED, /* rq found no longer in flight by the checker: given up */
  BLKRR_CNT_CHECK_SUSPECTS,   /* entries the checker marked (rq not in flight once) */
  BLKRR_CNT_DONE_FALLBACK,    /* completed at block_io_done: block_rq_complete not seen */
  BLKRR_CNT_STACK_BIOS,       /* bios of a stacked volume whose submitter was noted */
  BLKRR_CNT_STACK_MATCHED,    /* disk requests charged to the submitter of a volume's bio */
  BLKRR_CNT_STACK_UNMATCHED,  /* disk requests in a volume with no submitter found */
  BLKRR_CNT_BIO_NOT_QUEUED,   /* bio-level: completion of a bio whose queue was not noted */
  BLKRR_CNT_NR,
};

/* Translated operation and flags: values of blkrr::Op / blkrr::ReqFlag
 * (userspace/core/request.h). */
enum blkrr_op {
  BLKRR_OP_READ = 0,
  BLKRR_OP_WRITE = 1,
  BLKRR_OP_FLUSH = 2,
  BLKRR_OP_DISCARD = 3,
  BLKRR_OP_SECURE_ERASE = 4,
  BLKRR_OP_WRITE_ZEROES = 5,
  BLKRR_OP_ZONE_APPEND = 6,
  BLKRR_OP_OTHER = 7,
};
enum blkrr_req_flag {
  BLKRR_F_SYNC = 1 << 0,
  BLKRR_F_META = 1 << 1,
  BLKRR_F_FUA = 1 << 2,
  BLKRR_F_PREFLUSH = 1 << 3,
  BLKRR_F_READAHEAD = 1 << 4,
  BLKRR_F_BACKGROUND = 1 << 5,
  BLKRR_F_NOMERGE = 1 << 6,
  BLKRR_F_IDLE = 1 << 7,
  BLKRR_F_PRIO = 1 << 8,
};
/* Values of blkrr::RecordFlag. */
enum blkrr_rec_flag {
  BLKRR_R_COMPLETION_NOT_SEEN = 1 << 0,
  BLKRR_R_ISSUE_NOT_SEEN = 1 << 1,
  BLKRR_R_PARTIAL = 1 << 2,
  BLKRR_R_REQUEUED = 1 << 3,
  BLKRR_R_TASK_FROM_ISSUE = 1 << 4,
  BLKRR_R_TASK_FROM_BIO = 1 << 5,    /* submitter of the stacked volume's bio */
  BLKRR_R_KERNEL_VIA_STACK = 1 << 6, /* in a volume, from a kernel thread */
  BLKRR_R_BIO_LEVEL = 1 << 7,        /* a bio of a device captured at the bio level */
};

/* Who created a request (block_io_start, submitter context). */
struct blkrr_task {
  __u64 cgroup_id;
  __u32 pid;
  __u32 tgid;
  char comm[BLKRR_COMM_LEN];
  __u32 uid;     /* real uid; only with aggregation (BLKRR_NO_UID otherwise) */
  __u32 ppid;    /* tgid of the parent; only with aggregation (0 otherwise) */
  __u32 kthread; /* a kernel thread; only with stacked volumes (0 otherwise) */
  __u32 pad;
};
#define BLKRR_NO_UID 0xffffffffu

/* State of a request entry. */
enum blkrr_rq_state {
  BLKRR_RQ_DONE = 0,     /* completed or given up: free for the next use of the rq */
  BLKRR_RQ_STARTED = 1,  /* seen at block_io_start (or requeued), not issued */
  BLKRR_RQ_INFLIGHT = 2, /* issued, completion pending */
};

/* One request from block_io_start to its completion, keyed by the kernel's
 * struct request pointer (requests are preallocated per tag set, so the key
 * space is bounded). */
struct blkrr_inflight {
  struct blkrr_task task;
  __u64 issue_ns;
  __u64 sector;
  __u64 disk_time_ns; /* charged before a requeue */
  __u64 insert_ns;    /* block_rq_insert (queue time), 0 if not seen */
  __u32 bytes;
  __u32 disk;
  __u32 part;
  /* enum blkrr_rq_state. Leaving INFLIGHT is a compare-and-swap: whoever
   * wins (completion, requeue, re-use of the rq) owns the request. */
  __u32 state;
  __u16 flags;
  __u8 op;
  __u8 rec_flags;
  __u8 emit;  /* 1: passes the filters, becomes a record */
  __u8 match; /* the creator passes the task filters */
  __u8 didx;  /* index of the disk in the selection (device state slot) */
  __u8 fault; /* fault injection: its block_rq_complete was skipped on purpose */
  /* The stacked volume (dm, md) the request carries I/O of, 0 if none. */
  __u32 vol;
  __u32 pad2;
  /* Checker pass (check_gen) that first found the kernel's request no
   * longer in flight; 0 when it was in flight at the last pass. */
  __u64 suspect_gen;
};

/* Ring-buffer record: one finished (or given up) request. */
struct blkrr_event {
  __u64 issue_ns;
  __u64 complete_ns; /* ~0 when not seen */
  __u64 disk_time_ns;
  __u64 sector;
  __u64 cgroup_id;
  __u64 insert_ns; /* 0 when not inserted through a scheduler or not tracked */
  __u32 bytes;
  __u32 disk;
  __u32 part;
  __u32 pid;
  __u32 tgid;
  __s32 error;
  __u16 flags;
  __u8 op;
  __u8 rec_flags;
  char comm[BLKRR_COMM_LEN];
  __u32 pad;
};

/* Device selection (read-only data): selected whole disks, each optionally
 * restricted to sector ranges (partitions); nr_ranges == 0: the whole disk. */
struct blkrr_range {
  __u64 start;
  __u64 end; /* exclusive */
};
struct blkrr_dev_sel {
  __u32 disk;
  __u32 nr_ranges;
  struct blkrr_range ranges[BLKRR_MAX_RANGES];
};

/* Volume sectors [vol_start, vol_start + len) of stacked device `vol` are
 * sectors [disk_start, disk_start + disk_len) of whole disk `disk` (a
 * mirror: one piece per member). A striped member (stripes > 1: dm striped,
 * md RAID0) holds only its chunks of them: chunks of `chunk` sectors dealt
 * out to `stripes` members, vol_start `phase` sectors into a chunk of this
 * member (member `stripe`), its chunks contiguous on the disk from
 * disk_start (userspace/core/volume_stripes.h). A linear piece has
 * stripes 1, chunk and phase 0 and disk_len len. */
struct blkrr_seg {
  __u64 vol_start;
  __u64 len;
  __u64 disk_start;
  __u64 disk_len;
  __u64 chunk;
  __u64 phase;
  __u32 vol;
  __u32 disk;
  __u32 stripes;
  __u32 stripe;
};

/* Where piece s (its fields as scalars: the BPF side reads them from
 * read-only data) takes a volume bio [sector, end): a linear piece at
 * `sector` when it holds it; a striped member at the first sector of the
 * bio that lies in one of its chunks. Sets *disk_sector to that sector's
 * disk sector and returns how many sectors from there lie in the bio, the
 * piece and (striped) that chunk; 0 when the piece takes none. */
static inline __u64 blkrr_seg_take(__u64 vol_start, __u64 len, __u64 disk_start, __u64 chunk,
                                   __u64 phase, __u32 stripes, __u64 sector, __u64 end,
                                   __u64* disk_sector) {
  __u64 a = sector > vol_start ? sector : vol_start;
  if (a >= end || a - vol_start >= len) return 0;
  __u64 n = len - (a - vol_start);
  if (stripes < 2 || !chunk) {
    if (a != sector) return 0;
    *disk_sector = disk_start + (a - vol_start);
  } else {
    __u64 p = phase + (a - vol_start);
    __u64 k = p / chunk;
    __u64 r = k % stripes;
    if (r) { /* the member's next chunk */
      p = (k - r + stripes) * chunk;
      a = vol_start + (p - phase);
      if (a >= end || a - vol_start >= len) return 0;
      n = len - (a - vol_start);
    }
    __u64 off = p % chunk;
    *disk_sector = disk_start + (p / chunk / stripes) * chunk + off - phase;
    if (chunk - off < n) n = chunk - off;
  }
  return end - a < n ? end - a : n;
}

/* The submitter of a volume's bio, by the disk sector it maps to. */
struct blkrr_owner_key {
  __u32 disk;
  __u32 granule; /* 0: the bio's first sector; 1: a 1 MiB granule it covers */
  __u64 sector;
};
struct blkrr_owner {
  struct blkrr_task task;
  __u64 ns;
  __u32 vol;
  __u32 pad;
};

/* Adaptive disk time state of one whole disk; the lock field is the kernel's
 * struct bpf_spin_lock (4 bytes) on the BPF side. */
struct blkrr_devstate_pub {
  __u64 pending;
  __u64 last_complete_ns;
  __u64 busy_start_ns;
  __u64 busy_ns;        /* cumulative disk time charged */
  __u64 requests;       /* completions charged */
  __u64 max_latency_ns; /* longest issue->completion seen */
  __u64 sweep_applied;  /* sweeper corrections already applied */
  /* Device clock: the latest time applied under the lock. Timestamps are
   * read before the lock; each is raised to at least this value, so the
   * order of the device's issue and completion times is the lock order. */
  __u64 clock_ns;
  __u64 disk; /* dev_t of the disk (set by the loader in the array of selected disks) */
};

/* Aggregation key/value for `blkrr top` (per creator, partition, direction). */
struct blkrr_agg_key {
  __u64 cgroup_id;
  __u32 tgid;
  __u32 pid;
  __u32 part;
  __u32 disk;
  __u8 op;
  __u8 via; /* BLKRR_R_TASK_FROM_BIO, BLKRR_R_KERNEL_VIA_STACK bits */
  __u8 pad[6];
  char comm[BLKRR_COMM_LEN];
};
struct blkrr_agg_val {
  __u64 requests;
  __u64 bytes;
  __u64 disk_time_ns;
  __u64 latency_ns;
  __u32 uid;  /* of the task whose request created the entry */
  __u32 ppid; /* its parent's tgid, 0 when unknown */
  __u64 lat_hist[BLKRR_LAT_SLOTS];
};

#endif
