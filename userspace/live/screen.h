// Text rendering of a top Snapshot: header lines (time, load average, disk
// read/write rates, per-device %util, losses), then one line per process
// (or comm, cgroup) and device, reads and writes together:
//   PID COMM DEVICE READ/s WRITE/s IOPS AVGLAT DISKTIME %I/O
// 80 columns hold every column (COMM and DEVICE take what a wider terminal
// gives); the sort column's title ends in '>', as iotop marks it. Header and
// loss notes wrap instead of being cut; rows are cut only on a terminal
// narrower than 80. Escape codes only when asked to clear a terminal.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "live/top_model.h"

namespace blkrr::live {

struct ScreenOptions {
  SortKey sort = SortKey::kTime;  // the column marked with '>'
  size_t width = 0;               // 0: not a terminal, laid out as on 80 columns
  size_t height = 0;              // 0: every row; else the rows that fit
  size_t max_rows = 0;            // 0: every row (that fits)
  bool clear = false;             // home + clear screen first (a terminal, without -C)
  bool utc = false;               // header time in UTC instead of local time
  // Loss reasons already explained (one line each, the first time they
  // appear; on a cleared screen every reason seen so far stays listed).
  // nullptr: explain every reason every time.
  std::set<std::string>* explained = nullptr;
};

// One line of the screen: a row key (pid and comm, comm or cgroup) on one
// device, its reads and writes (and other operations, counted as writes)
// together.
struct ScreenRow {
  uint32_t pid = 0;  // 0 unless grouped by pid
  std::string comm, device;
  DevT dev = 0;
  uint64_t read_bytes = 0, write_bytes = 0, requests = 0, latency_ns = 0, disk_time_ns = 0;
};
// The snapshot's rows merged per key and device, sorted by `key`.
std::vector<ScreenRow> screen_rows(const Snapshot& s, SortKey key);

std::string render_screen(const Snapshot& s, const ScreenOptions& opt);
// Header lines (each ending in '\n'), wrapped at opt.width between items.
std::string render_header(const Snapshot& s, const ScreenOptions& opt);
// "LOST 3 on sda: <what it means for the figures>", for reasons not yet
// explained, wrapped at opt.width.
std::string render_loss_notes(const Snapshot& s, const ScreenOptions& opt);
std::string render_column_titles(const Snapshot& s, const ScreenOptions& opt);
std::string render_row(const ScreenRow& r, const Snapshot& s, const ScreenOptions& opt);

// "1.50 MiB/s": `bytes` moved in `interval_ns`.
std::string bytes_per_second(uint64_t bytes, uint64_t interval_ns);
// Requests per second: "0.5", "12", "1234", "1.23M".
std::string iops_text(uint64_t requests, uint64_t interval_ns);

// Width of the terminal on fd, 0 when fd is not a terminal. `rows` gets the
// height when not null.
size_t terminal_width(int fd, size_t* rows = nullptr);

}  // namespace blkrr::live
