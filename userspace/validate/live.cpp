#include "core/clock.h"
#include "validate/live.h"

#include <time.h>

#include <chrono>
#include <fstream>

#include "validate/matcher.h"

namespace blkrr::validate {

namespace {}  // namespace

bool device_has_write_cache(const std::string& disk_name, const std::string& sysfs) {
  std::ifstream in(sysfs + "/block/" + disk_name + "/queue/write_cache");
  std::string a, b;
  if (!(in >> a >> b)) return true;  // unknown: expect flushes, report them if missing
  return a == "write" && b == "back";
}

Result<std::unique_ptr<LiveValidator>> LiveValidator::start(const std::string& device,
                                                            const LiveOptions& opts) {
  auto sel = resolve_device(device);
  if (!sel) return sel.error().context("validator: resolving " + device);
  return start(*sel, opts);
}

Result<std::unique_ptr<LiveValidator>> LiveValidator::start(const DeviceSelection& device,
                                                            const LiveOptions& opts) {
  std::unique_ptr<LiveValidator> v(new LiveValidator());
  v->opts_ = opts;
  v->dev_ = device;
  v->part_offset_ = device.part ? device.part->start_sector : 0;
  v->flush_reaches_device_ = device_has_write_cache(device.disk_name);
  CaptureConfig cfg;
  cfg.devices = {device};
  cfg.emit_events = true;
  cfg.ringbuf_mb = opts.ringbuf_mb;
  cfg.lean = opts.lean;
  auto cap = Capture::start(cfg);
  if (!cap) return cap.error().context("validator: capturing " + device.spec);
  v->cap_ = std::move(*cap);
  v->thread_ = std::thread([p = v.get()] { p->reader(); });
  if (opts.settle_ms) std::this_thread::sleep_for(std::chrono::milliseconds(opts.settle_ms));
  v->baseline_ = v->cap_->counters();
  return v;
}

LiveValidator::~LiveValidator() {
  // A validator whose capture failed to start has nothing to stop.
  if (!stopped_ && cap_) (void)stop();
}

// The consumer only stores each record (EventStore: no allocation per
// record); everything else waits until the replay is over.
void LiveValidator::reader() {
  Capture::EventFn fn = [this](const Request& r) { seen_.add(r); };
  while (!quit_.load(std::memory_order_acquire)) {
    auto n = cap_->poll(opts_.poll_ms, fn);
    if (!n) {
      reader_error_ = n.error();
      reader_failed_ = true;
      break;
    }
    records_.store(seen_.size(), std::memory_order_relaxed);
    if (opts_.consumer_pause_ms)
      std::this_thread::sleep_for(std::chrono::milliseconds(opts_.consumer_pause_ms));
  }
  reader_cpu_ns_ = thread_cpu_ns();
}

Result<Observation> LiveValidator::stop() {
  if (stopped_) return Error("validator: stop() called twice");
  stopped_ = true;
  if (!cap_) return Error("validator: the capture never started");
  quit_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  uint64_t cpu0 = thread_cpu_ns();
  Capture::EventFn fn = [this](const Request& r) { seen_.add(r); };
  auto st = cap_->stop(fn);
  records_.store(seen_.size(), std::memory_order_relaxed);
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
  uint64_t got = seen_.size();
  obs.counters["validator_records"] = got;
  obs.counters["validator_records_lost"] = expected > got ? expected - got : 0;
  obs.requests = seen_.take();
  obs.cost.records = got;
  obs.cost.reader_cpu_ns = reader_cpu_ns_;
  obs.cost.stop_cpu_ns = thread_cpu_ns() - cpu0;
  obs.device = dev_;
  obs.partition_offset = part_offset_;
  obs.flush_reaches_device = flush_reaches_device_;
  return obs;
}

Result<Report> LiveValidator::finish(std::vector<ReplayedRequest> replayed) {
  auto obs = stop();
  if (!obs) return obs.error();
  for (auto& r : replayed) r.sector += obs->partition_offset;
  MatchOptions mo = opts_.match;
  mo.flush_reaches_device = obs->flush_reaches_device;
  Losses losses;
  losses_from_counters(obs->counters, losses);
  uint64_t t0 = mono_ns();
  Report rep = match_requests(replayed, obs->requests, losses, mo);
  rep.cost = obs->cost;
  rep.capture_counters = obs->counters;
  rep.capture_features = obs->capture_features;
  rep.cost.match_ns = mono_ns() - t0;
  rep.notes.push_back("live capture of " + obs->device.spec + " (" + obs->device.disk_name +
                      (obs->device.part
                           ? ", partition at sector " + std::to_string(obs->partition_offset)
                           : std::string()) +
                      "): " + std::to_string(obs->requests.size()) + " block-layer requests");
  return rep;
}

}  // namespace blkrr::validate
