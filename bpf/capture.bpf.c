// SPDX-License-Identifier: GPL-2.0
/* blkrr capture: block-layer requests from issue to completion, attributed to
 * the task that created them, with the adaptive disk time of each request.
 * See docs/capture.md for the attribution rule, the counters and how kernel
 * differences are detected (BTF/CO-RE only, never version numbers). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bits.bpf.h"
#include "capture_events.h"
#include "capture_config.bpf.h"
#include "core_fixes.bpf.h"
#include "counters.bpf.h"
#include "devstate.bpf.h"
#include "fault_inject.bpf.h"
#include "maps.bpf.h"
#include "stack_attr.bpf.h"

char LICENSE[] SEC("license") = "GPL";

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 64 << 20); /* resized by the loader */
} events SEC(".maps");

/* Every tracked request from block_io_start (or issue) to completion. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, BLKRR_INFLIGHT_MAX); /* resizable by the loader */
  __type(key, __u64);
  __type(value, struct blkrr_inflight);
} inflight SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, BLKRR_AGG_MAX);
  __type(key, struct blkrr_agg_key);
  __type(value, struct blkrr_agg_val);
} agg SEC(".maps");

static __always_inline void fill_task(struct blkrr_task* t) {
  __u64 pt = bpf_get_current_pid_tgid();
  t->pid = (__u32)pt;
  t->tgid = pt >> 32;
  t->cgroup_id = cfg_lean && !cfg_filter_cgroup ? 0 : bpf_get_current_cgroup_id();
  bpf_get_current_comm(t->comm, sizeof(t->comm));
  t->uid = BLKRR_NO_UID;
  t->ppid = 0;
  t->kthread = cfg_nsegs ? current_is_kthread() : 0;
  t->pad = 0;
  if (cfg_aggregate) {
    /* top's UID and PPID columns, kept with the entry so that a process
     * which exited before the read is still shown right. */
    t->uid = (__u32)bpf_get_current_uid_gid();
    t->ppid = current_ppid();
  }
}

static __always_inline __u8 task_matches(const struct blkrr_task* t) {
  if (cfg_filter_tgid && t->tgid != cfg_tgid) return 0;
  if (cfg_filter_cgroup && t->cgroup_id != cfg_cgroup_id) return 0;
  if (cfg_filter_comm) {
    for (int i = 0; i < BLKRR_COMM_LEN; i++) {
      if (t->comm[i] != cfg_comm[i]) return 0;
      if (!t->comm[i]) break;
    }
  }
  return 1;
}

/* The sector is in the selection of disk idx (its partitions, if any). */
static __always_inline __u8 in_ranges(__u32 idx, __u64 sector) {
  if (!cfg_filter_dev || idx >= BLKRR_MAX_DISKS) return 1;
  __u32 n = cfg_disks[idx].nr_ranges;
  if (!n) return 1;
  for (int i = 0; i < BLKRR_MAX_RANGES; i++) {
    if (i >= n) break;
    if (sector >= cfg_disks[idx].ranges[i].start && sector < cfg_disks[idx].ranges[i].end) return 1;
  }
  return 0;
}

/* Whether the disk is selected, and its selection index (0 without a device
 * filter). Plain compares against read-only data: no map lookup. */
static __always_inline __u8 disk_selected(__u32 disk, __u32* idx) {
  *idx = 0;
  if (!cfg_filter_dev) return 1;
  for (__u32 i = 0; i < BLKRR_MAX_DISKS; i++) {
    if (i >= cfg_ndisks) break;
    if (cfg_disks[i].disk == disk) {
      *idx = i;
      return 1;
    }
  }
  return 0;
}

