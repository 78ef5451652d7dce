// What the capture's maps hold: per-CPU counters, the in-kernel aggregates
// (top) and the device state (disk time, pending requests).
#include "capture/capture_impl.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <vector>

namespace blkrr::capture_internal {

uint64_t CaptureImpl::counter_sum(uint32_t index) const {
  int ncpu = libbpf_num_possible_cpus();
  std::vector<uint64_t> vals(ncpu > 0 ? ncpu : 1);
  uint64_t sum = 0;
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.counters), &index, vals.data()) == 0)
    for (uint64_t v : vals) sum += v;
  return sum;
}

// Calls fn(disk, state) for every disk with device state (none in lean
// mode), each read under the device lock. pending includes the corrections
// the sweeper or the idle check made that the device has not applied yet
// (it applies them at its next event; an idle device has none).
void CaptureImpl::for_each_disk_state(
    const std::function<void(DevT, const blkrr_devstate_pub&)>& fn) const {
  if (devstate_off()) return;
  const int sweep_req = bpf_map__fd(skel_->maps.sweep_req);
  capture::for_each_map_entry<uint32_t, DevStateValue>(
      devstate_fd(),
      [&](uint32_t key, DevStateValue& v) {
        // Slots of the selection array beyond the selected disks have no disk.
        if (!cfg_.devices.empty() && v.s.disk == 0) return;
        const uint32_t disk = v.s.disk ? v.s.disk : key;
        uint64_t target = 0;
        if (bpf_map_lookup_elem(sweep_req, &disk, &target) == 0 && target > v.s.sweep_applied) {
          uint64_t d = target - v.s.sweep_applied;
          v.s.pending = v.s.pending > d ? v.s.pending - d : 0;
        }
        fn(static_cast<DevT>(disk), v.s);
      },
      BPF_F_LOCK);
}

// Pending requests and latest event time of every disk (check policy).
std::vector<capture::DiskActivity> CaptureImpl::disk_activity() const {
  std::vector<capture::DiskActivity> out;
  for_each_disk_state([&](DevT disk, const blkrr_devstate_pub& s) {
    out.push_back({disk, s.pending, s.clock_ns});
  });
  return out;
}

Counters CaptureImpl::read_counters() const {
  Counters c;
  for (uint32_t i = 0; i < BLKRR_CNT_NR; i++)
    c[capture::counter_name(static_cast<int>(i))] = counter_sum(i);
  c["inflight_swept"] = swept_total_;
  c["completion_not_seen_swept"] = swept_emitted_;
  c["completion_not_seen_at_stop"] = not_seen_at_stop_;
  c["completion_not_seen_at_stop_disk_idle"] = lost_at_stop_;
  c["inflight_at_stop"] = inflight_at_stop_;
  c["completion_not_seen_idle"] = idle_given_up_;
  c["completion_not_seen_idle_emitted"] = idle_emitted_;
  c["idle_check_suspects"] = idle_suspects_;
  // Optional features this capture goes without (1 each).
  if (!plan_.check) c["feature_off.map_iter"] = 1;
  if (!plan_.io_start) c["feature_off.block_io_start"] = 1;
  if (!plan_.check && !plan_.io_done) c["feature_off.block_io_done"] = 1;
  if (cfg_.queue_time && !plan_.insert) c["feature_off.block_rq_insert"] = 1;
  if (plan_.retried) c["load_retried_without_optional"] = 1;
  c["records_delivered"] = delivered_;
  // Programs the kernel skipped because another BPF program was running on
  // the same CPU (e.g. a completion in softirq interrupting an issue).
  uint64_t misses = 0;
  bpf_program* p = nullptr;
  bpf_object__for_each_program(p, skel_->obj) {
    int pfd = bpf_program__fd(p);
    if (pfd < 0) continue;
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(pfd, &info, &len) == 0) misses += info.recursion_misses;
  }
  c["prog_recursion_misses"] = misses;
  return c;
}

Counters CaptureImpl::counters() const {
  return stopped_ ? final_counters_ : read_counters();
}

Result<std::vector<AggEntry>> CaptureImpl::aggregates() const {
  std::vector<AggEntry> out;
  capture::for_each_map_entry<blkrr_agg_key, blkrr_agg_val>(
      bpf_map__fd(skel_->maps.agg), [&](const blkrr_agg_key& k, const blkrr_agg_val& v) {
        out.push_back(capture::agg_entry(k, v));
      });
  return out;
}

Result<std::vector<AggEntry>> CaptureImpl::take_aggregates(const std::vector<AggKey>& keys) {
  std::vector<AggEntry> out;
  int fd = bpf_map__fd(skel_->maps.agg);
  for (const AggKey& want : keys) {
    // The kernel's partition field is 0 on kernels whose request has no
    // partition device; AggKey shows the whole disk then.
    for (const blkrr_agg_key& k : capture::agg_kernel_keys(want)) {
      blkrr_agg_val v{};
      int rc = bpf_map_lookup_and_delete_elem(fd, &k, &v);
      if (rc != 0 && errno != ENOENT) {
        // Kernels without lookup-and-delete for hash maps: read, then delete.
        // An increment between the two is lost (see docs/capture.md).
        rc = bpf_map_lookup_elem(fd, &k, &v);
        if (rc == 0 && bpf_map_delete_elem(fd, &k) != 0) rc = -1;
      }
      if (rc == 0) {
        out.push_back(capture::agg_entry(k, v));
        break;
      }
      if (errno != ENOENT)
        return Error::system("removing an aggregation entry of pid " + std::to_string(want.pid) +
                                 " from the kernel map failed",
                             errno);
    }
  }
  return out;
}

Result<std::vector<DeviceBusy>> CaptureImpl::device_busy() const {
  std::vector<DeviceBusy> out;
  for_each_disk_state([&](DevT disk, const blkrr_devstate_pub& s) {
    DeviceBusy b;
    b.disk = disk;
    b.busy_ns = s.busy_ns;
    b.pending = s.pending;
    b.requests = s.requests;
    out.push_back(b);
  });
  std::sort(out.begin(), out.end(),
            [](const DeviceBusy& a, const DeviceBusy& b) { return a.disk < b.disk; });
  return out;
}

uint64_t CaptureImpl::oldest_inflight_issue_ns() const {
  uint64_t oldest = UINT64_MAX;
  capture::for_each_map_entry<uint64_t, blkrr_inflight>(
      bpf_map__fd(skel_->maps.inflight), [&](uint64_t, const blkrr_inflight& e) {
        if (e.state == BLKRR_RQ_INFLIGHT && e.emit) oldest = std::min<uint64_t>(oldest, e.issue_ns);
      });
  return oldest;
}

}  // namespace blkrr::capture_internal
