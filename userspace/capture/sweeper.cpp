#include "capture/sweeper.h"

#include <bpf/bpf.h>

#include <algorithm>

namespace blkrr::capture {

uint64_t stale_after_ns(uint64_t max_latency_ns) {
  constexpr uint64_t kFloor = 5'000'000'000ull;
  constexpr uint64_t kFactor = 20;
  if (max_latency_ns > UINT64_MAX / kFactor) return UINT64_MAX;
  return std::max(kFloor, kFactor * max_latency_ns);
}

SweepResult Sweeper::sweep(uint64_t now_ns) {
  SweepResult res;
  // Longest latency seen per disk.
  std::map<uint32_t, uint64_t> max_lat;
  uint32_t dkey = 0, dnext = 0;
  uint32_t* dprev = nullptr;
  while (bpf_map_get_next_key(devstate_fd_, dprev, &dnext) == 0) {
    DevStateValue v{};
    if (bpf_map_lookup_elem_flags(devstate_fd_, &dnext, &v, BPF_F_LOCK) == 0)
      max_lat[v.s.disk ? static_cast<uint32_t>(v.s.disk) : dnext] = v.s.max_latency_ns;
    dkey = dnext;
    dprev = &dkey;
  }
  // Collect stale keys first, then delete (deleting while walking a hash map
  // restarts the walk).
  std::vector<std::pair<uint64_t, blkrr_inflight>> stale;
  uint64_t key = 0, next = 0;
  uint64_t* prev = nullptr;
  while (bpf_map_get_next_key(inflight_fd_, prev, &next) == 0) {
    blkrr_inflight e{};
    if (bpf_map_lookup_elem(inflight_fd_, &next, &e) == 0 && e.state == BLKRR_RQ_INFLIGHT &&
        now_ns > e.issue_ns) {
      auto it = max_lat.find(e.disk);
      uint64_t limit = stale_after_ns(it == max_lat.end() ? 0 : it->second);
      if (now_ns - e.issue_ns > limit) stale.emplace_back(next, e);
    }
    key = next;
    prev = &key;
  }
  std::map<uint32_t, bool> touched;
  for (auto& [k, e] : stale) {
    // Ownership: only a successful delete means nobody else handled it.
    if (bpf_map_delete_elem(inflight_fd_, &k) != 0) continue;
    res.deleted++;
    corrections_[e.disk]++;
    touched[e.disk] = true;
    if (e.emit) res.emitted.push_back(e);
  }
  for (auto& [disk, unused] : touched) {
    uint64_t v = corrections_[disk];
    bpf_map_update_elem(sweep_req_fd_, &disk, &v, BPF_ANY);
  }
  if (!touched.empty() && sweep_gen_) __atomic_add_fetch(sweep_gen_, 1, __ATOMIC_SEQ_CST);
  return res;
}

}  // namespace blkrr::capture
