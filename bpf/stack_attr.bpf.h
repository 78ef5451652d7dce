/* SPDX-License-Identifier: GPL-2.0 */
/* Attribution through stacked volumes (docs/capture.md): the submitter of a
 * bio on a dm or md volume is noted at block_bio_queue under the disk sector
 * the volume's map sends it to (the loader's cfg_segs, one per linear piece,
 * one per mirror member, one per member of a striped area); the disk
 * request that starts there is charged to that submitter instead of the
 * stacking driver's thread that issued it.
 * Included by capture.bpf.c only. */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "capture_events.h"
#include "capture_config.bpf.h"
#include "counters.bpf.h"

/* Submitters by (disk, sector): an LRU map, so that entries no request
 * took (a bio merged into the request before it) age out by themselves. */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, BLKRR_OWNERS_MAX);
  __type(key, struct blkrr_owner_key);
  __type(value, struct blkrr_owner);
} owners SEC(".maps");

/* 1 MiB granules: the fallback key of a request that starts inside a bio
 * (the block layer split the bio) rather than at its first sector. */
#define BLKRR_GRANULE_SHIFT 11
#define BLKRR_GRANULES_PER_BIO 4

static __always_inline __u8 owner_fresh(const struct blkrr_owner* o, __u64 now) {
  return now >= o->ns ? now - o->ns < cfg_owner_ttl_ns : 1;
}

/* A kernel thread's bio does not replace a user task's still fresh one at
 * the same place: it is a lower level of the same stack passing the user's
 * I/O on (dm-crypt writing to the linear volume below it). */
static __always_inline void put_owner(struct blkrr_owner_key* k, const struct blkrr_owner* o) {
  if (o->task.kthread) {
    struct blkrr_owner* old = bpf_map_lookup_elem(&owners, k);
    if (old && !old->task.kthread && owner_fresh(old, o->ns)) return;
  }
  bpf_map_update_elem(&owners, k, o, BPF_ANY);
}

/* Notes owner o of the bio [sector, sector + nsec) of device dev at every
 * piece of a volume that takes it (every member of a mirror; each member
 * of a striped volume whose chunks it reaches, at the first of them): at
 * its disk sector, and in the granules of the part of the bio in that
 * piece (in that chunk of a striped member). Returns 1 when noted, 0 if
 * not, for count_add() (no branch on it). */
static __always_inline __u64 note_bio(__u32 dev, __u64 sector, __u64 nsec,
                                      const struct blkrr_owner* o) {
  __u64 noted = 0;
  for (__u32 i = 0; i < BLKRR_MAX_SEGS; i++) {
    if (i >= cfg_nsegs) break;
    const volatile struct blkrr_seg* s = &cfg_segs[i];
    if (s->vol != dev) continue;
    /* The bio's bounds, copied for this piece in a way the verifier does not
     * link to the originals: comparing them with this piece's sectors then
     * narrows only the copies, so every path reaches the next piece with
     * the same bounds and the verifier's states there merge (without, it
     * walks the rest of the table once per way through this piece). */
    __u64 first = sector, end = sector + nsec;
    asm volatile("%0 |= 0" : "+r"(first));
    asm volatile("%0 |= 0" : "+r"(end));
    struct blkrr_owner_key k = {};
    __u64 d = 0;
    __u64 n = blkrr_seg_take(s->vol_start, s->len, s->disk_start, s->chunk, s->phase, s->stripes,
                             first, end, &d);
    if (!n) continue;
    k.disk = s->disk;
    k.sector = d;
    put_owner(&k, o);
    __u64 last = d + n;
    __u64 g = d >> BLKRR_GRANULE_SHIFT;
    k.granule = 1;
    for (int j = 0; j < BLKRR_GRANULES_PER_BIO; j++) {
      if ((g << BLKRR_GRANULE_SHIFT) >= last) break;
      k.sector = g;
      put_owner(&k, o);
      g++;
    }
    noted = 1; /* not a count: the verifier would follow each value apart */
  }
  return noted;
}

/* `dev` is a stacked volume with pieces in cfg_segs. */
static __always_inline __u8 volume_selected(__u32 dev) {
  for (__u32 i = 0; i < BLKRR_MAX_SEGS; i++) {
    if (i >= cfg_nsegs) break;
    if (cfg_segs[i].vol == dev) return 1;
  }
  return 0;
}

/* The stacked volume whose piece holds disk sector `sector`, 0 if none. */
static __always_inline __u32 volume_at(__u32 disk, __u64 sector) {
  for (__u32 i = 0; i < BLKRR_MAX_SEGS; i++) {
    if (i >= cfg_nsegs) break;
    const volatile struct blkrr_seg* s = &cfg_segs[i];
    if (s->disk == disk && sector >= s->disk_start && sector - s->disk_start < s->disk_len)
      return s->vol;
  }
  return 0;
}

/* At issue: the task of entry `e` (a disk request at sector) becomes the
 * submitter of the volume's bio that starts there; a request made by a kernel
 * thread that starts inside such a bio takes that bio's submitter; a kernel
 * thread's request in a volume with no submitter found keeps the thread and
 * is flagged. Returns the record flags to add. */
static __always_inline __u8 attribute_through_stack(struct blkrr_task* t, __u32* vol, __u32 disk,
                                                    __u64 sector, __u64 now) {
  struct blkrr_owner_key k = {};
  k.disk = disk;
  k.sector = sector;
  struct blkrr_owner* o = bpf_map_lookup_elem(&owners, &k);
  if (o && !owner_fresh(o, now)) o = 0;
  if (o) {
    *t = o->task;
    *vol = o->vol;
    bpf_map_delete_elem(&owners, &k);
  } else if (t->kthread) {
    k.granule = 1;
    k.sector = sector >> BLKRR_GRANULE_SHIFT;
    o = bpf_map_lookup_elem(&owners, &k);
    if (o && owner_fresh(o, now)) {
      *t = o->task;
      *vol = o->vol;
    } else {
      o = 0;
    }
  }
  if (o) {
    count(BLKRR_CNT_STACK_MATCHED);
    return BLKRR_R_TASK_FROM_BIO | (t->kthread ? BLKRR_R_KERNEL_VIA_STACK : 0);
  }
  if (!t->kthread) return 0;
  *vol = volume_at(disk, sector);
  if (!*vol) return 0;
  count(BLKRR_CNT_STACK_UNMATCHED);
  return BLKRR_R_KERNEL_VIA_STACK;
}
