#include "live/screen.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <map>
#include <tuple>

#include "core/units.h"

namespace blkrr::live {

namespace {

constexpr size_t kLayoutWidth = 80;  // when not a terminal
constexpr size_t kPidWidth = 7;

// The numeric columns, right-aligned; `marks` the sort keys that mark them.
struct Column {
  const char* title;
  size_t width;
  SortKey key, also;
};
constexpr Column kColumns[] = {
    {"READ/s", 8, SortKey::kRead, SortKey::kBytes},
    {"WRITE/s", 8, SortKey::kWrite, SortKey::kBytes},
    {"IOPS", 6, SortKey::kIo, SortKey::kIo},
    {"AVGLAT", 7, SortKey::kLatency, SortKey::kLatency},
    {"DISKTIME", 9, SortKey::kTime, SortKey::kTime},
    {"%I/O", 6, SortKey::kTime, SortKey::kTime},
};

size_t numeric_width() {
  size_t w = 0;
  for (const auto& c : kColumns) w += 1 + c.width;
  return w;
}

// Cut to `width` characters (0: no limit).
std::string cut(std::string line, size_t width) {
  if (width && line.size() > width) line.resize(width);
  return line;
}

// Left-aligned in `w` columns; a longer text keeps its tail ("..ice/x.scope").
std::string fit_left(const std::string& s, size_t w) {
  if (s.size() <= w) return s + std::string(w - s.size(), ' ');
  if (w <= 2) return s.substr(0, w);
  return ".." + s.substr(s.size() - (w - 2));
}

struct Layout {
  size_t name = 14, device = 7;
};

// 80 columns: COMM 14, DEVICE 7. A wider terminal widens them as far as
// the names need (a cgroup path up to 40); a narrower one shrinks them
// (down to 6 and 4) before the line is cut.
Layout layout(const Snapshot& s, const ScreenOptions& opt) {
  size_t want_name = 4, want_dev = 6;
  for (const auto& r : s.rows) {
    want_name = std::max(want_name, r.comm.size());
    want_dev = std::max(want_dev, r.device.size());
  }
  want_name = std::min<size_t>(want_name, s.by == GroupBy::kCgroup ? 40 : 15);
  want_dev = std::min<size_t>(want_dev, 12);
  size_t width = opt.width ? opt.width : kLayoutWidth;
  size_t fixed = kPidWidth + 2 + numeric_width();
  Layout l;
  size_t avail = width > fixed + 10 ? width - fixed : 10;
  l.device = std::min<size_t>(7, avail - 6);
  l.name = std::min(avail - l.device, std::max<size_t>(want_name, 14));
  if (l.name < 6) l.name = 6;
  if (avail > l.name + l.device && want_dev > l.device)
    l.device = std::min(want_dev, avail - l.name);
  return l;
}

std::string rate(uint64_t bytes, uint64_t interval_ns) {
  double secs = interval_ns ? static_cast<double>(interval_ns) / 1e9 : 1.0;
  return fmt_bytes(static_cast<double>(bytes) / secs);
}

std::string numbers(const ScreenRow& r, uint64_t interval_ns) {
  std::string lat =
      r.requests
          ? fmt_duration_ns(static_cast<double>(r.latency_ns) / static_cast<double>(r.requests))
          : "-";
  return strfmt(" %8s %8s %6s %7s %9s %6.1f", rate(r.read_bytes, interval_ns).c_str(),
                rate(r.write_bytes, interval_ns).c_str(),
                iops_text(r.requests, interval_ns).c_str(), lat.c_str(),
                fmt_duration_ns(static_cast<double>(r.disk_time_ns)).c_str(),
                percent_of(r.disk_time_ns, interval_ns));
}

uint64_t row_sort_value(const ScreenRow& r, SortKey key) {
  AggValue v;
  v.requests = r.requests;
  v.latency_ns = r.latency_ns;
  v.disk_time_ns = r.disk_time_ns;
  switch (key) {
    case SortKey::kRead:
      return r.read_bytes;
    case SortKey::kWrite:
      return r.write_bytes;
    case SortKey::kBytes:
      return r.read_bytes + r.write_bytes;
    default:
      return sort_value(v, Op::kRead, key);
  }
}

// Word-wraps `text` at `width` (0: no limit); continuation lines are
// indented by two spaces.
std::string wrap(const std::string& text, size_t width) {
  if (!width || text.size() <= width) return text + "\n";
  std::string out, line;
  size_t i = 0;
  while (i < text.size()) {
    size_t sp = text.find(' ', i);
    std::string word = text.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
    i = sp == std::string::npos ? text.size() : sp + 1;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += cut(line, width) + "\n";
      line = "  ";
    }
    if (!line.empty() && line != "  ") line += ' ';
    line += word;
  }
  return out + cut(line, width) + "\n";
}

}  // namespace

std::string bytes_per_second(uint64_t bytes, uint64_t interval_ns) {
  return rate(bytes, interval_ns) + "/s";
}

