// SPDX-License-Identifier: GPL-2.0
/* Benchmark floor: the three tracepoints blkrr's capture attaches to, with
 * programs that do nothing (or only count). What any tp_btf tracer of these
 * events costs at least on this kernel; tests/bench/record.sh runs it next
 * to blkrr so the cost of blkrr's own work can be told apart. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u8 cfg_count = 0;
/* Busy work (clock reads) per event, to measure where a tracer's cost
 * turns into lost IOPS: in the submitter's issue path or in the device's
 * completion path. */
const volatile __u32 cfg_burn_issue = 0;
const volatile __u32 cfg_burn_complete = 0;

static __always_inline void burn(__u32 n) {
  for (__u32 i = 0; i < n && i < 1024; i++) bpf_ktime_get_ns();
}

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 3);
  __type(key, __u32);
  __type(value, __u64);
} floor_counts SEC(".maps");

static __always_inline void bump(__u32 idx) {
  if (!cfg_count) return;
  __u64* v = bpf_map_lookup_elem(&floor_counts, &idx);
  if (v) *v += 1;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(floor_io_start, struct request* rq) {
  bump(0);
  return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(floor_issue, struct request* rq) {
  bump(1);
  burn(cfg_burn_issue);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(floor_complete, struct request* rq, blk_status_t error, unsigned int nr_bytes) {
  bump(2);
  burn(cfg_burn_complete);
  return 0;
}
