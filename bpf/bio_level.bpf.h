/* SPDX-License-Identifier: GPL-2.0 */
/* Bio-level capture of bio-based devices whose mapping blkrr cannot follow
 * to their disks (dm thin, snapshot, cache; md RAID5/6/10; zram, brd): each
 * bio of the selected device, noted at block_bio_queue in the submitter's
 * context and emitted at block_bio_complete like a request (the device, its
 * own sectors, queue time as issue, disk time by the adaptive rule over the
 * device's bios). The entries live in the request map keyed by the bio
 * pointer, flagged BLKRR_R_BIO_LEVEL (the checker leaves them to the
 * sweeper). Loaded only when the loader selected such a device
 * (docs/capture.md, "Bio-level capture"). Included at the end of
 * capture.bpf.c: it uses its maps and helpers. */
#pragma once

/* Selection indexes (bits of cfg_disks) of the devices captured at the bio
 * level; 0: none (the programs are not loaded then). */
const volatile __u64 cfg_bio_level_mask = 0;

static __always_inline __u8 bio_level_selected(__u32 dev, __u32* idx) {
  if (!cfg_bio_level_mask || !disk_selected(dev, idx)) return 0;
  return *idx < 64 && ((cfg_bio_level_mask >> *idx) & 1);
}

/* Submitter context: the bio as the device's issued request. */
static __always_inline int bio_level_queue(struct bio* bio) {
  __u32 idx;
  __u32 dev = bio_dev(bio);
  if (!bio_level_selected(dev, &idx)) return 0;
  __u64 now = bpf_ktime_get_ns();
  count(BLKRR_CNT_ISSUES);
  __u8 op;
  __u16 flags;
  translate_op(bio->bi_opf, &op, &flags);
  __u64 sector = bio->bi_iter.bi_sector;
  __u32 bytes = bio->bi_iter.bi_size;
  /* An empty write with a preflush is the device's flush. */
  if (!bytes && op == BLKRR_OP_WRITE) op = BLKRR_OP_FLUSH;
  __u64 key = (__u64)bio;
  struct blkrr_inflight* e = bpf_map_lookup_elem(&inflight, &key);
  /* The pointer queued again while noted: the old bio's completion was lost. */
  if (e && e->state == BLKRR_RQ_INFLIGHT) give_up_stale(e);
  if (!e) {
    struct blkrr_inflight n = {};
    e = map_lookup_or_init(&inflight, &key, &n);
    if (!e) {
      count(BLKRR_CNT_INFLIGHT_FULL);
      return 0;
    }
  }
  fill_task(&e->task);
  e->match = task_matches(&e->task);
  e->rec_flags = BLKRR_R_BIO_LEVEL;
  e->disk_time_ns = 0;
  e->insert_ns = 0;
  e->vol = 0;
  if (DEVSTATE_ON) now = add_pending(dev, idx, now);
  mark_issued(e, now, sector, bytes, dev, idx, dev, op, flags);
  return 0;
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(blkrr_biolvl_queue, struct bio* bio) {
  return bio_level_queue(bio);
}

/* Kernels before 5.11 pass the request_queue first. */
SEC("tp_btf/block_bio_queue")
int BPF_PROG(blkrr_biolvl_queue_q, struct request_queue* q, struct bio* bio) {
  return bio_level_queue(bio);
}

/* The bio ended (every kernel passes the request_queue first). A bio the
 * driver split off completes without a noted queue (the original, noted,
 * completes after its parts): ignored and counted. */
SEC("tp_btf/block_bio_complete")
int BPF_PROG(blkrr_biolvl_complete, struct request_queue* q, struct bio* bio) {
  __u32 idx;
  if (!bio_level_selected(bio_dev(bio), &idx)) return 0;
  __u64 key = (__u64)bio;
  struct blkrr_inflight* e = bpf_map_lookup_elem(&inflight, &key);
  if (!e || e->state != BLKRR_RQ_INFLIGHT || !(e->rec_flags & BLKRR_R_BIO_LEVEL)) {
    count(BLKRR_CNT_BIO_NOT_QUEUED);
    return 0;
  }
  if (fault_skip_completion()) {
    count(BLKRR_CNT_FAULT_SKIPPED);
    e->fault = 1;
    return 0;
  }
  finish(e, bpf_ktime_get_ns(), bio->bi_status);
  return 0;
}
