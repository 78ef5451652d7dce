#include "validate/live_validator.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <fstream>

#include "core/clock.h"
#include "core/bio_level.h"
#include "core/device_stack.h"
#include "core/volume_stack.h"

namespace blkrr::validate {

bool device_has_write_cache(const std::string& disk_name, const std::string& sysfs) {
  std::ifstream in(sysfs + "/block/" + disk_name + "/queue/write_cache");
  std::string a, b;
  if (!(in >> a >> b)) return true;  // unknown: expect flushes, report them if missing
  return a == "write" && b == "back";
}

namespace {

MatchOptions match_options(const LiveOptions& opts, bool flush_reaches_device) {
  MatchOptions mo = opts.match;
  mo.flush_reaches_device = flush_reaches_device;
  mo.window_ns = opts.window_ns;
  mo.max_held_bytes = opts.max_held_bytes;
  return mo;
}

}  // namespace

Result<std::unique_ptr<LiveValidator>> LiveValidator::start(const std::string& device,
                                                            const LiveOptions& opts) {
  auto sel = resolve_device(device);
  if (!sel) return sel.error().context("validator: resolving " + device);
  // The validator proves completeness from requests: a dm or md volume has
  // none of its own, so the disks below it are watched through its map
  // (validate/volume_lens.h); a device whose mapping blkrr cannot follow
  // is watched at the bio level (core/bio_level.h).
  if (!has_request_queue(sel->disk)) {
    auto c = choose_capture_level(*sel, read_dm_table);
    if (!c) return c.error().context("validator: " + device);
    if (c->level == CaptureLevel::kVolume) return start(*sel, opts, std::move(*c->volume));
    if (c->level == CaptureLevel::kBio) return start(*sel, opts, c->bio);
  }
  BLKRR_TRY(require_request_device(*sel, device));
  return start(*sel, opts);
}

Result<std::unique_ptr<LiveValidator>> LiveValidator::start(const DeviceSelection& device,
                                                            const LiveOptions& opts,
                                                            BioLevelDevice bio) {
  return start_plain(device, opts, {std::move(bio)});
}

Result<std::unique_ptr<LiveValidator>> LiveValidator::start(const DeviceSelection& device,
                                                            const LiveOptions& opts,
                                                            VolumeMap volume) {
  if (opts.keep_all)
    return Error(ErrorKind::kUnsupported,
                 "validator: keeping every record of a stacked volume is not supported");
  if (volume.extents.empty())
    return Error(ErrorKind::kUsage, "validator: " + device.spec + ": the volume has no sectors");
  std::unique_ptr<LiveValidator> v(new LiveValidator(opts));
  v->dev_ = device;
  // A flush on a volume reaches each disk below as a flush of no sector of
  // the volume: it is not matched (MatchOptions::flush_reaches_device).
  v->flush_reaches_device_ = false;
  MatchOptions mo = match_options(opts, false);
  v->matcher_ = std::make_unique<WindowMatcher>(mo);
  CaptureConfig cfg;
  cfg.devices = volume_selections(volume, device.spec, kCaptureRangesPerDisk);
  v->lens_ = std::make_unique<VolumeLens>(std::move(volume), mo);
  BLKRR_TRY(v->attach(cfg));
  return v;
}

Result<std::unique_ptr<LiveValidator>> LiveValidator::start(const DeviceSelection& device,
                                                            const LiveOptions& opts) {
  return start_plain(device, opts, {});
}

Result<std::unique_ptr<LiveValidator>> LiveValidator::start_plain(
    const DeviceSelection& device, const LiveOptions& opts,
    const std::vector<BioLevelDevice>& bio_level) {
  std::unique_ptr<LiveValidator> v(new LiveValidator(opts));
  v->dev_ = device;
  v->part_offset_ = device.part ? device.part->start_sector : 0;
  v->flush_reaches_device_ = device_has_write_cache(device.disk_name);
  if (opts.keep_all) {
    v->seen_ = std::make_unique<EventStore>();
  } else {
    v->matcher_ = std::make_unique<WindowMatcher>(match_options(opts, v->flush_reaches_device_));
  }
  CaptureConfig cfg;
  cfg.devices = {device};
  cfg.bio_level = bio_level;
  BLKRR_TRY(v->attach(cfg));
  return v;
}

Status LiveValidator::attach(CaptureConfig cfg) {
  cfg.emit_events = true;
  cfg.ringbuf_mb = opts_.ringbuf_mb;
  cfg.lean = opts_.lean;
  auto cap = Capture::start(cfg);
  if (!cap) return cap.error().context("validator: capturing " + dev_.spec);
  cap_ = std::move(*cap);
  thread_ = std::thread([this] { reader(); });
  if (opts_.settle_ms) std::this_thread::sleep_for(std::chrono::milliseconds(opts_.settle_ms));
  baseline_ = cap_->counters();
  return {};
}

LiveValidator::LiveValidator(const LiveOptions& opts) : opts_(opts) {}

LiveValidator::~LiveValidator() {
  // A validator whose capture failed to start has nothing to stop.
  if (!stopped_ && cap_) (void)stop();
}

void LiveValidator::on_record(const Request& r) {
  ++seen_count_;
  if (seen_)
    seen_->add(r);
  else if (lens_)
    lens_->add_block(r, *matcher_);
  else
    matcher_->add_block(r);
}

void LiveValidator::add_replayed(std::span<const ReplayedRequest> replayed) {
  std::lock_guard<std::mutex> lk(in_mu_);
  for (ReplayedRequest r : replayed) {
    r.sector += part_offset_;
    incoming_.push_back(r);
  }
}

void LiveValidator::take_replayed() {
  {
    std::lock_guard<std::mutex> lk(in_mu_);
    taking_.swap(incoming_);
  }
  for (const ReplayedRequest& r : taking_) {
    if (r.submitted() && r.complete_ns != kNoTime)
      replay_clock_ = std::max(replay_clock_, r.complete_ns);
    if (matcher_) matcher_->add_replayed(r);
    if (lens_) lens_->add_replayed(r);
  }
  taking_.clear();
}

// After each read of the ring buffer the consumer takes the replayer's new
// requests and resolves what is older than the window: every record the
// capture emitted before the read began is in, and the replayer's requests
// come in completion order.
void LiveValidator::reader() {
  Capture::EventFn fn = [this](const Request& r) { on_record(r); };
  while (!quit_.load(std::memory_order_acquire)) {
    const uint64_t polled_at = mono_ns();
    auto n = cap_->poll(opts_.poll_ms, fn);
    if (!n) {
      reader_error_ = n.error();
      reader_failed_ = true;
      break;
    }
    records_.store(seen_count_, std::memory_order_relaxed);
    if (matcher_) {
      take_replayed();
      const uint64_t clock = std::min(polled_at, replay_clock_);
      if (opts_.window_ns > 0 && clock > opts_.window_ns) {
        matcher_->advance(clock - opts_.window_ns);
        if (lens_) lens_->advance(clock - opts_.window_ns);
      }
    }
    if (opts_.consumer_pause_ms)
      std::this_thread::sleep_for(std::chrono::milliseconds(opts_.consumer_pause_ms));
  }
  reader_cpu_ns_ = thread_cpu_ns();
}

Result<Observation> LiveValidator::stop() {
  if (stopped_) return Error(ErrorKind::kInternal, "validator: stop() called twice");
  stopped_ = true;
  if (!cap_) return Error(ErrorKind::kInternal, "validator: the capture never started");
  quit_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  uint64_t cpu0 = thread_cpu_ns();
  Capture::EventFn fn = [this](const Request& r) { on_record(r); };
  auto st = cap_->stop(fn);
  records_.store(seen_count_, std::memory_order_relaxed);
  if (reader_failed_) return reader_error_.context("validator: reading the capture");
  if (!st) return st.error().context("validator: stopping the capture");
  Observation obs;
  obs.counters = cap_->counters();
  obs.capture_features = cap_->features();
  cap_.reset();
  // Requests in flight when the capture attached complete without a seen
  // issue; they belong to nobody's replay. Count only those after start().
  // The same for the other counters of anomalies from before start()
  // returned (programs skipped, attribution at issue).
  for (const char* k : {"completion_without_issue", "prog_recursion_misses", "task_from_issue"}) {
    auto base = baseline_.find(k);
    auto cur = obs.counters.find(k);
    if (base == baseline_.end() || cur == obs.counters.end()) continue;
    cur->second = cur->second > base->second ? cur->second - base->second : 0;
  }
  // Every record the kernel emitted must have reached us.
  auto get = [&](const char* k) {
    auto it = obs.counters.find(k);
    return it == obs.counters.end() ? uint64_t{0} : it->second;
  };
  uint64_t expected = get("events") + get("completion_not_seen_swept") +
                      get("completion_not_seen_at_stop") + get("completion_not_seen_idle_emitted");
  uint64_t got = seen_count_;
  obs.counters["validator_records"] = got;
  obs.counters["validator_records_lost"] = expected > got ? expected - got : 0;
  if (seen_) obs.requests = seen_->take();
  obs.cost.records = got;
  obs.cost.reader_cpu_ns = reader_cpu_ns_;
  obs.cost.stop_cpu_ns = thread_cpu_ns() - cpu0;
  obs.device = dev_;
  obs.partition_offset = part_offset_;
  obs.flush_reaches_device = flush_reaches_device_;
  return obs;
}

Result<Report> LiveValidator::finish(const std::vector<ReplayedRequest>& replayed) {
  add_replayed(replayed);
  return finish();
}

Result<Report> LiveValidator::finish() {
  if (!matcher_)
    return Error(ErrorKind::kInternal,
                 "validator: finish() needs a validator started without keep_all");
  auto obs = stop();
  if (!obs) return obs.error();
  take_replayed();
  Losses losses;
  losses_from_counters(obs->counters, losses);
  uint64_t t0 = mono_ns();
  Report rep = matcher_->finish(losses);
  rep.cost = obs->cost;
  rep.cost.max_held_requests = matcher_->max_held_requests();
  rep.cost.max_held_blocks = matcher_->max_held_blocks();
  rep.cost.max_held_bytes = matcher_->max_held_bytes();
  rep.cost.identical_requests = matcher_->identical_requests();
  rep.cost.identical_blocks = matcher_->identical_blocks();
  rep.capture_counters = obs->counters;
  rep.capture_features = obs->capture_features;
  if (lens_) {
    lens_->finish(rep, losses);
    rep.cost.match_ns = mono_ns() - t0;
    rep.notes.push_back("live capture of " + obs->device.spec + " through its stack (" +
                        rep.stack->stack + "): " + std::to_string(rep.observed) +
                        " volume records from the disks' requests");
    return rep;
  }
  rep.cost.match_ns = mono_ns() - t0;
  rep.notes.push_back("live capture of " + obs->device.spec + " (" + obs->device.disk_name +
                      (obs->device.part
                           ? ", partition at sector " + std::to_string(obs->partition_offset)
                           : std::string()) +
                      "): " + std::to_string(rep.observed) + " block-layer requests");
  return rep;
}

}  // namespace blkrr::validate
