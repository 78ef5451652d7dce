// The running capture: the ring buffer consumer, stop, and the sweeper
// thread with the lost-completion check.
#include "capture/capture_impl.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace blkrr::capture_internal {

int CaptureImpl::on_event(void* ctx, void* data, size_t size) {
  auto* self = static_cast<CaptureImpl*>(ctx);
  if (size < sizeof(blkrr_event)) return 0;
  const auto& ev = *static_cast<const blkrr_event*>(data);
  self->extra_.insert_ns = capture::event_insert_ns(ev);
  self->deliver(capture::event_to_request(ev));
  return 0;
}

void CaptureImpl::deliver(Request r) {
  if (r.part == 0) r.part = namer_.partition_of(r.dev, r.sector);
  delivered_now_++;
  delivered_++;
  if (fn_ && *fn_) (*fn_)(r);
}

int CaptureImpl::deliver_swept() {
  std::vector<blkrr_inflight> v;
  {
    std::lock_guard<std::mutex> lk(mu_);
    v.swap(swept_);
  }
  for (const auto& e : v) {
    extra_.insert_ns = e.insert_ns ? e.insert_ns : kNoTime;
    deliver(capture::inflight_to_request(e));
  }
  return static_cast<int>(v.size());
}

Result<int> CaptureImpl::poll(int timeout_ms, const EventFn& fn) {
  if (stopped_) return Error(ErrorKind::kInternal, "capture already stopped");
  fn_ = &fn;
  delivered_now_ = 0;
  deliver_swept();
  if (rb_) {
    int n = ring_buffer__poll(rb_.get(), timeout_ms);
    if (n < 0 && n != -EINTR) {
      fn_ = nullptr;
      return Error::system("reading the ring buffer failed", -n);
    }
    // Records submitted without a wake-up are drained here.
    if (n == 0 || n == -EINTR) ring_buffer__consume(rb_.get());
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
  }
  fn_ = nullptr;
  return delivered_now_;
}

Status CaptureImpl::stop(const EventFn& fn) {
  if (stopped_) return {};
  capture_bpf__detach(skel_.get());
  // Let programs that were running on other CPUs finish their submit.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop_sweeper();
  // Two checker passes: requests the kernel finished without a completion
  // event are given up (emitted) now instead of being left "in flight".
  check_pass();
  check_pass();
  fn_ = &fn;
  if (rb_) ring_buffer__consume(rb_.get());
  deliver_swept();
  // Whatever is still in flight is a request of the load whose completion we
  // will never see.
  std::vector<blkrr_inflight> left;
  capture::for_each_map_entry<uint64_t, blkrr_inflight>(bpf_map__fd(skel_->maps.inflight),
                                                        [&](uint64_t, const blkrr_inflight& e) {
                                                          if (e.state != BLKRR_RQ_INFLIGHT) return;
                                                          inflight_at_stop_++;
                                                          if (e.emit) left.push_back(e);
                                                        });
  std::sort(left.begin(), left.end(), [](const blkrr_inflight& a, const blkrr_inflight& b) {
    return a.issue_ns < b.issue_ns;
  });
  // A disk the kernel reports idle has nothing in flight: its leftovers did
  // complete, their completion program just never ran.
  std::map<DevT, bool> idle;
  uint64_t lost = 0;
  for (const auto& e : left) {
    if (!idle.count(e.disk)) {
      auto n = kernel_inflight(e.disk);
      idle[e.disk] = n && *n == 0;
    }
    lost += idle[e.disk] ? 1 : 0;
  }
  if (cfg_.emit_events) {
    for (const auto& e : left) {
      extra_.insert_ns = e.insert_ns ? e.insert_ns : kNoTime;
      extra_.at_stop = true;
      extra_.disk_idle_at_stop = idle[e.disk];
      deliver(capture::inflight_to_request(e));
    }
    extra_ = RequestExtra{};
  }
  not_seen_at_stop_ = left.size();
  lost_at_stop_ = lost;
  fn_ = nullptr;
  final_counters_ = read_counters();
  stopped_ = true;
  return {};
}

// One pass of the lost-completion check: the checker program where the
// kernel runs map iterators, the sysfs idle check otherwise. Either gives up
// (and emits) the entries found not in flight on two passes in a row.
void CaptureImpl::check_pass() {
  if (check_link_) {
    iter_pass();
    return;
  }
  if (!plan_.idle_check || !sweeper_obj_) return;
  uint64_t marked = 0;
  auto res = sweeper_obj_->check_idle([](uint32_t disk) { return kernel_inflight(disk); }, &marked);
  idle_suspects_ += marked;
  idle_given_up_ += res.deleted;
  std::lock_guard<std::mutex> lk(mu_);
  if (!cfg_.emit_events) return;
  idle_emitted_ += res.emitted.size();
  swept_.insert(swept_.end(), res.emitted.begin(), res.emitted.end());
}

void CaptureImpl::iter_pass() {
  __atomic_add_fetch(&skel_->bss->check_gen, 1, __ATOMIC_SEQ_CST);
  int fd = bpf_iter_create(bpf_link__fd(check_link_.get()));
  if (fd < 0) return;
  char buf[64];
  while (read(fd, buf, sizeof buf) > 0) {
  }
  close(fd);
}

void CaptureImpl::sweeper_loop() {
  capture::Sweeper& sw = *sweeper_obj_;
  capture::CheckPolicy policy;
  std::unique_lock<std::mutex> lk(mu_);
  int ticks = 0;
  while (!quit_) {
    cv_.wait_for(lk, kTick);
    if (quit_) break;
    lk.unlock();
    uint64_t suspects = check_link_ ? counter_sum(BLKRR_CNT_CHECK_SUSPECTS) : idle_suspects_.load();
    if ((check_link_ || plan_.idle_check) && policy.tick(mono_ns(), disk_activity(), suspects))
      check_pass();
    if (++ticks < kTicksPerSweep) {
      lk.lock();
      continue;
    }
    ticks = 0;
    auto res = sw.sweep(mono_ns());
    lk.lock();
    swept_total_ += res.deleted;
    if (cfg_.emit_events) {
      swept_emitted_ += res.emitted.size();
      swept_.insert(swept_.end(), res.emitted.begin(), res.emitted.end());
    }
  }
}

void CaptureImpl::stop_sweeper() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
}

}  // namespace blkrr::capture_internal
