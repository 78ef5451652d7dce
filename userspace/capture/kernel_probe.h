// What the running kernel offers, probed once before any program is loaded:
// BTF facts (tracepoints and their prototypes, helpers), trial loads of the
// program types blkrr needs (tp_btf, map iterators, raw tracepoints, ring
// buffer), and the system's security settings (lockdown, LSMs,
// capabilities). Never kernel version numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"

namespace blkrr::capture {

// One probed fact: whether the kernel offers it and, when not, why.
struct Probe {
  bool ok = false;
  std::string why;  // empty when ok; the reason otherwise ("EPERM", "not in BTF")
};

struct KernelFeatures {
  bool btf = false;  // /sys/kernel/btf/vmlinux readable and parsed
  // Arguments of the tracepoints' BTF prototypes (-1: no such tracepoint).
  // Before 5.11 issue, insert and requeue take the request_queue first (2).
  int issue_args = -1, complete_args = -1, requeue_args = -1, insert_args = -1;
  int io_start_args = -1, io_done_args = -1;
  int bio_queue_args = -1;     // block_bio_queue: the request_queue first before 5.11 (2)
  int bio_complete_args = -1;  // block_bio_complete: request_queue, bio (2) on 5.10-6.18
  Probe tp_btf;                // a trial tp_btf program on block_rq_issue loads and attaches
  Probe raw_tp;                // a trial raw tracepoint program on block_rq_issue
  Probe ringbuf;               // BPF_MAP_TYPE_RINGBUF
  Probe map_iter;              // a trial iter/bpf_map_elem program loads
  Probe atomics;               // fetching atomics / compare-and-swap in BPF (5.12+)
  Probe cgroup_id_helper;      // bpf_get_current_cgroup_id in tracing programs
  Probe task_btf_helper;       // bpf_get_current_task_btf (top's parent pid)
  std::string lockdown;        // none, integrity, confidentiality, or "not reported"
  std::string lsms;            // active LSMs (comma list), or "not reported"
  uint64_t cap_eff = 0;        // effective capability set
  bool cap_known = false;

  bool has_io_start() const { return io_start_args == 1; }
  bool has_io_done() const { return io_done_args == 1; }
  bool has_rq_insert() const { return insert_args == 1 || insert_args == 2; }
  bool has_bio_queue() const { return bio_queue_args == 1 || bio_queue_args == 2; }
  bool has_bio_complete() const { return bio_complete_args == 2; }
  // Bio-level capture of bio-based devices (bpf/bio_level.bpf.h).
  bool has_bio_level() const { return has_bio_queue() && has_bio_complete(); }
};

// Probes the kernel (no caching: see features.h for the cached view).
KernelFeatures probe_kernel();

// Capabilities needed to load tracing programs: CAP_SYS_ADMIN, or CAP_BPF
// with CAP_PERFMON.
bool has_bpf_capabilities(const KernelFeatures& f);

inline constexpr int kCapSysAdmin = 21, kCapSysResource = 24, kCapPerfmon = 38, kCapBpf = 39;

// The bracketed word of /sys/kernel/security/lockdown ("[none] integrity
// confidentiality" -> "none"); "not reported" when absent or unreadable.
std::string parse_lockdown(const std::string& text);

// CapEff of a /proc/PID/status text; false when absent.
bool parse_cap_eff(const std::string& status, uint64_t* out);

}  // namespace blkrr::capture
