/* SPDX-License-Identifier: GPL-2.0 */
/* CO-RE shims: the kernel layouts blkrr's programs read that changed between
 * the kernels it supports. Each is found from the kernel's BTF at load time
 * (never from a version number); the kernel commit that changed the layout
 * is named beside each one. Included by capture.bpf.c only. */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "capture_events.h"

/* f3fa33acca9f ("block: remove the ->rq_disk field in struct request"),
 * v5.18: the disk is reached through the queue (d152c682f03c, v5.15, gave
 * the queue its ->disk). Older kernels keep it in the request. */
struct request___old {
  struct gendisk* rq_disk;
} __attribute__((preserve_access_index));

/* 0d02129e76ed ("block: merge struct block_device and struct hd_struct"),
 * v5.11: before it rq->part is a struct hd_struct (only its existence is
 * tested here). */
struct hd_struct___old {
  int partno;
} __attribute__((preserve_access_index));

/* ff07a02e9e8e ("treewide: Rename enum req_opf into enum req_op"), v6.0:
 * the same enumerators under the older enum's name. */
enum req_opf___old {
  REQ_OP_READ___old = 0,
  REQ_OP_WRITE___old = 1,
  REQ_OP_FLUSH___old = 2,
  REQ_OP_DISCARD___old = 3,
  REQ_OP_SECURE_ERASE___old = 5,
  REQ_OP_WRITE_ZEROES___old = 9,
  REQ_OP_ZONE_APPEND___old = 13,
};

static __always_inline __u32 mkdev(int major, int minor) {
  return ((__u32)major << 20) | ((__u32)minor & 0xfffff);
}

/* tp_btf arguments are BTF pointers: plain loads (CO-RE relocated), no
 * bpf_probe_read calls on the hot path. */
static __always_inline __u32 rq_disk_dev(struct request* rq) {
  struct gendisk* disk;
  if (bpf_core_field_exists(struct request___old, rq_disk))
    disk = ((struct request___old*)rq)->rq_disk;
  else
    disk = rq->q->disk;
  if (!disk) return 0;
  return mkdev(disk->major, disk->first_minor);
}

/* Partition device number; 0 when the kernel's request points to an
 * hd_struct (before 5.11): user space then finds it by sector. */
static __always_inline __u32 rq_part_dev(struct request* rq, __u32 disk) {
  if (bpf_core_type_exists(struct hd_struct___old)) return 0;
  struct block_device* part = rq->part;
  if (!part) return disk;
  return part->bd_dev;
}

/* The kernel's value of operation `name`, from whichever enum it has; ~0
 * when it has neither (never equal to a masked operation). */
#define OPV(name)                                                                                \
  (bpf_core_enum_value_exists(enum req_op, name) ? (__u32)bpf_core_enum_value(enum req_op, name) \
   : bpf_core_enum_value_exists(enum req_opf___old, name##___old)                                \
       ? (__u32)bpf_core_enum_value(enum req_opf___old, name##___old)                            \
       : ~0u)

/* Flag bit `kbit` of enum req_flag_bits (present in this kernel) set in cmd. */
#define FLAG(kbit, out)                                                     \
  if (bpf_core_enum_value_exists(enum req_flag_bits, kbit) &&               \
      (cmd & (1u << (bpf_core_enum_value(enum req_flag_bits, kbit) & 31)))) \
    f |= (out);

/* The request's operation and flags in blkrr's own encoding (capture_events.h). */
static __always_inline void translate_op(__u32 cmd, __u8* op, __u16* flags) {
  /* REQ_OP_BITS is the first flag bit, so the op mask follows from BTF too. */
  __u32 op_bits = bpf_core_enum_value(enum req_flag_bits, __REQ_FAILFAST_DEV) & 31;
  __u32 kop = cmd & ((1u << op_bits) - 1);
  __u8 o = BLKRR_OP_OTHER;
  __u16 f = 0;
  if (kop == OPV(REQ_OP_READ))
    o = BLKRR_OP_READ;
  else if (kop == OPV(REQ_OP_WRITE))
    o = BLKRR_OP_WRITE;
  else if (kop == OPV(REQ_OP_FLUSH))
    o = BLKRR_OP_FLUSH;
  else if (kop == OPV(REQ_OP_DISCARD))
    o = BLKRR_OP_DISCARD;
  else if (kop == OPV(REQ_OP_SECURE_ERASE))
    o = BLKRR_OP_SECURE_ERASE;
  else if (kop == OPV(REQ_OP_WRITE_ZEROES))
    o = BLKRR_OP_WRITE_ZEROES;
  else if (kop == OPV(REQ_OP_ZONE_APPEND))
    o = BLKRR_OP_ZONE_APPEND;
  FLAG(__REQ_SYNC, BLKRR_F_SYNC)
  FLAG(__REQ_META, BLKRR_F_META)
  FLAG(__REQ_FUA, BLKRR_F_FUA)
  FLAG(__REQ_PREFLUSH, BLKRR_F_PREFLUSH)
  FLAG(__REQ_RAHEAD, BLKRR_F_READAHEAD)
  FLAG(__REQ_BACKGROUND, BLKRR_F_BACKGROUND)
  FLAG(__REQ_NOMERGE, BLKRR_F_NOMERGE)
  FLAG(__REQ_IDLE, BLKRR_F_IDLE)
  FLAG(__REQ_PRIO, BLKRR_F_PRIO)
  *op = o;
  *flags = f;
}

/* The parent's tgid of the current task. 3ca1032ab7ab ("bpf: Implement
 * get_current_task_btf and RET_PTR_TO_BTF_ID"), v5.11: a BTF task pointer;
 * before it, read through the CO-RE helper. */
static __always_inline __u32 current_ppid(void) {
  if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)) {
    struct task_struct* cur = bpf_get_current_task_btf();
    struct task_struct* parent = cur->real_parent;
    return parent ? parent->tgid : 0;
  }
  struct task_struct* cur = (struct task_struct*)bpf_get_current_task();
  return BPF_CORE_READ(cur, real_parent, tgid);
}

/* 309dca309fc3 ("block: store a block_device pointer in struct bio"),
 * v5.12: before it a bio names its disk and partition number. */
struct bio___old {
  struct gendisk* bi_disk;
  __u8 bi_partno;
} __attribute__((preserve_access_index));

/* The device a bio was submitted to (tp_btf argument: plain loads). */
static __always_inline __u32 bio_dev(struct bio* bio) {
  if (bpf_core_field_exists(struct bio___old, bi_disk)) {
    struct bio___old* b = (struct bio___old*)bio;
    struct gendisk* d = b->bi_disk;
    if (!d) return 0;
    return mkdev(d->major, d->first_minor + b->bi_partno);
  }
  struct block_device* bdev = bio->bi_bdev;
  return bdev ? bdev->bd_dev : 0;
}

/* The current task is a kernel thread (PF_KTHREAD, the same value in every
 * kernel blkrr supports): writeback workers, kcryptd, md's threads. */
#define BLKRR_PF_KTHREAD 0x00200000
static __always_inline __u32 current_is_kthread(void) {
  if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf))
    return (bpf_get_current_task_btf()->flags & BLKRR_PF_KTHREAD) ? 1 : 0;
  struct task_struct* cur = (struct task_struct*)bpf_get_current_task();
  return (BPF_CORE_READ(cur, flags) & BLKRR_PF_KTHREAD) ? 1 : 0;
}
