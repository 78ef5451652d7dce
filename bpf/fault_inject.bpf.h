/* SPDX-License-Identifier: GPL-2.0 */
/* Fault injection for tests, behind one switch: cfg_fault_skip_every
 * (BLKRR_FAULT_SKIP_COMPLETION). It ignores every Nth completion on the
 * selected devices, as the kernel sometimes does by not running the program
 * at all. The shipped object is the one the tests load: at 0 (always,
 * outside tests) the switch is read-only data and the verifier drops the
 * code. */
#pragma once

#include "vmlinux.h"

#include "capture_events.h"

const volatile __u32 cfg_fault_skip_every = 0;
/* 1: the skipped request's whole completion is lost (block_io_done ignores
 * it too); 0: only block_rq_complete is skipped. */
const volatile __u8 cfg_fault_whole = 1;
__u64 fault_seq = 0;

/* Whether to ignore this completion (every cfg_fault_skip_every-th). */
static __always_inline __u8 fault_skip_completion(void) {
  if (!cfg_fault_skip_every) return 0;
#ifndef BLKRR_NO_FETCH_ATOMICS
  __u64 seq = __sync_fetch_and_add(&fault_seq, 1);
#else
  __u64 seq = fault_seq++;
#endif
  return seq % cfg_fault_skip_every == cfg_fault_skip_every - 1;
}

/* Whether block_io_done must ignore the entry too (whole completion lost). */
static __always_inline __u8 fault_lost_whole(const struct blkrr_inflight* e) {
  return cfg_fault_skip_every && cfg_fault_whole && e->fault;
}
