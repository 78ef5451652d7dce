// User-space sweeper of stale in-flight entries: requests whose completion
// the kernel never delivered to the BPF program would otherwise keep their
// device "busy" for ever. Runs every second from a thread of the loader.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "capture/bpf_types.h"

namespace blkrr::capture {

// An entry older than this on a device whose longest seen latency is
// max_latency_ns is given up: max(5 s, 20 x max latency). The 5 s floor
// covers a disk spinning up (first request after idle).
uint64_t stale_after_ns(uint64_t max_latency_ns);

struct SweepResult {
  std::vector<blkrr_inflight> emitted;  // deleted entries that pass the filters
  uint64_t deleted = 0;                 // every deleted entry
};

class Sweeper {
 public:
  // sweep_gen: the program's .bss generation counter, raised after every
  // change of sweep_req so that the BPF side looks the map up only then.
  Sweeper(int inflight_fd, int devstate_fd, int sweep_req_fd, volatile __u64* sweep_gen)
      : inflight_fd_(inflight_fd),
        devstate_fd_(devstate_fd),
        sweep_req_fd_(sweep_req_fd),
        sweep_gen_(sweep_gen) {}
  // One pass at CLOCK_MONOTONIC time now_ns: deletes the stale entries it
  // owns (delete succeeded) and raises the disk's correction counter, which
  // the BPF side applies to pending under the device lock.
  SweepResult sweep(uint64_t now_ns);

  // The idle check, for kernels where the checker (a map iterator) cannot
  // run: an entry in flight on a disk whose kernel in-flight count
  // (kernel_inflight, from sysfs) is 0 lost its completion. It becomes a
  // suspect on the first pass that finds it so and is given up (deleted,
  // pending corrected) on the next pass that finds it so again with the
  // same issue time. *suspects_marked grows by the suspects this pass marked.
  using InflightFn = std::function<std::optional<uint64_t>(uint32_t disk)>;
  SweepResult check_idle(const InflightFn& kernel_inflight, uint64_t* suspects_marked);

 private:
  using Entry = std::pair<uint64_t, blkrr_inflight>;
  std::vector<Entry> inflight_entries() const;
  // Deletes the entries it still owns and raises their disks' corrections.
  void give_up(const std::vector<Entry>& entries, SweepResult* res);

  int inflight_fd_, devstate_fd_, sweep_req_fd_;
  volatile __u64* sweep_gen_;
  std::map<uint32_t, uint64_t> corrections_;  // cumulative per disk
  std::map<uint64_t, uint64_t> suspects_;     // idle check: entry key -> issue time
};

}  // namespace blkrr::capture
