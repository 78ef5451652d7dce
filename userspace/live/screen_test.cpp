#include "live/screen.h"

#include <gtest/gtest.h>

#include <set>

#include <sstream>

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

TEST(Screen, BytesColumnsAndRows) {
  ScreenOptions opt;
  opt.utc = true;
  auto l = lines(render_screen(two_second_interval(), opt));
  ASSERT_EQ(l.size(), 8u);
  EXPECT_EQ(l[0],
            "2026-11-18 11:06:40,  load: 0.50 0.25 0.12,  read: 768 KiB/s,  write: 4.00 MiB/s,  "
            "util: sda 75.0% sdb 100.0%,  LOST: 3");
  EXPECT_EQ(l[1],
            "LOST inflight_swept (3): requests in flight for too long, dropped by the sweeper");
  EXPECT_EQ(l[2], "");
  // Rates per second in binary units, as iotop shows them (raw bytes: --json).
  EXPECT_EQ(l[3], "  UID     PID    PPID COMM             DEVICE      MAJ  MIN D      BYTES/s");
  EXPECT_EQ(l[4], " 1000     200       1 dd               sdb           8   16 W   4.00 MiB/s");
  EXPECT_EQ(l[5], " 1000     100       1 fio              sda2          8    2 R    768 KiB/s");
  EXPECT_EQ(l[6], "    -    4242       - tar              sda2          8    2 W   2.00 KiB/s");
  EXPECT_EQ(l[7], "");  // rolling output: blank line between intervals
}

TEST(Screen, DiskTimeAndPercent) {
  Snapshot s = two_second_interval();
  ScreenOptions opt;
  opt.mode = ValueMode::kDiskTime;
  EXPECT_NE(render_column_titles(s, opt).find("DISKTIME"), std::string::npos);
  EXPECT_EQ(value_text(s.rows[0], s.interval_ns, opt.mode), "2.00 s");
  EXPECT_EQ(value_text(s.rows[1], s.interval_ns, opt.mode), "1.50 s");
  EXPECT_EQ(value_text(s.rows[2], s.interval_ns, opt.mode), "250 us");
  opt.mode = ValueMode::kPercent;
  EXPECT_NE(render_column_titles(s, opt).find("%I/O"), std::string::npos);
  EXPECT_EQ(value_text(s.rows[0], s.interval_ns, opt.mode), "100.0");
  EXPECT_EQ(value_text(s.rows[1], s.interval_ns, opt.mode), "75.0");
}

TEST(Screen, WidthRowsAndClearing) {
  ScreenOptions opt;
  opt.width = 40;
  opt.max_rows = 1;
  std::string out = render_screen(two_second_interval(), opt);
  for (const auto& l : lines(out)) EXPECT_LE(l.size(), 40u) << l;
  EXPECT_EQ(lines(out).size(), 6u);                // header, loss note, blank, titles, 1 row, blank
  EXPECT_EQ(out.find('\033'), std::string::npos);  // no escape codes unless clearing
  opt.clear = true;
  out = render_screen(two_second_interval(), opt);
  EXPECT_EQ(out.rfind("\033[H\033[2J", 0), 0u);
}

// A narrow terminal shrinks COMM and DEVICE first: the value stays whole.
TEST(Screen, NarrowTerminalKeepsTheValue) {
  ScreenOptions opt;
  opt.width = 60;
  Snapshot s = two_second_interval();
  EXPECT_EQ(render_column_titles(s, opt),
            "  UID     PID    PPID COMM   DEVICE  MAJ  MIN D      BYTES/s");
  EXPECT_EQ(render_row(s.rows[1], s, opt),
            " 1000     100       1 fio    sda2      8    2 R    768 KiB/s");
  EXPECT_EQ(render_column_titles(s, opt).size(), 60u);
  opt.width = 30;  // too narrow even then: cut
  EXPECT_EQ(render_row(s.rows[1], s, opt).size(), 30u);
}

TEST(Screen, GroupedRowsHaveNoProcessColumns) {
  Snapshot s = two_second_interval(GroupBy::kCgroup);
  ScreenOptions opt;
  EXPECT_NE(render_column_titles(s, opt).find("CGROUP"), std::string::npos);
  std::string row = render_row(s.rows[1], s, opt);
  EXPECT_EQ(row.rfind("    -       -       - /system.slice/db.service ", 0), 0u) << row;
}

TEST(Screen, NotATerminal) {
  // The test's stdin is not a terminal when run by ctest.
  if (isatty(0)) GTEST_SKIP() << "stdin is a terminal";
  EXPECT_EQ(terminal_width(0), 0u);
}

TEST(Screen, EachLossReasonIsExplainedOnce) {
  Snapshot s = two_second_interval();
  std::set<std::string> explained;
  ScreenOptions opt;
  opt.explained = &explained;
  std::string first = render_screen(s, opt), second = render_screen(s, opt);
  EXPECT_NE(first.find("LOST inflight_swept (3): "), std::string::npos) << first;
  EXPECT_EQ(second.find("LOST inflight_swept"), std::string::npos) << second;
  EXPECT_NE(second.find(",  LOST: 3\n"), std::string::npos) << "the count stays in the header";
  // A redrawn screen keeps the legend of every reason seen, with this
  // interval's count.
  opt.clear = true;
  Snapshot quiet = s;
  quiet.lost.clear();
  std::string redrawn = render_screen(quiet, opt);
  EXPECT_NE(redrawn.find("LOST inflight_swept (0): "), std::string::npos) << redrawn;
}

}  // namespace
}  // namespace blkrr::live
