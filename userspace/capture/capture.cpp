// Capture::start and the loader behind it: opens the skeleton, configures
// and loads the programs, attaches them, consumes the ring buffer and runs
// the stale-entry sweeper.
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
#include "bpf/capture.h"
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

namespace blkrr {
namespace {

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
constexpr auto kTick = std::chrono::nanoseconds(capture::CheckPolicy::kTickNs);
constexpr int kTicksPerSweep = 10;

// libbpf's warnings: printed, or held back while a load that may be
// retried runs (printed only if the retry fails too). The program named by
// the last "prog 'NAME': ... failed" warning is the one whose load failed.
struct LibbpfLog {
  std::mutex mu;
  bool hold = false;
  std::string held;
  std::string failed_prog;
};
LibbpfLog& libbpf_log() {
  static LibbpfLog log;
  return log;
}

int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level != LIBBPF_WARN) return 0;
  // A verifier log comes as one message of up to megabytes: format it whole.
  const std::string text = vstrfmt(fmt, args);
  const char* buf = text.c_str();
  LibbpfLog& log = libbpf_log();
  std::lock_guard<std::mutex> lk(log.mu);
  const char* p = std::strstr(buf, "prog '");
  if (p && std::strstr(buf, "failed")) {
    const char* end = std::strchr(p + 6, '\'');
    if (end) log.failed_prog.assign(p + 6, end);
  }
  if (log.hold)
    log.held += buf;
  else
    std::fputs(buf, stderr);
  return static_cast<int>(text.size());
}

// Holds libbpf's warnings back (true) or prints what was held (false,
// flush) or drops it (false, !flush).
void hold_libbpf_log(bool hold, bool flush) {
  LibbpfLog& log = libbpf_log();
  std::lock_guard<std::mutex> lk(log.mu);
  if (!hold && flush) std::fputs(log.held.c_str(), stderr);
  if (!hold) log.held.clear();
  log.hold = hold;
}

// Every request of the selected disks becomes a record: user space sees all
// the intervals the disk time is the union of.
bool user_disk_time_possible(const CaptureConfig& cfg) {
  if (cfg.aggregate || !cfg.emit_events || cfg.tgid || cfg.comm || cfg.cgroup_id) return false;
  for (const auto& d : cfg.devices)
    if (d.part) return false;
  return true;
}

uint32_t round_pow2(uint64_t v) {
  uint64_t p = 4096;
  while (p < v && p < (1ull << 31)) p <<= 1;
  return static_cast<uint32_t>(p);
}

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

// BLKRR_FAULT_SKIP_COMPLETION=N (tests): see CaptureConfig.
Status apply_fault_env(CaptureConfig* cfg) {
  if (const char* d = std::getenv("BLKRR_IO_DONE"); d && std::string_view(d) == "1")
    cfg->io_done_fallback = true;
  const char* f = std::getenv("BLKRR_FAULT_SKIP_COMPLETION");
  if (!f || !*f || cfg->fault_skip_completion_every != 0) return {};
  std::string v = f;
  constexpr std::string_view kOnly = ":complete";
  if (v.size() > kOnly.size() && v.compare(v.size() - kOnly.size(), kOnly.size(), kOnly) == 0) {
    cfg->fault_whole = false;
    v.resize(v.size() - kOnly.size());
  }
  auto n = parse_u64(v);
  if (!n || *n > UINT32_MAX)
    return Error(std::string("BLKRR_FAULT_SKIP_COMPLETION='") + f +
                 "': expected a count N (ignore every Nth completion; 0 or unset: off), "
                 "optionally N:complete (skip block_rq_complete only)");
  cfg->fault_skip_completion_every = static_cast<uint32_t>(*n);
  return {};
}

void print_fault_note(const CaptureConfig& cfg) {
  if (!cfg.fault_skip_completion_every) return;
  std::fprintf(stderr,
               "blkrr: fault injection: every %u%s completion on the selected devices is "
               "ignored (BLKRR_FAULT_SKIP_COMPLETION)\n",
               cfg.fault_skip_completion_every, cfg.fault_skip_completion_every == 1 ? "st" : "th");
}

// Each degrade line once per process (the validator may start several
// captures).
void print_notes_once(const std::vector<std::string>& notes) {
  static std::mutex mu;
  static std::set<std::string> printed;
  std::lock_guard<std::mutex> lk(mu);
  for (const auto& n : notes)
    if (printed.insert(n).second) std::fprintf(stderr, "%s\n", n.c_str());
}

Status CaptureImpl::init(const CaptureConfig& cfg_in) {
  cfg_ = cfg_in;
  BLKRR_TRY(apply_fault_env(&cfg_));
  auto feat = capture::features();
  if (!feat) return feat.error();
  features_ = *feat;
  BLKRR_TRY(capture::check_required(features_));
  libbpf_set_print(libbpf_print);
  print_fault_note(cfg_);
  BLKRR_TRY(load_programs());
  print_notes_once(plan_.notes);
  BLKRR_TRY(init_device_slots());
  BLKRR_TRY(attach());
  sweeper_obj_ = std::make_unique<capture::Sweeper>(
      bpf_map__fd(skel_->maps.inflight), devstate_fd(), bpf_map__fd(skel_->maps.sweep_req),
      &skel_->bss->sweep_gen);
  sweeper_ = std::thread([this] { sweeper_loop(); });
  return {};
}

