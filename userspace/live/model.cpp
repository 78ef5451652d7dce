#include "live/model.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace blkrr::live {

Result<GroupBy> parse_group_by(std::string_view s) {
  if (s == "pid") return GroupBy::kPid;
  if (s == "comm") return GroupBy::kComm;
  if (s == "cgroup") return GroupBy::kCgroup;
  return Error("unknown grouping '" + std::string(s) + "' (use pid, comm or cgroup)");
}

Result<SortKey> parse_sort_key(std::string_view s) {
  if (s == "io") return SortKey::kIo;
  if (s == "bytes") return SortKey::kBytes;
  if (s == "time") return SortKey::kTime;
  return Error("unknown sort key '" + std::string(s) + "' (use io, bytes or time)");
}

std::string_view group_by_name(GroupBy g) {
  switch (g) {
    case GroupBy::kPid:
      return "pid";
    case GroupBy::kComm:
      return "comm";
    case GroupBy::kCgroup:
      return "cgroup";
  }
  return "pid";
}

double raw_percent_of(uint64_t disk_time_ns, uint64_t interval_ns) {
  if (interval_ns == 0) return 0;
  return 100.0 * static_cast<double>(disk_time_ns) / static_cast<double>(interval_ns);
}

double percent_of(uint64_t disk_time_ns, uint64_t interval_ns) {
  return std::min(100.0, raw_percent_of(disk_time_ns, interval_ns));
}

namespace {
struct Loss {
  std::string_view name, meaning;
};
constexpr Loss kLoss[] = {
    {"ringbuf_reserve_failed", "events dropped: the ring buffer was full (consumer too slow)"},
    {"inflight_map_full", "requests not followed: too many in flight at once"},
    {"agg_map_full", "requests not counted: too many (task, device) entries"},
    {"devstate_map_full", "devices not followed: too many disks"},
    {"completion_not_seen_reissued",
     "the kernel did not deliver a request's completion event (seen on virtio); the request "
     "was dropped when the kernel issued its slot again, its disk time until then kept"},
    {"completion_not_seen_checked",
     "the kernel did not deliver a completion event; the checker found the request no "
     "longer in flight and dropped it"},
    {"completion_not_seen_idle", "a completion event not delivered, found on an idle disk"},
    {"inflight_swept", "requests in flight for too long, dropped by the sweeper"},
    {"prog_recursion_misses", "events the kernel did not run the BPF program for"},
    {"fault_skipped_completions", "completions skipped on purpose (fault injection test)"},
};
}  // namespace

bool is_loss_counter(std::string_view name) {
  for (const auto& l : kLoss)
    if (name == l.name) return true;
  return false;
}

std::vector<std::string_view> loss_counter_names() {
  std::vector<std::string_view> v;
  for (const auto& l : kLoss) v.push_back(l.name);
  return v;
}

std::string_view loss_meaning(std::string_view name) {
  for (const auto& l : kLoss)
    if (name == l.name) return l.meaning;
  return "not counted (docs/top.md)";
}

namespace {

std::string comm_string(const std::array<char, 16>& c) {
  auto end = std::find(c.begin(), c.end(), '\0');
  return std::string(c.begin(), end);
}

void add(AggValue& to, const AggValue& v) {
  to.requests += v.requests;
  to.bytes += v.bytes;
  to.disk_time_ns += v.disk_time_ns;
  to.latency_ns += v.latency_ns;
  for (size_t i = 0; i < to.latency_hist.size(); ++i) to.latency_hist[i] += v.latency_hist[i];
}

}  // namespace

std::vector<Row> group_rows(const std::vector<AggEntry>& deltas, GroupBy by, const Lookups& lk) {
  // Group key: (pid, comm or cgroup, partition, direction).
  using Key = std::tuple<uint32_t, std::string, uint64_t, DevT, Op>;
  std::map<Key, Row> rows;
  std::map<Key, std::set<std::pair<uint32_t, uint32_t>>> tasks;
  for (const auto& e : deltas) {
    const AggKey& k = e.key;
    std::string comm = comm_string(k.comm);
    Key key;
    switch (by) {
      case GroupBy::kPid:
        key = {k.pid, comm, 0, k.dev, k.dir};
        break;
      case GroupBy::kComm:
        key = {0, comm, 0, k.dev, k.dir};
        break;
      case GroupBy::kCgroup:
        key = {0, "", k.cgroup_id, k.dev, k.dir};
        break;
    }
    auto [it, inserted] = rows.try_emplace(key);
    Row& r = it->second;
    if (inserted) {
      r.dev = k.dev;
      r.dir = k.dir;
      r.device = lk.device_name ? lk.device_name(k.dev) : dev_to_string(k.dev);
      if (by == GroupBy::kPid) {
        r.pid = k.pid;
        r.comm = comm;
        r.cgroup_id = k.cgroup_id;
        if (lk.proc) r.proc = lk.proc(k.pid);
      } else if (by == GroupBy::kComm) {
        r.comm = comm;
      } else {
        r.cgroup_id = k.cgroup_id;
        r.comm = lk.cgroup_name ? lk.cgroup_name(k.cgroup_id) : std::to_string(k.cgroup_id);
      }
    }
    if (by == GroupBy::kPid && !r.proc && e.uid != kNoUid) r.proc = ProcInfo{e.uid, e.ppid};
    add(r.v, e.value);
    tasks[key].insert({k.pid, k.tid});
  }
  std::vector<Row> out;
  out.reserve(rows.size());
  for (auto& [key, r] : rows) {
    r.tasks = static_cast<uint32_t>(tasks[key].size());
    out.push_back(std::move(r));
  }
  return out;
}

