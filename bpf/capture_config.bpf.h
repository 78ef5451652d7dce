/* SPDX-License-Identifier: GPL-2.0 */
/* The capture programs' configuration: read-only data the loader sets
 * before load (userspace/capture/capture.cpp), so that the verifier drops
 * what a configuration does not use. Included by capture.bpf.c only. */
#pragma once

#include "vmlinux.h"

#include "capture_events.h"

const volatile __u8 cfg_filter_dev = 0;
/* With cfg_filter_dev: the selected disks. Their index is also the slot of
 * their state in devstate_sel (an array: lookups are inlined). */
const volatile __u32 cfg_ndisks = 0;
const volatile struct blkrr_dev_sel cfg_disks[BLKRR_MAX_DISKS] = {};
const volatile __u8 cfg_filter_tgid = 0;
const volatile __u32 cfg_tgid = 0;
const volatile __u8 cfg_filter_comm = 0;
const volatile char cfg_comm[BLKRR_COMM_LEN] = {};
const volatile __u8 cfg_filter_cgroup = 0;
const volatile __u64 cfg_cgroup_id = 0;
const volatile __u8 cfg_emit = 1;
const volatile __u8 cfg_aggregate = 0;
/* Lean capture (replay validator): no device state (disk time 0), no cgroup
 * id unless filtering on it. */
const volatile __u8 cfg_lean = 0;
/* No device state either, cgroup ids kept (record without task or partition
 * filters): user space computes the disk time from the records' own
 * timestamps (core/disktime_stream.h), so no program takes the device lock. */
const volatile __u8 cfg_no_devstate = 0;
#define DEVSTATE_ON (!cfg_lean && !cfg_no_devstate)
/* No block_io_start: block_rq_insert attributes the requests it sees. */
const volatile __u8 cfg_attr_insert = 0;
/* Wake the consumer on every Nth record of a CPU (a power of two; 0: on
 * every record). Counted with the per-CPU record counter, so no ring-buffer
 * query per record; the consumer drains the rest on its poll timeout. */
const volatile __u64 cfg_wake_every = 0;
/* Attribution through stacked volumes (bpf/stack_attr.bpf.h): their pieces
 * on the disks below, and how long a noted submitter stays valid. */
const volatile __u32 cfg_nsegs = 0;
const volatile struct blkrr_seg cfg_segs[BLKRR_MAX_SEGS] = {};
const volatile __u64 cfg_owner_ttl_ns = 5000000000ull;
