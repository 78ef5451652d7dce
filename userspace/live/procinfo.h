// What top reads from /proc and /sys besides the BPF counters: UID and PPID
// of processes (cached, so that processes which exited during the interval
// keep the values seen while they lived), the load average, /proc/diskstats
// and cgroup v2 paths by cgroup id.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/request.h"
#include "core/result.h"

namespace blkrr::live {

struct ProcInfo {
  uint32_t uid = 0;
  uint32_t ppid = 0;
};

// Reads Uid (real) and PPid from PROCFS/PID/status. Error when the process
// is gone or the file is malformed.
Result<ProcInfo> read_proc_info(uint32_t pid, const std::string& procfs = "/proc");

// Caches read_proc_info() by pid. Entries not looked up for `max_age`
// refreshes are forgotten (pid reuse, memory).
class ProcCache {
 public:
  explicit ProcCache(std::string procfs = "/proc", unsigned max_age = 60)
      : procfs_(std::move(procfs)), max_age_(max_age) {}
  // Remember the process now if it is not known yet (called for every pid
  // seen, as early as possible, so that short-lived processes are caught).
  void touch(uint32_t pid);
  // Known values, or nullopt when the process exited before it was seen.
  std::optional<ProcInfo> get(uint32_t pid);
  // Ends one refresh: ages entries and forgets old ones.
  void next_generation();
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::optional<ProcInfo> info;
    uint64_t last_used = 0;
  };
  std::string procfs_;
  unsigned max_age_;
  uint64_t gen_ = 0;
  std::map<uint32_t, Entry> entries_;
};

// /proc/loadavg: the three load averages.
Result<std::array<double, 3>> read_loadavg(const std::string& procfs = "/proc");

// One line of /proc/diskstats (only the fields top uses).
struct DiskStat {
  DevT dev = 0;
  std::string name;
  uint64_t reads = 0, read_sectors = 0, read_ms = 0;
  uint64_t writes = 0, write_sectors = 0, write_ms = 0;
  uint64_t in_flight = 0;
  uint64_t io_ticks_ms = 0;  // time with requests in flight, jiffy granularity
  uint64_t time_in_queue_ms = 0;
};
// Parses the whole file; a malformed line is an error with its line number.
Result<std::vector<DiskStat>> parse_diskstats(const std::string& text);
Result<std::vector<DiskStat>> read_diskstats(const std::string& procfs = "/proc");

// cgroup v2 id (inode of the cgroup directory) -> path relative to the
// cgroup mount ("/system.slice/foo.service"), by walking the hierarchy.
class CgroupNamer {
 public:
  explicit CgroupNamer(std::string root = "/sys/fs/cgroup") : root_(std::move(root)) {}
  // The path, or the decimal id when not found (cgroup removed). The tree is
  // walked again on a miss, at most once per `rescan()` call.
  std::string name(uint64_t id);
  void rescan() { walked_ = false; }

 private:
  void walk();
  std::string root_;
  std::map<uint64_t, std::string> paths_;
  bool walked_ = false;
};

}  // namespace blkrr::live
