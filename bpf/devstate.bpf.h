/* SPDX-License-Identifier: GPL-2.0 */
/* Device state for the adaptive disk time (docs/capture.md): per disk, the
 * requests pending on it, the start of its busy period and its device clock,
 * under a bpf_spin_lock. Everything that runs under the lock stays
 * __always_inline: the 5.10 and 6.1 verifiers refuse calls while it is held.
 * Included by capture.bpf.c only. */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "capture_events.h"
#include "capture_config.bpf.h"
#include "counters.bpf.h"
#include "maps.bpf.h"

struct devstate {
  struct bpf_spin_lock lock;
  __u32 seen_gen; /* sweep_gen applied last (low 32 bits) */
  struct blkrr_devstate_pub s;
};

/* Device state without a device filter: keyed by the disk's dev_t. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32);
  __type(value, struct devstate);
} devstate SEC(".maps");

/* Device state of the selected disks (-d), by selection index. */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, BLKRR_MAX_DISKS);
  __type(key, __u32);
  __type(value, struct devstate);
} devstate_sel SEC(".maps");

/* Written by the user-space sweeper only: cumulative number of in-flight
 * entries of the disk it deleted. Applied to pending under the lock. */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u32);
  __type(value, __u64);
} sweep_req SEC(".maps");

/* Raised by the user-space sweeper after it changed sweep_req: the hot path
 * looks at sweep_req only when this moved (a plain load from .bss). */
volatile __u64 sweep_gen = 0;

static __always_inline struct devstate* get_devstate(__u32 disk, __u32 idx) {
  if (cfg_filter_dev) return bpf_map_lookup_elem(&devstate_sel, &idx);
  struct devstate zero = {};
  struct devstate* ds = map_lookup_or_init(&devstate, &disk, &zero);
  if (!ds) count(BLKRR_CNT_DEVSTATE_FULL);
  return ds;
}

/* The device lock. Kernels before 5.12 (the object built with
 * BLKRR_NO_FETCH_ATOMICS) give tracing programs no bpf_spin_lock either:
 * there the device state is updated unlocked, and two CPUs updating one
 * disk at the same instant can mis-charge disk time (the records' other
 * fields stay exact; the idle check and the sweeper correct `pending`). */
#ifndef BLKRR_NO_FETCH_ATOMICS
#define dev_lock(ds) bpf_spin_lock(&(ds)->lock)
#define dev_unlock(ds) bpf_spin_unlock(&(ds)->lock)
#else
#define dev_lock(ds) ((void)(ds))
#define dev_unlock(ds) ((void)(ds))
#endif

/* The sweeper's cumulative correction count for the disk, or 0 when nothing
 * changed since this device last looked (the common case: no map lookup). */
static __always_inline __u64 sweep_target(__u32 disk, struct devstate* ds, __u32* gen) {
  *gen = (__u32)sweep_gen;
  if (*gen == ds->seen_gen) return 0;
  __u64* v = bpf_map_lookup_elem(&sweep_req, &disk);
  return v ? *v : 0;
}

/* Apply the user-space sweeper's corrections; called with the lock held. */
static __always_inline __u8 apply_sweep(struct devstate* ds, __u64 target, __u32 gen) {
  ds->seen_gen = gen;
  if (target <= ds->s.sweep_applied) return 0;
  __u64 d = target - ds->s.sweep_applied;
  ds->s.pending = ds->s.pending > d ? ds->s.pending - d : 0;
  ds->s.sweep_applied = target;
  return 1;
}

/* The device clock (called with the lock held): t was read before the lock,
 * and another CPU may already have applied a later time. Raising t to the
 * latest applied time makes the device's timestamps follow the lock order,
 * so recomputing disk time offline from the records gives the kernel's. */
static __always_inline __u64 device_clock(struct devstate* ds, __u64 t) {
  if (t < ds->s.clock_ns) t = ds->s.clock_ns;
  ds->s.clock_ns = t;
  return t;
}

/* A request left the device (completion or requeue): charge its disk time.
 * *now becomes the device-clock time of the event. */
static __always_inline __u64 charge(__u32 disk, __u32 idx, __u64* now_p, __u64 issue_ns,
                                    __u8 completion) {
  struct devstate* ds = get_devstate(disk, idx);
  if (!ds) return 0;
  __u32 gen;
  __u64 target = sweep_target(disk, ds, &gen);
  __u64 dt = 0, now = *now_p;
  __u8 clamped = 0, swept;
  dev_lock(ds);
  swept = apply_sweep(ds, target, gen);
  now = device_clock(ds, now);
  __u64 from =
      ds->s.last_complete_ns > ds->s.busy_start_ns ? ds->s.last_complete_ns : ds->s.busy_start_ns;
  if (ds->s.pending) {
    dt = now > from ? now - from : 0;
    ds->s.pending -= 1;
  } else {
    clamped = 1; /* in flight at attach or already corrected: nothing to charge */
  }
  ds->s.last_complete_ns = now;
  ds->s.busy_ns += dt;
  if (completion) {
    __u64 latency = now > issue_ns ? now - issue_ns : 0;
    ds->s.requests += 1;
    if (latency > ds->s.max_latency_ns) ds->s.max_latency_ns = latency;
  }
  dev_unlock(ds);
  *now_p = now;
  if (clamped) count(BLKRR_CNT_PENDING_CLAMPED);
  if (swept) count(BLKRR_CNT_SWEEP_APPLIED);
  return dt;
}

/* One more request in flight on the disk; returns the device-clock time of
 * the issue. */
static __always_inline __u64 add_pending(__u32 disk, __u32 idx, __u64 now) {
  struct devstate* ds = get_devstate(disk, idx);
  if (!ds) return now;
  __u32 gen;
  __u64 target = sweep_target(disk, ds, &gen);
  __u8 swept;
  dev_lock(ds);
  swept = apply_sweep(ds, target, gen);
  now = device_clock(ds, now);
  if (ds->s.pending == 0) ds->s.busy_start_ns = now;
  ds->s.pending += 1;
  dev_unlock(ds);
  if (swept) count(BLKRR_CNT_SWEEP_APPLIED);
  return now;
}

/* A request whose completion was never seen left the in-flight set. */
static __always_inline void drop_pending(__u32 disk, __u32 idx) {
  struct devstate* ds = get_devstate(disk, idx);
  if (!ds) return;
  __u32 gen;
  __u64 target = sweep_target(disk, ds, &gen);
  dev_lock(ds);
  apply_sweep(ds, target, gen);
  if (ds->s.pending) ds->s.pending -= 1;
  dev_unlock(ds);
}
