// The capture loader's class, shared by its three files: capture.cpp (open,
// configure, load, attach), capture_events.cpp (ring buffer, stop, sweeper)
// and capture_maps.cpp (counters, aggregates, device state). Only the loader
// includes the skeleton.
#pragma once

#include "core/clock.h"
#include "core/units.h"
#include "capture/capture.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <condition_variable>
#include <map>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

// The skeleton's read-only data uses the shared structures: declare them first.
#include "bpf/capture_events.h"
// (keep this order)
#include "capture.skel.h"
#include "capture_compat.skel.h"
#include "capture/bpf_types.h"
#include "capture/check_policy.h"
#include "capture/features.h"
#include "capture/load_plan.h"
#include "capture/map_walk.h"
#include "capture/sweeper.h"
#include "core/args.h"

namespace blkrr::capture_internal {

using capture::DevStateValue;

struct SkelDestroy {
  void operator()(capture_bpf* s) const { capture_bpf__destroy(s); }
};
struct RingBufferFree {
  void operator()(ring_buffer* r) const { ring_buffer__free(r); }
};
struct LinkDestroy {
  void operator()(bpf_link* l) const { bpf_link__destroy(l); }
};

// The loader's tick: the checker may run (capture/check_policy.h); the
// stale-entry sweep runs every tenth.
inline constexpr auto kTick = std::chrono::nanoseconds(capture::CheckPolicy::kTickNs);
inline constexpr int kTicksPerSweep = 10;

class CaptureImpl final : public Capture {
 public:
  ~CaptureImpl() override { stop_sweeper(); }

  Status init(const CaptureConfig& cfg_in);
  Result<int> poll(int timeout_ms, const EventFn& fn) override;
  Status stop(const EventFn& fn) override;
  Counters counters() const override;
  Result<std::vector<AggEntry>> aggregates() const override;
  Result<std::vector<AggEntry>> take_aggregates(const std::vector<AggKey>& keys) override;
  Result<std::vector<DeviceBusy>> device_busy() const override;
  uint64_t oldest_inflight_issue_ns() const override;
  bool has_io_start() const override { return plan_.io_start; }
  bool disk_time_in_user_space() const override { return user_disk_time_; }
  bool devstate_off() const { return (cfg_.lean && !cfg_.aggregate) || user_disk_time_; }
  std::map<std::string, std::string> features() const override { return plan_.describe(); }
  RequestExtra current_extra() const override { return extra_; }
  bool has_queue_time() const override { return plan_.insert; }

 private:
  static int on_event(void* ctx, void* data, size_t size);
  void deliver(Request r);
  int deliver_swept();
  void sweeper_loop();
  void stop_sweeper();
  void check_pass();
  void iter_pass();
  Status load_programs();
  Status configure();
  Status select_devices();
  Status select_stack_pieces();
  Status set_autoload();
  Status open_and_load();
  Status init_device_slots();
  Status attach();
  uint64_t counter_sum(uint32_t index) const;
  std::vector<capture::DiskActivity> disk_activity() const;
  void for_each_disk_state(const std::function<void(DevT, const blkrr_devstate_pub&)>& fn) const;
  Counters read_counters() const;
  // The device state map in use: by selection index with -d, else by dev_t.
  int devstate_fd() const {
    return bpf_map__fd(cfg_.devices.empty() ? skel_->maps.devstate : skel_->maps.devstate_sel);
  }

  CaptureConfig cfg_;
  capture::FeatureSet features_;
  capture::ProgramPlan plan_;
  std::unique_ptr<capture::Sweeper> sweeper_obj_;
  std::atomic<uint64_t> idle_suspects_{0};
  std::unique_ptr<capture_bpf, SkelDestroy> skel_;
  std::unique_ptr<bpf_link, LinkDestroy> check_link_;  // null: kernel without map iterators
  std::unique_ptr<ring_buffer, RingBufferFree> rb_;
  DeviceNamer namer_;
  const EventFn* fn_ = nullptr;
  RequestExtra extra_;
  int delivered_now_ = 0;
  bool stopped_ = false;
  bool user_disk_time_ = false;  // the kernel keeps no device state (cfg_no_devstate)
  Counters final_counters_;

  // Sweeper thread and what it hands over to poll().
  std::thread sweeper_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;
  std::vector<blkrr_inflight> swept_;
  std::atomic<uint64_t> swept_total_{0}, swept_emitted_{0}, not_seen_at_stop_{0}, delivered_{0};
  std::atomic<uint64_t> lost_at_stop_{0}, inflight_at_stop_{0}, idle_given_up_{0};
  std::atomic<uint64_t> idle_emitted_{0};
};

}  // namespace blkrr::capture_internal