// The planned programs; if that fails and some are optional, once more with
// the required ones only. A load that can be retried keeps libbpf's messages
// until it is known whether the retry is needed and succeeds.
Status CaptureImpl::load_programs() {
  plan_ = capture::plan_programs(features_, cfg_.queue_time, cfg_.io_done_fallback);
  hold_libbpf_log(plan_.has_optional(), false);
  Status loaded = open_and_load();
  if (!loaded && plan_.has_optional()) {
    std::string first = loaded.error().message;
    plan_ = plan_.minimal();
    loaded = open_and_load();
    if (loaded) plan_.notes.back() += " [" + first + "]";
  }
  hold_libbpf_log(false, !loaded);
  return loaded;
}

// Filters, modes and sizes into the skeleton's read-only data and maps.
Status CaptureImpl::configure() {
  auto* ro = skel_->rodata;
  const CaptureConfig& cfg = cfg_;
  ro->cfg_filter_dev = cfg.devices.empty() ? 0 : 1;
  if (cfg.tgid) {
    ro->cfg_filter_tgid = 1;
    ro->cfg_tgid = *cfg.tgid;
  }
  if (cfg.comm) {
    ro->cfg_filter_comm = 1;
    // The kernel keeps 15 characters of a task name.
    size_t n = std::min<size_t>(cfg.comm->size(), BLKRR_COMM_LEN - 1);
    for (size_t i = 0; i < n; i++) const_cast<char&>(ro->cfg_comm[i]) = (*cfg.comm)[i];
  }
  if (cfg.cgroup_id) {
    ro->cfg_filter_cgroup = 1;
    ro->cfg_cgroup_id = *cfg.cgroup_id;
  }
  ro->cfg_emit = cfg.emit_events ? 1 : 0;
  ro->cfg_aggregate = cfg.aggregate ? 1 : 0;
  ro->cfg_lean = cfg.lean && !cfg.aggregate ? 1 : 0;
  user_disk_time_ = cfg.user_disk_time && !cfg.lean && user_disk_time_possible(cfg);
  ro->cfg_no_devstate = user_disk_time_ ? 1 : 0;
  ro->cfg_attr_insert = plan_.insert && !plan_.io_start ? 1 : 0;
  ro->cfg_fault_skip_every = cfg.fault_skip_completion_every;
  ro->cfg_fault_whole = cfg.fault_whole ? 1 : 0;
  BLKRR_TRY(select_devices());
  // Only one of the two device state maps is used.
  bpf_map__set_max_entries(cfg.devices.empty() ? skel_->maps.devstate_sel : skel_->maps.devstate,
                           1);
  uint32_t rb_bytes = cfg.emit_events ? round_pow2(uint64_t{cfg.ringbuf_mb} << 20) : 4096;
  // Wake the consumer after each CPU wrote 1/16 of the buffer (at most 2 MiB
  // in all) since its last wake-up; otherwise it drains on its poll timeout.
  // A power of two: the programs test it with a mask.
  const uint64_t per_cpu = std::min<uint64_t>(rb_bytes / 16, 2u << 20) / sizeof(blkrr_event) /
                           std::max(1, libbpf_num_possible_cpus());
  ro->cfg_wake_every = per_cpu == 0 ? 1 : uint64_t{1} << (63 - __builtin_clzll(per_cpu));
  if (bpf_map__set_max_entries(skel_->maps.events, rb_bytes) != 0)
    return Error("cannot size the ring buffer to " + std::to_string(rb_bytes) + " bytes");
  return {};
}

// Selected disks, with the sector ranges of selected partitions (read-only
// data: the programs compare without a map lookup).
Status CaptureImpl::select_devices() {
  auto* ro = skel_->rodata;
  std::map<DevT, blkrr_dev_sel> sel;
  std::map<DevT, bool> whole;
  for (const auto& d : cfg_.devices) {
    auto& s = sel[d.disk];
    s.disk = d.disk;
    if (!d.part) {
      whole[d.disk] = true;
      continue;
    }
    if (s.nr_ranges >= BLKRR_MAX_RANGES)
      return Error("too many partitions of " + d.disk_name + " selected (at most " +
                   std::to_string(BLKRR_MAX_RANGES) + "); select the whole disk instead");
    s.ranges[s.nr_ranges].start = d.part->start_sector;
    s.ranges[s.nr_ranges].end = d.part->start_sector + d.part->nr_sectors;
    s.nr_ranges++;
  }
  if (sel.size() > BLKRR_MAX_DISKS)
    return Error("too many devices selected (at most " + std::to_string(BLKRR_MAX_DISKS) + ")");
  for (auto& [disk, s] : sel) {
    if (whole.count(disk)) s.nr_ranges = 0;
    const_cast<blkrr_dev_sel&>(ro->cfg_disks[ro->cfg_ndisks]) = s;
    ro->cfg_ndisks = ro->cfg_ndisks + 1;
  }
  return {};
}

