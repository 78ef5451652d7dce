/* Minimal kernel types for bpf/capture.bpf.c, used only when the build
 * machine has no /sys/kernel/btf/vmlinux to generate vmlinux.h from.
 * Only the fields the program reads: CO-RE relocates every access against
 * the running kernel's BTF at load time, so offsets here do not matter. */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

typedef unsigned char __u8;
typedef signed char __s8;
typedef unsigned short __u16;
typedef short __s16;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef long long __s64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __u32 __be32;
typedef __u16 __be16;
typedef __u32 __wsum;
typedef _Bool bool;
enum { false = 0, true = 1 };

typedef __u32 dev_t;
typedef __u64 sector_t;
typedef __u32 blk_opf_t;
typedef __u8 blk_status_t;

/* UAPI constants used with BPF maps and helpers (stable ABI). */
enum bpf_map_type {
  BPF_MAP_TYPE_HASH = 1,
  BPF_MAP_TYPE_ARRAY = 2,
  BPF_MAP_TYPE_PERCPU_ARRAY = 6,
  BPF_MAP_TYPE_LRU_HASH = 9,
  BPF_MAP_TYPE_RINGBUF = 27,
};
enum { BPF_ANY = 0, BPF_NOEXIST = 1, BPF_EXIST = 2, BPF_F_LOCK = 4 };
enum { BPF_RB_NO_WAKEUP = 1, BPF_RB_FORCE_WAKEUP = 2 };
enum { BPF_RB_AVAIL_DATA = 0, BPF_RB_RING_SIZE = 1, BPF_RB_CONS_POS = 2, BPF_RB_PROD_POS = 3 };

struct bpf_spin_lock {
  __u32 val;
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct gendisk {
  int major;
  int first_minor;
};

struct block_device {
  dev_t bd_dev;
};

struct request_queue {
  struct gendisk* disk;
};

struct task_struct {
  unsigned int flags;
  int tgid;
  struct task_struct* real_parent;
};

enum mq_rq_state {
  MQ_RQ_IDLE = 0,
  MQ_RQ_IN_FLIGHT = 1,
  MQ_RQ_COMPLETE = 2,
};

struct request {
  struct request_queue* q;
  blk_opf_t cmd_flags;
  unsigned int __data_len;
  sector_t __sector;
  struct block_device* part;
  enum mq_rq_state state;
};

struct bvec_iter {
  sector_t bi_sector;
  unsigned int bi_size;
};

struct bio {
  struct block_device* bi_bdev;
  blk_opf_t bi_opf;
  blk_status_t bi_status;
  struct bvec_iter bi_iter;
};

/* Context of a map-element iterator program (iter/bpf_map_elem). */
struct bpf_iter_meta {
  void* seq;
  __u64 session_id;
  __u64 seq_num;
};
struct bpf_map {
  __u32 id;
};
struct bpf_iter__bpf_map_elem {
  struct bpf_iter_meta* meta;
  struct bpf_map* map;
  void* key;
  void* value;
};

#pragma clang attribute pop

/* Values are those of the kernel the header was written against; CO-RE
 * (bpf_core_enum_value) substitutes the running kernel's values. */
enum bpf_func_id {
  BPF_FUNC_get_current_task_btf = 158, /* 5.11+: the loader checks it exists */
};

enum req_op {
  REQ_OP_READ = 0,
  REQ_OP_WRITE = 1,
  REQ_OP_FLUSH = 2,
  REQ_OP_DISCARD = 3,
  REQ_OP_SECURE_ERASE = 5,
  REQ_OP_ZONE_APPEND = 7,
  REQ_OP_WRITE_ZEROES = 9,
};

enum req_flag_bits {
  __REQ_FAILFAST_DEV = 8,
  __REQ_SYNC = 11,
  __REQ_META = 12,
  __REQ_PRIO = 13,
  __REQ_NOMERGE = 14,
  __REQ_IDLE = 15,
  __REQ_FUA = 17,
  __REQ_PREFLUSH = 18,
  __REQ_RAHEAD = 19,
  __REQ_BACKGROUND = 20,
};

#endif
