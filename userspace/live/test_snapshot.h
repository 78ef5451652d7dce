// Shared by the live unit tests: a fixed interval with known numbers.
#pragma once

#include <cstring>

#include "live/top_model.h"

namespace blkrr::live::testing {

inline AggEntry agg(uint32_t pid, uint32_t tid, const char* comm, DevT part, Op dir, uint64_t reqs,
                    uint64_t bytes, uint64_t disk_ns, uint64_t cgroup = 0) {
  AggEntry e;
  e.key.pid = pid;
  e.key.tid = tid;
  e.key.cgroup_id = cgroup;
  e.key.dev = part;
  e.key.disk = make_dev(dev_major(part), dev_minor(part) & ~0xfu);
  e.key.dir = dir;
  std::memcpy(e.key.comm.data(), comm, std::strlen(comm));
  e.value = {reqs, bytes, disk_ns, disk_ns * 3};
  return e;
}

inline Lookups fake_lookups() {
  Lookups lk;
  lk.device_name = [](DevT d) {
    if (d == make_dev(8, 0)) return std::string("sda");
    if (d == make_dev(8, 2)) return std::string("sda2");
    if (d == make_dev(8, 16)) return std::string("sdb");
    return dev_to_string(d);
  };
  lk.cgroup_name = [](uint64_t id) {
    return id == 77 ? std::string("/system.slice/db.service") : std::to_string(id);
  };
  lk.proc = [](uint32_t pid) -> std::optional<ProcInfo> {
    if (pid == 4242) return std::nullopt;  // exited before it was seen
    return ProcInfo{1000, 1};
  };
  return lk;
}

// Two seconds; fio reads 1 MiB on sda2 (1.5 s of disk time), dd writes on
// sdb, a short-lived process (4242) wrote on sda2 and exited.
inline Snapshot two_second_interval(GroupBy by = GroupBy::kPid, SortKey sort = SortKey::kBytes) {
  TopModel m(by, sort, fake_lookups());
  m.set_start(1'000'000'000, std::vector<DiskStat>{{make_dev(8, 0), "sda"}});
  Sample s;
  s.mono_ns = 3'000'000'000;
  s.wall_ns = 1'795'000'000'000'000'000ull;
  s.loadavg = std::array<double, 3>{0.5, 0.25, 0.125};
  s.agg = {agg(100, 100, "fio", make_dev(8, 2), Op::kRead, 256, 1048576, 1'000'000'000, 77),
           agg(100, 101, "fio", make_dev(8, 2), Op::kRead, 128, 524288, 500'000'000, 77),
           agg(200, 200, "dd", make_dev(8, 16), Op::kWrite, 8, 8 << 20, 2'000'000'000, 5),
           agg(4242, 4242, "tar", make_dev(8, 2), Op::kWrite, 1, 4096, 250'000, 77)};
  s.busy = {{make_dev(8, 0), 1'500'250'000, 0, 385}, {make_dev(8, 16), 2'000'000'000, 1, 8}};
  s.counters = {{"issues", 400}, {"ringbuf_reserve_failed", 0}, {"inflight_swept", 3}};
  s.diskstats = std::vector<DiskStat>{{make_dev(8, 0), "sda", 0, 0, 0, 0, 0, 0, 0, 1520}};
  return m.update(s);
}

}  // namespace blkrr::live::testing