std::string iops_text(uint64_t requests, uint64_t interval_ns) {
  double secs = interval_ns ? static_cast<double>(interval_ns) / 1e9 : 1.0;
  double v = static_cast<double>(requests) / secs;
  if (v >= 999'999.5) return strfmt("%.2fM", v / 1e6);
  if (v >= 10 || requests == 0) return strfmt("%.0f", v);
  return strfmt("%.1f", v);
}

std::vector<ScreenRow> screen_rows(const Snapshot& s, SortKey key) {
  using Key = std::tuple<uint32_t, std::string, uint64_t, DevT>;
  std::map<Key, ScreenRow> merged;
  std::vector<Key> order;  // first appearance, for equal values
  for (const auto& r : s.rows) {
    Key k{r.pid, r.comm, r.cgroup_id, r.dev};
    auto [it, inserted] = merged.try_emplace(k);
    ScreenRow& m = it->second;
    if (inserted) {
      order.push_back(k);
      m.pid = r.pid;
      m.comm = r.comm;
      m.device = r.device;
      m.dev = r.dev;
    }
    (r.dir == Op::kRead ? m.read_bytes : m.write_bytes) += r.v.bytes;
    m.requests += r.v.requests;
    m.latency_ns += r.v.latency_ns;
    m.disk_time_ns += r.v.disk_time_ns;
  }
  std::vector<ScreenRow> out;
  out.reserve(order.size());
  for (const auto& k : order) out.push_back(std::move(merged[k]));
  std::stable_sort(out.begin(), out.end(), [key](const ScreenRow& a, const ScreenRow& b) {
    uint64_t va = row_sort_value(a, key), vb = row_sort_value(b, key);
    if (va != vb) return va > vb;
    return a.disk_time_ns > b.disk_time_ns;
  });
  return out;
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
  // Items with the separator before them; a line breaks between items.
  std::vector<std::pair<std::string, std::string>> items = {{"", when}};
  if (s.loadavg)
    items.emplace_back(
        ",  ", strfmt("load: %.2f %.2f %.2f", (*s.loadavg)[0], (*s.loadavg)[1], (*s.loadavg)[2]));
  items.emplace_back(",  ", "read: " + bytes_per_second(s.read.bytes, s.interval_ns));
  items.emplace_back(",  ", "write: " + bytes_per_second(s.write.bytes, s.interval_ns));
  for (size_t i = 0; i < s.devices.size(); ++i)
    items.emplace_back(
        i ? " " : ",  ",
        strfmt("%s%s %.1f%%", i ? "" : "util: ", s.devices[i].name.c_str(), s.devices[i].util_pct));
  if (!s.lost.empty()) {
    uint64_t n = 0;
    for (const auto& [name, v] : s.lost) n += v;
    items.emplace_back(",  ", strfmt("LOST: %" PRIu64, n));
  }
  size_t width = opt.width ? opt.width : kLayoutWidth;
  std::string out, line;
  for (const auto& [sep, text] : items) {
    if (!line.empty() && line.size() + sep.size() + text.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : sep) + text;
  }
  return out + cut(line, opt.width) + "\n";
}

std::string render_loss_notes(const Snapshot& s, const ScreenOptions& opt) {
  std::vector<std::string> devices;
  for (const auto& d : s.devices) devices.push_back(d.name);
  std::string out;
  auto note = [&](const std::string& name, uint64_t n) {
    out += wrap("LOST " + loss_sentence(name, n, devices), opt.width ? opt.width : kLayoutWidth);
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
  std::string t = strfmt("%*s ", static_cast<int>(kPidWidth), "PID");
  t += fit_left(s.by == GroupBy::kCgroup ? "CGROUP" : "COMM", l.name) + " ";
  t += fit_left("DEVICE", l.device);
  for (const auto& c : kColumns) {
    std::string title = c.title;
    if (opt.sort == c.key || opt.sort == c.also) title += '>';
    t += strfmt(" %*s", static_cast<int>(c.width), title.c_str());
  }
  return cut(std::move(t), opt.width);
}

std::string render_row(const ScreenRow& r, const Snapshot& s, const ScreenOptions& opt) {
  Layout l = layout(s, opt);
  std::string line = s.by == GroupBy::kPid ? strfmt("%*u ", static_cast<int>(kPidWidth), r.pid)
                                           : strfmt("%*s ", static_cast<int>(kPidWidth), "-");
  line += fit_left(r.comm, l.name) + " ";
  line += fit_left(r.device, l.device);
  line += numbers(r, s.interval_ns);
  return cut(std::move(line), opt.width);
}

std::string render_screen(const Snapshot& s, const ScreenOptions& opt) {
  std::string out;
  if (opt.clear) out += "\033[H\033[2J";
  std::string top = render_header(s, opt) + render_loss_notes(s, opt) + "\n" +
                    render_column_titles(s, opt) + "\n";
  out += top;
  auto rows = screen_rows(s, opt.sort);
  size_t n = rows.size();
  if (opt.max_rows) n = std::min(n, opt.max_rows);
  if (opt.height) {  // the rows that fit below, the last line left for the cursor
    size_t used = static_cast<size_t>(std::count(top.begin(), top.end(), '\n')) + 1;
    n = std::min(n, opt.height > used ? opt.height - used : 0);
  }
  for (size_t i = 0; i < n; ++i) out += render_row(rows[i], s, opt) + "\n";
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
