#include "live/delta.h"

#include <tuple>

namespace blkrr::live {

namespace {

uint64_t diff(uint64_t now, uint64_t before) {
  return now >= before ? now - before : now;
}

}  // namespace

bool AggKeyLess::operator()(const AggKey& a, const AggKey& b) const {
  return std::tie(a.pid, a.tid, a.cgroup_id, a.dev, a.disk, a.dir, a.comm) <
         std::tie(b.pid, b.tid, b.cgroup_id, b.dev, b.disk, b.dir, b.comm);
}

std::vector<AggEntry> AggDelta::update(const std::vector<AggEntry>& cumulative) {
  std::vector<AggEntry> out;
  std::map<AggKey, AggValue, AggKeyLess> now;
  std::map<AggKey, std::pair<uint32_t, uint32_t>, AggKeyLess> who;  // uid, ppid
  for (const auto& e : cumulative) {
    AggValue& v = now[e.key];  // duplicates (per-CPU copies) are summed
    v.requests += e.value.requests;
    v.bytes += e.value.bytes;
    v.disk_time_ns += e.value.disk_time_ns;
    v.latency_ns += e.value.latency_ns;
    for (size_t i = 0; i < v.latency_hist.size(); ++i) v.latency_hist[i] += e.value.latency_hist[i];
    auto [w, inserted] = who.try_emplace(e.key, e.uid, e.ppid);
    if (!inserted && w->second.first == kNoUid) w->second = {e.uid, e.ppid};
  }
  for (const auto& [key, v] : now) {
    AggValue before{};
    if (auto it = prev_.find(key); it != prev_.end()) before = it->second;
    // A counter going backwards means the entry was recreated: take it whole.
    bool reset = v.requests < before.requests;
    AggValue d;
    d.requests = reset ? v.requests : diff(v.requests, before.requests);
    d.bytes = reset ? v.bytes : diff(v.bytes, before.bytes);
    d.disk_time_ns = reset ? v.disk_time_ns : diff(v.disk_time_ns, before.disk_time_ns);
    d.latency_ns = reset ? v.latency_ns : diff(v.latency_ns, before.latency_ns);
    for (size_t i = 0; i < d.latency_hist.size(); ++i)
      d.latency_hist[i] =
          reset ? v.latency_hist[i] : diff(v.latency_hist[i], before.latency_hist[i]);
    if (d.requests || d.bytes || d.disk_time_ns || d.latency_ns) {
      const auto& [uid, ppid] = who[key];
      out.push_back({key, d, uid, ppid});
    }
  }
  prev_ = std::move(now);
  return out;
}

void AggDelta::forget(const std::vector<AggKey>& keys) {
  for (const auto& k : keys) prev_.erase(k);
}

std::vector<DeviceBusy> BusyDelta::update(const std::vector<DeviceBusy>& cumulative) {
  std::vector<DeviceBusy> out;
  std::map<DevT, DeviceBusy> now;
  for (const auto& d : cumulative) now[d.disk] = d;
  for (const auto& [disk, d] : now) {
    DeviceBusy before{};
    if (auto it = prev_.find(disk); it != prev_.end()) before = it->second;
    bool reset = d.requests < before.requests;
    DeviceBusy x = d;
    x.busy_ns = reset ? d.busy_ns : diff(d.busy_ns, before.busy_ns);
    x.requests = reset ? d.requests : diff(d.requests, before.requests);
    out.push_back(x);
  }
  prev_ = std::move(now);
  return out;
}

Counters CounterDelta::update(const Counters& cumulative) {
  Counters out;
  for (const auto& [name, v] : cumulative) {
    uint64_t before = 0;
    if (auto it = prev_.find(name); it != prev_.end()) before = it->second;
    if (v > before) out[name] = v - before;
  }
  prev_ = cumulative;
  return out;
}

}  // namespace blkrr::live