// The plan's programs: the prototype variant of each tracepoint, the
// optional ones only where planned.
Status CaptureImpl::set_autoload() {
  for (const auto& [name, on] : capture::program_autoload(plan_)) {
    bpf_program* prog = bpf_object__find_program_by_name(skel_->obj, name.c_str());
    if (!prog) return Error("BPF program " + name + " missing from the capture object (build bug)");
    bpf_program__set_autoload(prog, on);
  }
  bpf_program__set_autoattach(skel_->progs.blkrr_check, false);
  return {};
}

// The capture_bpf skeleton over the object built without fetching atomics
// (same maps, programs and globals, so every skeleton pointer binds by name).
capture_bpf* open_compat() {
  auto* obj = static_cast<capture_bpf*>(calloc(1, sizeof(capture_bpf)));
  if (!obj) return nullptr;
  if (capture_bpf__create_skeleton(obj) != 0) {
    capture_bpf__destroy(obj);
    return nullptr;
  }
  obj->skeleton->data = const_cast<void*>(capture_compat_bpf__elf_bytes(&obj->skeleton->data_sz));
  if (bpf_object__open_skeleton(obj->skeleton, nullptr) != 0) {
    capture_bpf__destroy(obj);
    return nullptr;
  }
  return obj;
}

Status CaptureImpl::open_and_load() {
  skel_.reset(plan_.compat ? open_compat() : capture_bpf__open());
  if (!skel_) return Error(std::string("cannot open the BPF skeleton: ") + strerror(errno));
  BLKRR_TRY(configure());
  BLKRR_TRY(set_autoload());
  {
    std::lock_guard<std::mutex> lk(libbpf_log().mu);
    libbpf_log().failed_prog.clear();
  }
  int err = capture_bpf__load(skel_.get());
  if (err == 0) return {};
  skel_.reset();
  std::string prog;
  {
    std::lock_guard<std::mutex> lk(libbpf_log().mu);
    prog = libbpf_log().failed_prog;
  }
  return capture::load_error(-err, prog, features_.kernel);
}

// Every selected disk's state slot names its disk (also before its first
// request, so device_busy() lists it).
Status CaptureImpl::init_device_slots() {
  if (cfg_.devices.empty() || devstate_off()) return {};
  int fd = bpf_map__fd(skel_->maps.devstate_sel);
  for (uint32_t i = 0; i < skel_->rodata->cfg_ndisks; i++) {
    DevStateValue v{};
    v.s.disk = skel_->rodata->cfg_disks[i].disk;
    if (bpf_map_update_elem(fd, &i, &v, BPF_ANY) != 0)
      return Error("cannot initialise the state of device " + dev_to_string(v.s.disk) + ": " +
                   strerror(errno));
  }
  return {};
}

Status CaptureImpl::attach() {
  if (int err = capture_bpf__attach(skel_.get()); err != 0)
    return Error(std::string("attaching the BPF programs to the block tracepoints failed: ") +
                 strerror(-err) + " (" + capture::security_summary(features_.kernel) + ")");
  if (cfg_.emit_events) {
    rb_.reset(ring_buffer__new(bpf_map__fd(skel_->maps.events), on_event, this, nullptr));
    if (!rb_) return Error(std::string("cannot open the ring buffer: ") + strerror(errno));
  }
  if (!plan_.check) return {};
  // The checker iterates the request map.
  union bpf_iter_link_info info {};
  info.map.map_fd = static_cast<__u32>(bpf_map__fd(skel_->maps.inflight));
  bpf_iter_attach_opts opts{};
  opts.sz = sizeof(opts);
  opts.link_info = &info;
  opts.link_info_len = sizeof(info);
  check_link_.reset(bpf_program__attach_iter(skel_->progs.blkrr_check, &opts));
  if (!check_link_) {
    plan_.check = false;
    plan_.idle_check = true;
    print_notes_once({std::string("blkrr: map_iter off (attach: ") + strerror(errno) +
                      "): lost completions are found by the sysfs idle check"});
  }
  return {};
}

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
  if (stopped_) return Error("capture already stopped");
  fn_ = &fn;
  delivered_now_ = 0;
  deliver_swept();
  if (rb_) {
    int n = ring_buffer__poll(rb_.get(), timeout_ms);
    if (n < 0 && n != -EINTR) {
      fn_ = nullptr;
      return Error(std::string("reading the ring buffer failed: ") + strerror(-n));
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
        return Error("removing an aggregation entry of pid " + std::to_string(want.pid) +
                     " from the kernel map failed: " + strerror(errno));
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

}  // namespace

Result<std::unique_ptr<Capture>> Capture::start(const CaptureConfig& cfg) {
  auto impl = std::make_unique<CaptureImpl>();
  if (auto st = impl->init(cfg); !st) return st.error();
  return std::unique_ptr<Capture>(std::move(impl));
}

}  // namespace blkrr