static __always_inline __u64 wake_flags(__u64 nth) {
  if (!cfg_wake_every) return 0;
  return (nth & (cfg_wake_every - 1)) == 0 ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline void emit(const struct blkrr_inflight* c, __u64 complete_ns, __u64 dt,
                                 __s32 error, __u8 rec_flags) {
  struct blkrr_event* ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
  if (!ev) {
    count(BLKRR_CNT_RINGBUF_FULL);
    return;
  }
  ev->issue_ns = c->issue_ns;
  ev->complete_ns = complete_ns;
  ev->disk_time_ns = dt;
  ev->sector = c->sector;
  ev->cgroup_id = c->task.cgroup_id;
  ev->insert_ns = c->insert_ns;
  ev->bytes = c->bytes;
  ev->disk = c->disk;
  ev->part = c->part;
  ev->pid = c->task.pid;
  ev->tgid = c->task.tgid;
  ev->error = error;
  ev->flags = c->flags;
  ev->op = c->op;
  ev->rec_flags = c->rec_flags | rec_flags;
  __builtin_memcpy(ev->comm, c->task.comm, BLKRR_COMM_LEN);
  ev->pad = 0;
  bpf_ringbuf_submit(ev, wake_flags(count_ret(BLKRR_CNT_EVENTS)));
}

/* The histogram slot of a latency (capture_events.h): floor(log2(us)) + 1, without
 * loops for old verifiers. */
static __always_inline __u32 lat_slot(__u64 lat_ns) {
  __u64 us = lat_ns / 1000;
  if (!us) return 0;
  __u32 s = log2_u64(us) + 1;
  return s < BLKRR_LAT_SLOTS ? s : BLKRR_LAT_SLOTS - 1;
}

static __always_inline void aggregate(const struct blkrr_inflight* c, __u64 dt, __u64 lat) {
  struct blkrr_agg_key k = {};
  k.cgroup_id = c->task.cgroup_id;
  k.tgid = c->task.tgid;
  k.pid = c->task.pid;
  /* I/O of a stacked volume is shown on the volume. */
  k.part = c->vol ? c->vol : c->part;
  k.disk = c->disk;
  k.op = c->op;
  k.via = c->rec_flags & (BLKRR_R_TASK_FROM_BIO | BLKRR_R_KERNEL_VIA_STACK);
  __builtin_memcpy(k.comm, c->task.comm, BLKRR_COMM_LEN);
  struct blkrr_agg_val* v = bpf_map_lookup_elem(&agg, &k);
  if (!v) {
    /* A new entry carries the creator's uid and parent: the process may be
     * gone when user space reads it. */
    struct blkrr_agg_val zero = {};
    zero.uid = c->task.uid;
    zero.ppid = c->task.ppid;
    /* Twice: user space may take (delete) the entry between our create and
     * lookup. */
    for (int i = 0; i < 2 && !v; i++) v = map_lookup_or_init(&agg, &k, &zero);
    if (!v) {
      count(BLKRR_CNT_AGG_FULL);
      return;
    }
  }
  __sync_fetch_and_add(&v->requests, 1);
  __sync_fetch_and_add(&v->bytes, c->bytes);
  __sync_fetch_and_add(&v->disk_time_ns, dt);
  __sync_fetch_and_add(&v->latency_ns, lat);
  __u32 slot = lat_slot(lat);
  if (slot < BLKRR_LAT_SLOTS) __sync_fetch_and_add(&v->lat_hist[slot], 1);
}

/* The entry of rq is still in flight although rq is being reused: its
 * completion never reached us. Emit it flagged and free the device slot. */
#ifndef BLKRR_NO_FETCH_ATOMICS
static __always_inline __u8 take(struct blkrr_inflight* e, __u32 to) {
  return __sync_val_compare_and_swap(&e->state, BLKRR_RQ_INFLIGHT, to) == BLKRR_RQ_INFLIGHT;
}
#else
/* The object for kernels before 5.12 (no BPF compare-and-swap or fetching
 * atomics; the loader picks it after a trial load): a plain test and set.
 * Two programs racing for the same request on two CPUs (a completion and a
 * re-use of its pointer in the same instant) could both own it there. */
static __always_inline __u8 take(struct blkrr_inflight* e, __u32 to) {
  if (e->state != BLKRR_RQ_INFLIGHT) return 0;
  e->state = to;
  return 1;
}
#endif

static __always_inline void give_up(struct blkrr_inflight* e, __u32 counter) {
  struct blkrr_inflight old = *e;
  if (!take(e, BLKRR_RQ_DONE)) return; /* someone else owns it */
  if (DEVSTATE_ON) drop_pending(old.disk, old.didx);
  count(counter);
  if (cfg_emit && old.emit) emit(&old, ~0ull, old.disk_time_ns, 0, BLKRR_R_COMPLETION_NOT_SEEN);
}

static __always_inline void give_up_stale(struct blkrr_inflight* e) {
  give_up(e, BLKRR_CNT_NOT_SEEN_REISSUE);
}

/* Submitter context: remember who created the request and whether it passes
 * the task filters. */
static __always_inline int start_request(struct request* rq) {
  __u32 idx;
  __u32 disk = rq_disk_dev(rq);
  if (!disk_selected(disk, &idx)) return 0;
  __u64 key = (__u64)rq;
  struct blkrr_inflight* e = bpf_map_lookup_elem(&inflight, &key);
  if (e && e->state == BLKRR_RQ_INFLIGHT) give_up_stale(e);
  if (e) {
    /* The entry of an earlier use of this rq: reuse it in place. */
    fill_task(&e->task);
    e->match = task_matches(&e->task);
    e->rec_flags = 0;
    e->disk_time_ns = 0;
    e->insert_ns = 0;
    e->state = BLKRR_RQ_STARTED;
    return 0;
  }
  struct blkrr_inflight n = {};
  fill_task(&n.task);
  n.match = task_matches(&n.task);
  n.state = BLKRR_RQ_STARTED;
  if (bpf_map_update_elem(&inflight, &key, &n, BPF_ANY)) count(BLKRR_CNT_INFLIGHT_FULL);
  return 0;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(blkrr_io_start, struct request* rq) {
  return start_request(rq);
}

/* Issue-time fields of an in-flight entry; state last: from here on the
 * entry is in flight. */
static __always_inline void mark_issued(struct blkrr_inflight* e, __u64 now, __u64 sector,
                                        __u32 bytes, __u32 disk, __u32 idx, __u32 part, __u8 op,
                                        __u16 flags) {
  e->issue_ns = now;
  e->sector = sector;
  e->bytes = bytes;
  e->disk = disk;
  e->part = part;
  e->didx = idx;
  e->op = op;
  e->flags = flags;
  e->emit = e->match && in_ranges(idx, sector);
  e->suspect_gen = 0;
  e->fault = 0;
  e->state = BLKRR_RQ_INFLIGHT;
}

/* No block_io_start was seen: attribute to the task issuing the request. */
static __always_inline void attribute_at_issue(struct blkrr_inflight* e) {
  fill_task(&e->task);
  e->match = task_matches(&e->task);
  e->rec_flags = BLKRR_R_TASK_FROM_ISSUE;
  count(BLKRR_CNT_TASK_FROM_ISSUE);
}

/* A request below a stacked volume: charged to the submitter of the
 * volume's bio (bpf/stack_attr.bpf.h); the task filters then apply to it. */
static __always_inline void through_stack(struct blkrr_inflight* e, __u32 disk, __u64 sector,
                                          __u64 now) {
  __u32 vol = 0;
  __u8 rf = attribute_through_stack(&e->task, &vol, disk, sector, now);
  if (rf & BLKRR_R_TASK_FROM_BIO) {
    e->match = task_matches(&e->task);
    e->rec_flags &= ~BLKRR_R_TASK_FROM_ISSUE;
  }
  e->rec_flags |= rf;
  e->vol = vol;
}

static __always_inline int on_issue(struct request* rq) {
  __u32 idx;
  __u32 disk = rq_disk_dev(rq);
  if (!disk_selected(disk, &idx)) return 0; /* before the clock read: other disks pay less */
  __u64 now = bpf_ktime_get_ns();
  count(BLKRR_CNT_ISSUES);

  __u64 key = (__u64)rq;
  __u8 op;
  __u16 flags;
  translate_op(rq->cmd_flags, &op, &flags);
  __u64 sector = rq->__sector;
  __u32 bytes = rq->__data_len;
  __u32 part = rq_part_dev(rq, disk);

  struct blkrr_inflight* e = bpf_map_lookup_elem(&inflight, &key);
  /* Issued again while still in flight: its completion never reached us. */
  if (e && e->state == BLKRR_RQ_INFLIGHT) give_up_stale(e);
  if (!e || e->state != BLKRR_RQ_STARTED) {
    /* No block_io_start (older kernel, flush machinery, before attach). */
    if (!e) {
      struct blkrr_inflight n = {};
      e = map_lookup_or_init(&inflight, &key, &n);
      if (!e) {
        count(BLKRR_CNT_INFLIGHT_FULL);
        return 0;
      }
    }
    attribute_at_issue(e);
    e->disk_time_ns = 0;
    e->insert_ns = 0;
  }
  /* Created at block_io_start (or requeued): fill in the issue in place. */
  if (cfg_nsegs) through_stack(e, disk, sector, now);
  if (DEVSTATE_ON) now = add_pending(disk, idx, now);
  mark_issued(e, now, sector, bytes, disk, idx, part, op, flags);
  return 0;
}

/* A bio on a stacked volume (loaded only when the loader gave volumes):
 * its submitter, noted under the disk sectors it maps to. */
static __always_inline int on_bio_queue(struct bio* bio) {
  __u32 dev = bio_dev(bio);
  if (!volume_selected(dev)) return 0;
  __u32 bytes = bio->bi_iter.bi_size;
  if (!bytes) return 0; /* a flush: no sector of its own */
  struct blkrr_owner o = {};
  fill_task(&o.task);
  o.ns = bpf_ktime_get_ns();
  o.vol = dev;
  count_add(BLKRR_CNT_STACK_BIOS, note_bio(dev, bio->bi_iter.bi_sector, bytes >> 9, &o));
  return 0;
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(blkrr_bio_queue, struct bio* bio) {
  return on_bio_queue(bio);
}

/* Kernels before 5.11 pass the request_queue first. */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(blkrr_bio_queue_q, struct request_queue* q, struct bio* bio) {
  return on_bio_queue(bio);
}

/* Kernels since 5.11: the request is the only argument. */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(blkrr_issue, struct request* rq) {
  return on_issue(rq);
}

/* Kernels before 5.11 pass the request_queue first (the loader picks the
 * program whose prototype the kernel's BTF has). */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(blkrr_issue_q, struct request_queue* q, struct request* rq) {
  return on_issue(rq);
}

/* The request ended at now: charge, count, aggregate and emit it. Whoever
 * moves the entry out of INFLIGHT owns the request. The entry is read in
 * place after that: nobody else writes it until the kernel frees the
 * request, after this program (no copy on this path, which runs in the
 * device's completion context). Returns 1 when this call owned it. */
static __always_inline __u8 finish(struct blkrr_inflight* e, __u64 now, __s32 error) {
  if (!take(e, BLKRR_RQ_DONE)) return 0;
  __u64 dt = e->disk_time_ns;
  if (DEVSTATE_ON) dt += charge(e->disk, e->didx, &now, e->issue_ns, 1);
  __u64 lat = now > e->issue_ns ? now - e->issue_ns : 0;
  count(BLKRR_CNT_COMPLETIONS);
  if (!e->emit) return 1;
  if (cfg_aggregate) aggregate(e, dt, lat);
  if (cfg_emit) emit(e, now, dt, error, 0);
  return 1;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(blkrr_complete, struct request* rq, blk_status_t error, unsigned int nr_bytes) {
  /* Other disks leave at once: a compare against read-only data, before the
   * clock read and the request map. */
  __u32 idx;
  if (!disk_selected(rq_disk_dev(rq), &idx)) return 0;
  if (fault_skip_completion()) {
    count(BLKRR_CNT_FAULT_SKIPPED);
    __u64 fkey = (__u64)rq;
    struct blkrr_inflight* f = bpf_map_lookup_elem(&inflight, &fkey);
    if (f) f->fault = 1;
    return 0;
  }
  __u64 now = bpf_ktime_get_ns();
  __u64 key = (__u64)rq;
  struct blkrr_inflight* e = bpf_map_lookup_elem(&inflight, &key);
  if (!e || e->state != BLKRR_RQ_INFLIGHT) {
    /* Counted only inside the selected sectors: a request outside them can
     * hide none of the selection's. (A write with a flush before and after
     * it on a disk without FUA, like md's superblock writes, completes a
     * second time at the end of its flush sequence: seen outside a
     * volume's pieces, that is not a lost issue.) */
    if (in_ranges(idx, rq->__sector)) count(BLKRR_CNT_NO_ISSUE);
    return 0;
  }
  if (nr_bytes < rq->__data_len) {
    e->rec_flags |= BLKRR_R_PARTIAL;
    count(BLKRR_CNT_PARTIAL);
    return 0;
  }
  finish(e, now, error);
  return 0;
}

/* Second completion source where the checker cannot run (kernels that deny
 * map iterators): the kernel runs block_io_done after block_rq_complete
 * when it ends a request, so an entry still in flight here lost its
 * block_rq_complete. Loaded only then, and only on kernels that have it. */
SEC("tp_btf/block_io_done")
int BPF_PROG(blkrr_io_done, struct request* rq) {
  __u32 idx;
  if (!disk_selected(rq_disk_dev(rq), &idx)) return 0;
  __u64 key = (__u64)rq;
  struct blkrr_inflight* e = bpf_map_lookup_elem(&inflight, &key);
  if (!e || e->state != BLKRR_RQ_INFLIGHT) return 0;
  if (fault_lost_whole(e)) return 0;
  if (finish(e, bpf_ktime_get_ns(), 0)) count(BLKRR_CNT_DONE_FALLBACK);
  return 0;
}

/* The request goes back to the queue: it left the device (charged like a
 * completion) and keeps its creator and disk time for the next issue. */
static __always_inline int on_requeue(struct request* rq) {
  __u64 now = bpf_ktime_get_ns();
  __u64 key = (__u64)rq;
  struct blkrr_inflight* e = bpf_map_lookup_elem(&inflight, &key);
  if (!e || e->state != BLKRR_RQ_INFLIGHT) return 0;
  if (!take(e, BLKRR_RQ_STARTED)) return 0;
  count(BLKRR_CNT_REQUEUE);
  if (DEVSTATE_ON) e->disk_time_ns += charge(e->disk, e->didx, &now, e->issue_ns, 0);
  e->rec_flags |= BLKRR_R_REQUEUED;
  return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(blkrr_requeue, struct request* rq) {
  return on_requeue(rq);
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(blkrr_requeue_q, struct request_queue* q, struct request* rq) {
  return on_requeue(rq);
}

/* Queue time (snoop -Q): loaded only when asked for and the kernel has the
 * tracepoint. The request's entry exists from block_io_start. */
static __always_inline int on_insert(struct request* rq) {
  __u64 key = (__u64)rq;
  struct blkrr_inflight* e = bpf_map_lookup_elem(&inflight, &key);
  /* Kernels without block_io_start: a request is inserted (into a
   * scheduler, or from a plug flushed when its task sleeps) in the context
   * of the task that created it, and often issued later by a kernel
   * worker: attribute it here. A requeued request (STARTED) keeps its
   * creator. */
  if (cfg_attr_insert && (!e || e->state != BLKRR_RQ_STARTED)) {
    start_request(rq);
    e = bpf_map_lookup_elem(&inflight, &key);
  }
  if (e && e->state == BLKRR_RQ_STARTED) e->insert_ns = bpf_ktime_get_ns();
  return 0;
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(blkrr_insert, struct request* rq) {
  return on_insert(rq);
}

SEC("tp_btf/block_rq_insert")
int BPF_PROG(blkrr_insert_q, struct request_queue* q, struct request* rq) {
  return on_insert(rq);
}

/* The checker: an iterator over the request map, run by the loader every
 * 100 ms. An entry that is INFLIGHT while the kernel's request is no longer
 * in flight (completed and freed, or idle for its next use) lost its
 * completion: the kernel did not run block_rq_complete for it. Given up on
 * the second pass that finds it so (the issue tracepoint fires just before
 * the kernel marks the request in flight), long before the request is reused
 * or swept, so that the device does not look busy meanwhile. */
volatile __u64 check_gen = 0; /* raised by the loader before each pass */

SEC("iter/bpf_map_elem")
int blkrr_check(struct bpf_iter__bpf_map_elem* ctx) {
  __u64* key = ctx->key;
  struct blkrr_inflight* e = ctx->value;
  if (!key || !e || e->state != BLKRR_RQ_INFLIGHT) return 0;
  if (e->rec_flags & BLKRR_R_BIO_LEVEL) return 0; /* a bio: no request to read */
  if (!bpf_core_field_exists(((struct request*)0)->state)) return 0;
  struct request* rq = (struct request*)*key;
  enum mq_rq_state st;
  if (bpf_core_read(&st, sizeof(st), &rq->state)) return 0;
  if (st == bpf_core_enum_value(enum mq_rq_state, MQ_RQ_IN_FLIGHT)) {
    e->suspect_gen = 0;
    return 0;
  }
  __u64 gen = check_gen;
  if (!e->suspect_gen) {
    e->suspect_gen = gen;
    count(BLKRR_CNT_CHECK_SUSPECTS);
    return 0;
  }
  if (e->suspect_gen < gen) give_up(e, BLKRR_CNT_NOT_SEEN_CHECKED);
  return 0;
}

#include "bio_level.bpf.h"
