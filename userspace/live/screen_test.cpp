#include "live/screen.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "core/units.h"
#include "live/test_snapshot.h"

namespace blkrr::live {
namespace {

using testing::two_second_interval;

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// What iotop and biotop users read at a glance, in 80 columns: reads and
// writes per second, IOPS, average latency, disk time and %I/O, one line per
// process and device (fio's two threads' reads are one line).
TEST(Screen, EveryColumnIn80Columns) {
  ScreenOptions opt;
  opt.utc = true;
  auto l = lines(render_screen(two_second_interval(), opt));
  ASSERT_EQ(l.size(), 10u);
  EXPECT_EQ(l[0],
            "2026-11-18 11:06:40,  load: 0.50 0.25 0.12,  read: 768 KiB/s,  write: 4.00 MiB/s");
  EXPECT_EQ(l[1], "util: sda 75.0% sdb 100.0%,  LOST: 3");
  EXPECT_EQ(l[2], "LOST 3 on sda, sdb: requests in flight for too long, given up; the rows miss");
  EXPECT_EQ(l[3], "  their I/Os, bytes, latency and disk time (the disk's %util has them)");
  EXPECT_EQ(l[4], "");
  EXPECT_EQ(l[5],
            "    PID COMM           DEVICE    READ/s  WRITE/s   IOPS  AVGLAT DISKTIME>  %I/O>");
  EXPECT_EQ(l[6],
            "    200 dd             sdb          0 B 4.00 MiB    4.0  750 ms    2.00 s  100.0");
  EXPECT_EQ(l[7],
            "    100 fio            sda2     768 KiB      0 B    192 11.7 ms    1.50 s   75.0");
  EXPECT_EQ(l[8],
            "   4242 tar            sda2         0 B 2.00 KiB    0.5  750 us    250 us    0.0");
  EXPECT_EQ(l[9], "");  // rolling output: blank line between intervals
  for (const auto& line : l) EXPECT_LE(line.size(), 80u) << line;
}

// Every -s key sorts by a column on the screen, and that column is marked.
TEST(Screen, EverySortKeyMarksItsColumn) {
  Snapshot s = two_second_interval();
  struct Case {
    const char* key;
    const char* marked;
    uint32_t first;
  };
  for (const Case& c : {Case{"read", "READ/s>", 100}, Case{"write", "WRITE/s>", 200},
                        Case{"bytes", "WRITE/s>", 200}, Case{"io", "IOPS>", 100},
                        Case{"lat", "AVGLAT>", 200}, Case{"time", "DISKTIME>", 200}}) {
    auto key = parse_sort_key(c.key);
    ASSERT_TRUE(key.ok()) << c.key;
    ScreenOptions opt;
    opt.sort = *key;
    std::string titles = render_column_titles(s, opt);
    EXPECT_NE(titles.find(c.marked), std::string::npos) << c.key << ": " << titles;
    EXPECT_EQ(screen_rows(s, *key)[0].pid, c.first) << c.key;
  }
  ScreenOptions opt;
  opt.sort = SortKey::kBytes;  // read + write: both marked
  EXPECT_NE(render_column_titles(s, opt).find("READ/s> WRITE/s>"), std::string::npos);
  opt.sort = SortKey::kIo;
  std::string t = render_column_titles(s, opt);
  EXPECT_EQ(t.find('>'), t.rfind('>')) << "one column marked: " << t;
}

// The header wraps between items at the width: nothing of it is cut, also
// with many disks on 80 columns.
TEST(Screen, HeaderIsNeverCut) {
  Snapshot s = two_second_interval();
  for (int i = 0; i < 12; ++i) {
    DeviceRow d;
    d.disk = make_dev(259, i);
    d.name = strfmt("nvme%dn1", i);
    s.devices.push_back(d);
  }
  ScreenOptions opt;
  opt.width = 80;
  std::string h = render_header(s, opt);
  for (const auto& l : lines(h)) EXPECT_LE(l.size(), 80u) << l;
  for (int i = 0; i < 12; ++i)
    EXPECT_NE(h.find(strfmt("nvme%dn1 0.0%%", i)), std::string::npos) << i << "\n" << h;
  EXPECT_NE(h.find("LOST: 3\n"), std::string::npos) << h;
}

// On a 24-line terminal the rows that do not fit are left out, never the
// header: the screen does not scroll.
TEST(Screen, RowsFitTheTerminalHeight) {
  Snapshot s = two_second_interval();
  for (uint32_t p = 1; p <= 40; ++p) {
    Row r = s.rows[0];
    r.pid = 1000 + p;
    s.rows.push_back(r);
  }
  ScreenOptions opt;
  opt.width = 80;
  opt.height = 24;
  opt.clear = true;
  std::string out = render_screen(s, opt);
  ASSERT_EQ(out.rfind("\033[H\033[2J", 0), 0u);
  auto l = lines(out.substr(7));
  EXPECT_EQ(l.size(), 23u);  // the last line for the cursor
  EXPECT_NE(l[0].find("load: "), std::string::npos);
  for (const auto& line : l) EXPECT_LE(line.size(), 80u) << line;
}

// A wider terminal gives long names room; a narrower one shrinks COMM and
// DEVICE before it cuts.
TEST(Screen, WidthAndClearing) {
  Snapshot s = two_second_interval(GroupBy::kCgroup);
  ScreenOptions opt;
  opt.width = 120;
  std::string t = render_column_titles(s, opt);
  EXPECT_EQ(t.rfind("    PID CGROUP                   DEVICE ", 0), 0u) << t;
  auto rows = screen_rows(s, opt.sort);
  EXPECT_EQ(render_row(rows[1], s, opt).rfind("      - /system.slice/db.service sda2 ", 0), 0u)
      << render_row(rows[1], s, opt);
  opt.width = 60;
  for (const auto& line : lines(render_screen(s, opt))) EXPECT_LE(line.size(), 60u) << line;
  EXPECT_EQ(render_screen(s, opt).find('\033'), std::string::npos);  // no escape codes
  opt.clear = true;
  EXPECT_EQ(render_screen(s, opt).rfind("\033[H\033[2J", 0), 0u);
}

TEST(Screen, NotATerminal) {
  // The test's stdin is not a terminal when run by ctest.
  if (isatty(0)) GTEST_SKIP() << "stdin is a terminal";
  EXPECT_EQ(terminal_width(0), 0u);
}

// The loss note speaks plainly and names the devices; the counter's name
// is for --json.
TEST(Screen, EachLossReasonIsExplainedOnceInPlainWords) {
  Snapshot s = two_second_interval();
  s.lost = {{"completion_not_seen_reissued", 5}};
  std::set<std::string> explained;
  ScreenOptions opt;
  opt.explained = &explained;
  std::string first = render_screen(s, opt), second = render_screen(s, opt);
  EXPECT_NE(first.find("LOST 5 on sda, sdb: requests whose completion the kernel did not "
                       "report; the\n  rows miss their I/Os, bytes, latency"),
            std::string::npos)
      << first;
  EXPECT_EQ(first.find("completion_not_seen"), std::string::npos) << first;
  EXPECT_EQ(second.find("LOST 5 on"), std::string::npos) << second;
  EXPECT_NE(second.find(",  LOST: 5\n"), std::string::npos) << "the count stays in the header";
  // A redrawn screen keeps the legend of every reason seen, with this
  // interval's count.
  opt.clear = true;
  Snapshot quiet = s;
  quiet.lost.clear();
  std::string redrawn = render_screen(quiet, opt);
  EXPECT_NE(redrawn.find("LOST 0 on sda, sdb: requests whose completion"), std::string::npos)
      << redrawn;
}

TEST(Screen, RatesAndIops) {
  EXPECT_EQ(bytes_per_second(3 << 20, 2'000'000'000), "1.50 MiB/s");
  EXPECT_EQ(iops_text(0, 1'000'000'000), "0");
  EXPECT_EQ(iops_text(1, 2'000'000'000), "0.5");
  EXPECT_EQ(iops_text(123456, 1'000'000'000), "123456");
  EXPECT_EQ(iops_text(2'500'000, 1'000'000'000), "2.50M");
}

}  // namespace
}  // namespace blkrr::live