void sort_rows(std::vector<Row>& rows, SortKey key) {
  auto primary = [key](const Row& r) {
    switch (key) {
      case SortKey::kIo:
        return r.v.requests;
      case SortKey::kBytes:
        return r.v.bytes;
      case SortKey::kTime:
        return r.v.disk_time_ns;
    }
    return r.v.bytes;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    uint64_t pa = primary(a), pb = primary(b);
    if (pa != pb) return pa > pb;
    if (a.v.disk_time_ns != b.v.disk_time_ns) return a.v.disk_time_ns > b.v.disk_time_ns;
    return std::tie(a.pid, a.comm, a.dev, a.dir) < std::tie(b.pid, b.comm, b.dev, b.dir);
  });
}

void TopModel::set_start(uint64_t start_mono_ns,
                         const std::optional<std::vector<DiskStat>>& diskstats) {
  last_mono_ = start_mono_ns;
  prev_ticks_.clear();
  if (diskstats)
    for (const auto& ds : *diskstats) prev_ticks_[ds.dev] = ds.io_ticks_ms;
}

Snapshot TopModel::update(const Sample& s) {
  Snapshot snap;
  snap.seq = ++seq_;
  snap.wall_ns = s.wall_ns;
  snap.interval_ns = s.mono_ns > last_mono_ ? s.mono_ns - last_mono_ : 0;
  last_mono_ = s.mono_ns;
  snap.loadavg = s.loadavg;
  snap.by = by_;
  snap.deltas = agg_.update(s.agg);
  agg_.forget(s.released);
  snap.tracked_keys = agg_.size();
  snap.released_keys = s.released.size();
  snap.counters = counters_.update(s.counters);
  for (const auto& [name, n] : snap.counters)
    if (is_loss_counter(name)) snap.lost[name] = n;
  snap.rows = group_rows(snap.deltas, by_, lk_);
  sort_rows(snap.rows, sort_);

  std::map<DevT, DeviceRow> devs;
  for (const auto& b : busy_.update(s.busy)) {
    DeviceRow& d = devs[b.disk];
    d.disk = b.disk;
    d.busy_ns = b.busy_ns;
    d.requests = b.requests;
    d.pending = b.pending;
  }
  for (const auto& e : snap.deltas) {
    add(e.key.dir == Op::kRead ? snap.read : snap.write, e.value);
    add(snap.total, e.value);
    DeviceRow& d = devs[e.key.disk];
    d.disk = e.key.disk;
    (e.key.dir == Op::kRead ? d.read_bytes : d.write_bytes) += e.value.bytes;
  }
  if (s.diskstats) {
    std::map<DevT, uint64_t> ticks;
    for (const auto& ds : *s.diskstats) ticks[ds.dev] = ds.io_ticks_ms;
    for (auto& [disk, d] : devs) {
      auto it = ticks.find(disk);
      if (it == ticks.end()) continue;
      auto prev = prev_ticks_.find(disk);
      // Before the first sample the disk was not watched: no comparison yet.
      if (prev != prev_ticks_.end() && it->second >= prev->second)
        d.io_ticks_ms = it->second - prev->second;
    }
    prev_ticks_ = std::move(ticks);
  }
  for (auto& [disk, d] : devs) {
    d.name = lk_.device_name ? lk_.device_name(disk) : dev_to_string(disk);
    d.util_pct = percent_of(d.busy_ns, snap.interval_ns);
    d.util_clamped = raw_percent_of(d.busy_ns, snap.interval_ns) > 100.0;
    snap.devices.push_back(d);
  }
  return snap;
}

}  // namespace blkrr::live
