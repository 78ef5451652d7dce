/* SPDX-License-Identifier: GPL-2.0 */
/* Map helpers shared by blkrr's programs. */
#pragma once

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#ifndef EEXIST
#define EEXIST 17 /* vmlinux.h has no errno values */
#endif

/* The value of key, created from init if absent. Another CPU may create
 * it between the lookup and the update (BPF_NOEXIST then fails with
 * -EEXIST: the lookup after it finds theirs). NULL when the map is full, or
 * when the entry was deleted again before the second lookup. */
static __always_inline void* map_lookup_or_init(void* map, const void* key, const void* init) {
  void* v = bpf_map_lookup_elem(map, key);
  if (v) return v;
  long err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
  if (err && err != -EEXIST) return 0;
  return bpf_map_lookup_elem(map, key);
}
