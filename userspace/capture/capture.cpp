// Capture::start and the loader behind it: opens the skeleton, configures
// and loads the programs and attaches them (the ring buffer and the sweeper
// in capture_events.cpp, the maps in capture_maps.cpp).
#include "capture/capture_impl.h"
#include "capture/verifier_stats.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace blkrr::capture_internal {
namespace {

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
    return Error(ErrorKind::kUsage,
                 std::string("BLKRR_FAULT_SKIP_COMPLETION='") + f +
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

}  // namespace

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
  plan_ = capture::plan_programs(features_, cfg_.queue_time, cfg_.io_done_fallback,
                                 !cfg_.stack_pieces.empty(), !cfg_.bio_level.empty());
  if (!cfg_.bio_level.empty() && !plan_.bio_level)
    return Error(ErrorKind::kUnsupported,
                 cfg_.bio_level.front().name +
                     " can only be recorded at the bio level, and this kernel cannot: " +
                     capture::bio_level_refusal(features_.kernel));
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
  BLKRR_TRY(select_stack_pieces());
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
    return Error(ErrorKind::kInternal,
                 "cannot size the ring buffer to " + std::to_string(rb_bytes) + " bytes");
  return {};
}

static_assert(kCaptureRangesPerDisk == BLKRR_MAX_RANGES, "one filter size");
static_assert(kCaptureStackPieces == BLKRR_MAX_SEGS, "one table size");

// The stacked volumes' pieces (read-only data, like the device filter).
Status CaptureImpl::select_stack_pieces() {
  auto* ro = skel_->rodata;
  if (cfg_.stack_pieces.size() > BLKRR_MAX_SEGS)
    return Error(ErrorKind::kUsage, "too many pieces of stacked volumes (" +
                                        std::to_string(cfg_.stack_pieces.size()) + ", at most " +
                                        std::to_string(BLKRR_MAX_SEGS) + ")");
  uint32_t n = 0;
  for (const auto& p : cfg_.stack_pieces)
    const_cast<blkrr_seg&>(ro->cfg_segs[n++]) = capture::stack_seg(p);
  ro->cfg_nsegs = n;
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
      return Error(ErrorKind::kUsage, "too many partitions of " + d.disk_name +
                                          " selected (at most " + std::to_string(BLKRR_MAX_RANGES) +
                                          "); select the whole disk instead");
    s.ranges[s.nr_ranges].start = d.part->start_sector;
    s.ranges[s.nr_ranges].end = d.part->start_sector + d.part->nr_sectors;
    s.nr_ranges++;
  }
  if (sel.size() > BLKRR_MAX_DISKS)
    return Error(ErrorKind::kUsage,
                 "too many devices selected (at most " + std::to_string(BLKRR_MAX_DISKS) + ")");
  uint64_t bio_mask = 0;
  for (auto& [disk, s] : sel) {
    if (whole.count(disk)) s.nr_ranges = 0;
    for (const auto& b : cfg_.bio_level)
      if (b.dev == disk) bio_mask |= uint64_t{1} << ro->cfg_ndisks;
    const_cast<blkrr_dev_sel&>(ro->cfg_disks[ro->cfg_ndisks]) = s;
    ro->cfg_ndisks = ro->cfg_ndisks + 1;
  }
  ro->cfg_bio_level_mask = bio_mask;
  return {};
}

// The plan's programs: the prototype variant of each tracepoint, the
// optional ones only where planned.
Status CaptureImpl::set_autoload() {
  for (const auto& [name, on] : capture::program_autoload(plan_)) {
    bpf_program* prog = bpf_object__find_program_by_name(skel_->obj, name.c_str());
    if (!prog)
      return Error(ErrorKind::kInternal,
                   "BPF program " + name + " missing from the capture object (build bug)");
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
  if (!skel_) return Error::system("cannot open the BPF skeleton", errno);
  BLKRR_TRY(configure());
  BLKRR_TRY(set_autoload());
  {
    std::lock_guard<std::mutex> lk(libbpf_log().mu);
    libbpf_log().failed_prog.clear();
  }
  capture::VerifierStats stats;
  if (capture::VerifierStats::requested()) stats.arm(skel_->obj);
  int err = capture_bpf__load(skel_.get());
  if (err == 0) {
    if (capture::VerifierStats::requested()) stats.print(skel_->obj);
    return {};
  }
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
      return Error::system("cannot initialise the state of device " + dev_to_string(v.s.disk),
                           errno);
  }
  return {};
}

Status CaptureImpl::attach() {
  if (int err = capture_bpf__attach(skel_.get()); err != 0)
    return Error::system("attaching the BPF programs to the block tracepoints failed", -err)
        .append(" (" + capture::security_summary(features_.kernel) + ")");
  if (cfg_.emit_events) {
    rb_.reset(ring_buffer__new(bpf_map__fd(skel_->maps.events), on_event, this, nullptr));
    if (!rb_) return Error::system("cannot open the ring buffer", errno);
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

}  // namespace blkrr::capture_internal

namespace blkrr {

Result<std::unique_ptr<Capture>> Capture::start(const CaptureConfig& cfg) {
  auto impl = std::make_unique<capture_internal::CaptureImpl>();
  if (auto st = impl->init(cfg); !st) return st.error();
  return std::unique_ptr<Capture>(std::move(impl));
}

}  // namespace blkrr
