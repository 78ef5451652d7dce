#include "live/screen.h"
#include "core/units.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>

namespace blkrr::live {

namespace {

constexpr size_t kCommWidth = 16;
constexpr size_t kDeviceWidth = 10;

// Cut to `width` characters (0: no limit).
std::string cut(std::string line, size_t width) {
  if (width && line.size() > width) line.resize(width);
  return line;
}

// Left-aligned in `w` columns; a longer text keeps its tail ("..ice/x.scope").
std::string fit_left(const std::string& s, size_t w) {
  if (s.size() <= w) return s + std::string(w - s.size(), ' ');
  return ".." + s.substr(s.size() - (w - 2));
}

struct Layout {
  size_t name = kCommWidth, device = kDeviceWidth;
};

// Column widths; on a narrow terminal COMM and DEVICE shrink (down to 6
// characters) before the line is cut, so that the value column stays.
Layout layout(const Snapshot& s, const ScreenOptions& opt) {
  Layout l;
  if (s.by == GroupBy::kCgroup) {
    for (const auto& r : s.rows) l.name = std::max(l.name, r.comm.size() + 1);
    l.name = std::min<size_t>(l.name, 40);
  }
  constexpr size_t kFixed = 22 + 2 + 24;  // UID PID PPID, separators, MAJ MIN D value
  if (opt.width && kFixed + l.name + l.device > opt.width) {
    size_t excess = kFixed + l.name + l.device - opt.width;
    size_t cut_name = std::min(excess, l.name - 6);
    l.name -= cut_name;
    excess -= cut_name;
    l.device -= std::min(excess, l.device - 6);
  }
  return l;
}

}  // namespace

std::string bytes_per_second(uint64_t bytes, uint64_t interval_ns) {
  double secs = interval_ns ? static_cast<double>(interval_ns) / 1e9 : 1.0;
  return fmt_bytes(static_cast<double>(bytes) / secs) + "/s";
}

std::string_view value_title(ValueMode mode) {
  switch (mode) {
    case ValueMode::kBytes:
      return "BYTES/s";
    case ValueMode::kDiskTime:
      return "DISKTIME";
    case ValueMode::kPercent:
      return "%I/O";
  }
  return "BYTES";
}

std::string value_text(const Row& r, uint64_t interval_ns, ValueMode mode) {
  switch (mode) {
    case ValueMode::kBytes:
      return bytes_per_second(r.v.bytes, interval_ns);
    case ValueMode::kDiskTime:
      return fmt_duration_ns(static_cast<double>(r.v.disk_time_ns));
    case ValueMode::kPercent:
      return strfmt("%.1f", percent_of(r.v.disk_time_ns, interval_ns));
  }
  return "";
}

std::string render_header(const Snapshot& s, const ScreenOptions& opt) {
  time_t secs = static_cast<time_t>(s.wall_ns / 1000000000ull);
  struct tm tm {};
  if (opt.utc)
    gmtime_r(&secs, &tm);
  else
    localtime_r(&secs, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  std::string h = when;
  if (s.loadavg)
    h += strfmt(",  load: %.2f %.2f %.2f", (*s.loadavg)[0], (*s.loadavg)[1], (*s.loadavg)[2]);
  h += ",  read: " + bytes_per_second(s.read.bytes, s.interval_ns) +
       ",  write: " + bytes_per_second(s.write.bytes, s.interval_ns);
  if (!s.devices.empty()) {
    h += ",  util:";
    for (const auto& d : s.devices) h += strfmt(" %s %.1f%%", d.name.c_str(), d.util_pct);
  }
  if (!s.lost.empty()) {
    uint64_t n = 0;
    for (const auto& [name, v] : s.lost) n += v;
    h += strfmt(",  LOST: %" PRIu64, n);
  }
  return cut(std::move(h), opt.width);
}

std::string render_loss_notes(const Snapshot& s, const ScreenOptions& opt) {
  std::string out;
  auto note = [&](const std::string& name, uint64_t n) {
    out += cut(strfmt("LOST %s (%" PRIu64 "): %s", name.c_str(), n,
                      std::string(loss_meaning(name)).c_str()),
               opt.width) +
           "\n";
  };
  for (const auto& [name, n] : s.lost) {
    if (opt.explained && !opt.explained->insert(name).second && !opt.clear) continue;
    note(name, n);
  }
  if (opt.clear && opt.explained)  // a redrawn screen keeps the legend
    for (const auto& name : *opt.explained)
      if (!s.lost.count(name)) note(name, 0);
  return out;
}

std::string render_column_titles(const Snapshot& s, const ScreenOptions& opt) {
  Layout l = layout(s, opt);
  std::string t = strfmt("%5s %7s %7s ", "UID", "PID", "PPID");
  t += fit_left(s.by == GroupBy::kCgroup ? "CGROUP" : "COMM", l.name) + " ";
  t += fit_left("DEVICE", l.device) + " ";
  t += strfmt("%4s %4s %s %12s", "MAJ", "MIN", "D", std::string(value_title(opt.mode)).c_str());
  return cut(std::move(t), opt.width);
}

std::string render_row(const Row& r, const Snapshot& s, const ScreenOptions& opt) {
  std::string line;
  if (s.by == GroupBy::kPid && r.proc)
    line = strfmt("%5u %7u %7u ", r.proc->uid, r.pid, r.proc->ppid);
  else if (s.by == GroupBy::kPid)
    line = strfmt("%5s %7u %7s ", "-", r.pid, "-");  // exited before it was seen
  else
    line = strfmt("%5s %7s %7s ", "-", "-", "-");
  Layout l = layout(s, opt);
  line += fit_left(r.comm, l.name) + " ";
  line += fit_left(r.device, l.device) + " ";
  line += strfmt("%4u %4u %c %12s", dev_major(r.dev), dev_minor(r.dev), op_letter(r.dir),
                 value_text(r, s.interval_ns, opt.mode).c_str());
  return cut(std::move(line), opt.width);
}

std::string render_screen(const Snapshot& s, const ScreenOptions& opt) {
  std::string out;
  if (opt.clear) out += "\033[H\033[2J";
  out += render_header(s, opt) + "\n";
  out += render_loss_notes(s, opt) + "\n";
  out += render_column_titles(s, opt) + "\n";
  size_t n = s.rows.size();
  if (opt.max_rows) n = std::min(n, opt.max_rows);
  for (size_t i = 0; i < n; ++i) out += render_row(s.rows[i], s, opt) + "\n";
  if (!opt.clear) out += "\n";  // rolling output: a blank line between intervals
  return out;
}

size_t terminal_width(int fd, size_t* rows) {
  if (!isatty(fd)) return 0;
  struct winsize ws {};
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) {
    if (rows) *rows = 24;
    return 80;
  }
  if (rows) *rows = ws.ws_row;
  return ws.ws_col;
}

}  // namespace blkrr::live
