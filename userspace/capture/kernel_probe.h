// What the running kernel offers, found through BTF (never version numbers).
#pragma once

#include <string>

#include "core/result.h"

namespace blkrr::capture {

struct KernelFeatures {
  bool has_io_start = false;  // tracepoint block_io_start (attribution to the creator)
  bool has_rq_insert = false;
};

// Reads /sys/kernel/btf/vmlinux through libbpf: checks the block tracepoints
// blkrr attaches to exist with the one-argument (struct request *) prototype.
Result<KernelFeatures> probe_kernel();

// Capabilities needed to load tracing programs: CAP_SYS_ADMIN, or CAP_BPF
// with CAP_PERFMON.
bool has_bpf_capabilities();

}  // namespace blkrr::capture
