// The screen model of `blkrr top`: one interval's per-process (or per-comm,
// per-cgroup) rows and per-device totals, built from counter deltas. Pure:
// everything read from /proc and sysfs comes in through Lookups.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "live/delta.h"
#include "live/procinfo.h"

namespace blkrr::live {

enum class GroupBy { kPid, kComm, kCgroup };
// What top sorts by; each is a column of the screen (bytes: READ/s plus
// WRITE/s, both marked).
enum class SortKey { kIo, kBytes, kTime, kRead, kWrite, kLatency };

Result<GroupBy> parse_group_by(std::string_view s);  // pid | comm | cgroup
// read | write | bytes | io | lat | time
Result<SortKey> parse_sort_key(std::string_view s);
std::string_view group_by_name(GroupBy g);

struct Row {
  uint32_t pid = 0;  // 0 unless grouped by pid
  // uid/ppid from /proc while the process lives, else as the kernel saw them
  // when its first request was created; unknown if neither.
  std::optional<ProcInfo> proc;
  std::string comm;  // task name; with --by cgroup the cgroup path
  uint64_t cgroup_id = 0;
  DevT dev = 0;  // partition the requests fell in, or the whole disk
  std::string device;
  Op dir = Op::kRead;
  uint32_t tasks = 0;  // distinct {pid, tid} merged into the row
  AggValue v;
};

struct DeviceRow {
  DevT disk = 0;
  std::string name;
  uint64_t busy_ns = 0;  // disk time charged in the interval
  uint64_t requests = 0;
  uint64_t pending = 0;
  uint64_t read_bytes = 0, write_bytes = 0;
  std::optional<uint64_t> io_ticks_ms;  // /proc/diskstats, for comparison
  double util_pct = 0;                  // busy_ns / interval, at most 100
  bool util_clamped = false;            // busy_ns was more than the interval
};

struct Snapshot {
  uint64_t seq = 0;          // 1 for the first interval
  uint64_t wall_ns = 0;      // CLOCK_REALTIME at the end of the interval
  uint64_t interval_ns = 0;  // measured length of the interval
  std::optional<std::array<double, 3>> loadavg;
  GroupBy by = GroupBy::kPid;
  std::vector<Row> rows;  // sorted
  std::vector<DeviceRow> devices;
  AggValue read, write, total;   // over all rows (write = every non-read op)
  Counters counters;             // every capture counter that grew in the interval
  Counters lost;                 // those of them that mean lost data (is_loss_counter)
  std::vector<AggEntry> deltas;  // raw per-task deltas (for exporters)
  // Entries of the kernel's aggregation map top still tracks after this
  // interval, and those of exited tasks it removed (their final values
  // counted in this interval).
  uint64_t tracked_keys = 0;
  uint64_t released_keys = 0;
  // What the capture runs with (Capture::features()), in every JSON object.
  std::map<std::string, std::string> capture_features;
};

// Everything the model asks the system about.
struct Lookups {
  std::function<std::string(DevT)> device_name;      // "sda2"
  std::function<std::string(uint64_t)> cgroup_name;  // "/system.slice/x"
  std::function<std::optional<ProcInfo>(uint32_t)> proc;
};

// Interval inputs: cumulative counters as read from the capture.
struct Sample {
  uint64_t mono_ns = 0;
  uint64_t wall_ns = 0;
  std::vector<AggEntry> agg;
  // Keys of `agg` whose entries were removed from the kernel map after their
  // final values were read (exited tasks, see live/exited.h).
  std::vector<AggKey> released;
  std::vector<DeviceBusy> busy;
  Counters counters;
  std::optional<std::vector<DiskStat>> diskstats;
  std::optional<std::array<double, 3>> loadavg;
};

class TopModel {
 public:
  TopModel(GroupBy by, SortKey sort, Lookups lookups)
      : by_(by), sort_(sort), lk_(std::move(lookups)) {}
  // When the counters started (the capture attached): the first interval
  // runs from here.
  // `diskstats` read at the same time is the base of the io_ticks deltas.
  void set_start(uint64_t start_mono_ns, const std::optional<std::vector<DiskStat>>& diskstats);
  Snapshot update(const Sample& s);

 private:
  GroupBy by_;
  SortKey sort_;
  Lookups lk_;
  AggDelta agg_;
  BusyDelta busy_;
  CounterDelta counters_;
  std::map<DevT, uint64_t> prev_ticks_;
  uint64_t last_mono_ = 0;
  uint64_t seq_ = 0;
};

// Groups raw deltas into rows (not sorted).
std::vector<Row> group_rows(const std::vector<AggEntry>& deltas, GroupBy by, const Lookups& lk);
void sort_rows(std::vector<Row>& rows, SortKey key);
// The value `key` sorts by (larger first): the bytes of a direction count
// for read or write only, latency is the average.
uint64_t sort_value(const AggValue& v, Op dir, SortKey key);
// Capture counters that mean something was not counted (a full map, a
// completion the kernel never delivered, a skipped program), as opposed to
// activity counters (issues, requeues...).
bool is_loss_counter(std::string_view name);
// What a loss counter counts, in plain words ("requests whose completion the
// kernel did not report"), and what that does to top's figures.
std::string_view loss_meaning(std::string_view name);
std::string_view loss_effect(std::string_view name);
// "3 on loop0: <meaning>; <effect>": the count, the devices watched while it
// happened (the counters are not per device; none: left out) and the rest
// in plain words, without the counter's name (which --json keeps).
std::string loss_sentence(std::string_view name, uint64_t n,
                          const std::vector<std::string>& devices);
// Every counter is_loss_counter accepts, in a fixed order.
std::vector<std::string_view> loss_counter_names();
// %I/O of a disk time over an interval, per single disk, at most 100: disk
// time is charged when a busy period's requests complete, so an interval can
// be charged busy time that began in the one before (docs/top.md).
double percent_of(uint64_t disk_time_ns, uint64_t interval_ns);
// The same without the limit.
double raw_percent_of(uint64_t disk_time_ns, uint64_t interval_ns);

}  // namespace blkrr::live
