/* SPDX-License-Identifier: GPL-2.0 */
/* The per-CPU counters user space sums (BLKRR_CNT_* in capture_events.h). */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "capture_events.h"

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, BLKRR_CNT_NR);
  __type(key, __u32);
  __type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 idx) {
  __u64* v = bpf_map_lookup_elem(&counters, &idx);
  if (v) *v += 1;
}

/* Adds n without a branch on it: the verifier need not tell apart the
 * paths that led to different values of n. */
static __always_inline void count_add(__u32 idx, __u64 n) {
  __u64* v = bpf_map_lookup_elem(&counters, &idx);
  if (v) *v += n;
}

/* count() returning this CPU's new value of the counter. */
static __always_inline __u64 count_ret(__u32 idx) {
  __u64* v = bpf_map_lookup_elem(&counters, &idx);
  if (!v) return 0;
  *v += 1;
  return *v;
}
