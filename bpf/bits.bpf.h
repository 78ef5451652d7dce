/* SPDX-License-Identifier: GPL-2.0 */
/* Bit helpers without loops (old verifiers walk every iteration). */
#pragma once

#include "vmlinux.h"

/* floor(log2(v)) for v > 0; 0 for 0. */
static __always_inline __u32 log2_u64(__u64 v) {
  __u32 s = 0;
  if (v >> 32) {
    s += 32;
    v >>= 32;
  }
  if (v >> 16) {
    s += 16;
    v >>= 16;
  }
  if (v >> 8) {
    s += 8;
    v >>= 8;
  }
  if (v >> 4) {
    s += 4;
    v >>= 4;
  }
  if (v >> 2) {
    s += 2;
    v >>= 2;
  }
  if (v >> 1) s += 1;
  return s;
}
