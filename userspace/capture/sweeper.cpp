#include "capture/sweeper.h"

#include <bpf/bpf.h>

#include <algorithm>

#include "capture/map_walk.h"

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
  for_each_map_entry<uint32_t, DevStateValue>(
      devstate_fd_,
      [&](uint32_t key, const DevStateValue& v) {
        max_lat[v.s.disk ? static_cast<uint32_t>(v.s.disk) : key] = v.s.max_latency_ns;
      },
      BPF_F_LOCK);
  // Collect stale keys first, then delete (deleting while walking a hash map
  // restarts the walk).
  std::vector<Entry> stale;
  for (const auto& [k, e] : inflight_entries()) {
    if (now_ns <= e.issue_ns) continue;
    auto it = max_lat.find(e.disk);
    uint64_t limit = stale_after_ns(it == max_lat.end() ? 0 : it->second);
    if (now_ns - e.issue_ns > limit) stale.emplace_back(k, e);
  }
  give_up(stale, &res);
  return res;
}

std::vector<Sweeper::Entry> Sweeper::inflight_entries() const {
  std::vector<Entry> out;
  for_each_map_entry<uint64_t, blkrr_inflight>(inflight_fd_,
                                               [&](uint64_t key, const blkrr_inflight& e) {
                                                 if (e.state == BLKRR_RQ_INFLIGHT)
                                                   out.emplace_back(key, e);
                                               });
  return out;
}

void Sweeper::give_up(const std::vector<Entry>& entries, SweepResult* res) {
  std::map<uint32_t, bool> touched;
  for (const auto& [k, e] : entries) {
    // Ownership: only a successful delete means nobody else handled it.
    if (bpf_map_delete_elem(inflight_fd_, &k) != 0) continue;
    res->deleted++;
    corrections_[e.disk]++;
    touched[e.disk] = true;
    if (e.emit) res->emitted.push_back(e);
  }
  for (auto& [disk, unused] : touched) {
    uint64_t v = corrections_[disk];
    bpf_map_update_elem(sweep_req_fd_, &disk, &v, BPF_ANY);
  }
  if (!touched.empty() && sweep_gen_) __atomic_add_fetch(sweep_gen_, 1, __ATOMIC_SEQ_CST);
}

SweepResult Sweeper::check_idle(const InflightFn& kernel_inflight, uint64_t* suspects_marked) {
  std::map<uint32_t, bool> idle;  // per disk: the kernel has nothing in flight
  std::map<uint64_t, uint64_t> suspects;
  std::vector<Entry> lost;
  for (const auto& [k, e] : inflight_entries()) {
    auto [it, fresh] = idle.try_emplace(e.disk, false);
    if (fresh) {
      auto n = kernel_inflight(e.disk);
      it->second = n && *n == 0;
    }
    if (!it->second) continue;
    auto seen = suspects_.find(k);
    if (seen != suspects_.end() && seen->second == e.issue_ns) {
      lost.emplace_back(k, e);
    } else {
      suspects[k] = e.issue_ns;
      ++*suspects_marked;
    }
  }
  suspects_ = std::move(suspects);
  SweepResult res;
  give_up(lost, &res);
  return res;
}

}  // namespace blkrr::capture
