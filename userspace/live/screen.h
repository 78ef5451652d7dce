// Text rendering of a top Snapshot: a header line (time, load average, disk
// read/write rates, per-device %util) and rows
// `UID PID PPID COMM DEVICE MAJ MIN D <value>`. Lines are cut to the
// terminal width; escape codes only when asked to clear a terminal.
#pragma once

#include <set>
#include <cstddef>
#include <string>

#include "live/model.h"

namespace blkrr::live {

struct ScreenOptions {
  ValueMode mode = ValueMode::kBytes;
  size_t width = 0;     // 0: no limit (not a terminal)
  size_t max_rows = 0;  // 0: every row
  bool clear = false;   // home + clear screen first (a terminal, without -C)
  bool utc = false;     // header time in UTC instead of local time
  // Loss reasons already explained (one line each, the first time they
  // appear; on a cleared screen every reason seen so far stays listed).
  // nullptr: explain every reason every time.
  std::set<std::string>* explained = nullptr;
};

std::string render_screen(const Snapshot& s, const ScreenOptions& opt);
std::string render_header(const Snapshot& s, const ScreenOptions& opt);
// "LOST reason (count): what it means", for reasons not yet explained.
std::string render_loss_notes(const Snapshot& s, const ScreenOptions& opt);
std::string render_column_titles(const Snapshot& s, const ScreenOptions& opt);
std::string render_row(const Row& r, const Snapshot& s, const ScreenOptions& opt);

// The value column for a row: bytes per second in binary units ("1.50 MiB/s",
// as iotop), the disk time of the interval ("850 us", "1.23 ms"), or %I/O.
// Raw integers are in --json only.
std::string value_text(const Row& r, uint64_t interval_ns, ValueMode mode);
std::string_view value_title(ValueMode mode);  // BYTES/s, DISKTIME, %I/O
// "1.50 MiB/s": `bytes` moved in `interval_ns`.
std::string bytes_per_second(uint64_t bytes, uint64_t interval_ns);

// Width of the terminal on fd, 0 when fd is not a terminal. `rows` gets the
// height when not null.
size_t terminal_width(int fd, size_t* rows = nullptr);

}  // namespace blkrr::live
