#include "live/top_model.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace blkrr::live {

Result<GroupBy> parse_group_by(std::string_view s) {
  if (s == "pid") return GroupBy::kPid;
  if (s == "comm") return GroupBy::kComm;
  if (s == "cgroup") return GroupBy::kCgroup;
  return Error(ErrorKind::kUsage,
               "unknown grouping '" + std::string(s) + "' (use pid, comm or cgroup)");
}

Result<SortKey> parse_sort_key(std::string_view s) {
  if (s == "read") return SortKey::kRead;
  if (s == "write") return SortKey::kWrite;
  if (s == "bytes") return SortKey::kBytes;
  if (s == "io") return SortKey::kIo;
  if (s == "lat") return SortKey::kLatency;
  if (s == "time") return SortKey::kTime;
  return Error(ErrorKind::kUsage,
               "unknown sort key '" + std::string(s) +
                   "' (use read, write, bytes (read + write), io (IOPS), lat (AVGLAT) or time "
                   "(DISKTIME and %I/O))");
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
  std::string_view name, meaning, effect;
};
constexpr std::string_view kNotReported = "requests whose completion the kernel did not report";
constexpr std::string_view kRowsMiss =
    "the rows miss their I/Os, bytes, latency and disk time (the disk's %util has them)";
constexpr Loss kLoss[] = {
    {"ringbuf_reserve_failed", "events dropped: blkrr read them too slowly",
     "those requests are missing from the lines and traces (not from top's rows)"},
    {"inflight_map_full", "requests not followed: too many were in flight at once",
     "every figure misses them"},
    {"agg_map_full", "requests not counted: too many processes and devices at once",
     "the rows miss them (the disk's %util has them)"},
    {"devstate_map_full", "disks not followed: too many disks",
     "those disks have no disk time and no %util"},
    {"completion_not_seen_reissued", kNotReported, kRowsMiss},
    {"completion_not_seen_checked", kNotReported, kRowsMiss},
    {"completion_not_seen_idle", kNotReported, kRowsMiss},
    {"inflight_swept", "requests in flight for too long, given up", kRowsMiss},
    {"prog_recursion_misses", "events the kernel did not run blkrr's program for",
     "some requests may be missing from every figure"},
    {"fault_skipped_completions", "completions skipped on purpose (fault injection test)",
     kRowsMiss},
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
  return "events not counted";
}

std::string_view loss_effect(std::string_view name) {
  for (const auto& l : kLoss)
    if (name == l.name) return l.effect;
  return "some figures miss them (docs/top.md)";
}

std::string loss_sentence(std::string_view name, uint64_t n,
                          const std::vector<std::string>& devices) {
  std::string s = std::to_string(n);
  for (size_t i = 0; i < devices.size(); ++i) s += (i ? ", " : " on ") + devices[i];
  return s + ": " + std::string(loss_meaning(name)) + "; " + std::string(loss_effect(name));
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
    // A kernel thread's I/O below a stacked volume (writeback, md's own
    // I/O, a driver thread whose submitter is unknown): said so.
    if (k.via & kRecKernelViaStack)
      comm +=
          " [kernel via " + (lk.device_name ? lk.device_name(k.dev) : dev_to_string(k.dev)) + "]";
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

uint64_t sort_value(const AggValue& v, Op dir, SortKey key) {
  switch (key) {
    case SortKey::kIo:
      return v.requests;
    case SortKey::kBytes:
      return v.bytes;
    case SortKey::kRead:
      return dir == Op::kRead ? v.bytes : 0;
    case SortKey::kWrite:
      return dir == Op::kRead ? 0 : v.bytes;
    case SortKey::kLatency:
      return v.requests ? v.latency_ns / v.requests : 0;
    case SortKey::kTime:
      return v.disk_time_ns;
  }
  return v.bytes;
}

void sort_rows(std::vector<Row>& rows, SortKey key) {
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    uint64_t pa = sort_value(a.v, a.dir, key), pb = sort_value(b.v, b.dir, key);
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
