#include "live/snoop_format.h"

#include <gtest/gtest.h>

namespace blkrr::live {
namespace {

Request sample() {
  Request r;
  r.issue_ns = 5'000'123'456;
  r.complete_ns = 5'002'623'456;  // 2.5 ms later
  r.disk_time_ns = 1'250'700;
  r.sector = 123456;
  r.bytes = 4096;
  r.dev = make_dev(8, 0);
  r.part = make_dev(8, 2);
  r.pid = 4322;
  r.tgid = 4321;
  r.op = Op::kWrite;
  r.flags = kFlagSync;
  r.set_comm("postgres");
  return r;
}

// TIME(s) (the completion, as biosnoop) is always there; every duration is
// in milliseconds.
TEST(SnoopFormat, DefaultColumns) {
  SnoopOptions opt;
  opt.base_ns = 4'000'000'000;
  EXPECT_EQ(snoop_header(opt),
            "   TIME(s) COMM               PID DEVICE    D      SECTOR   BYTES LAT(ms) DT(ms)");
  EXPECT_EQ(snoop_line(sample(), "sda2", opt),
            "  1.002623 postgres          4321 sda2      W      123456    4096   2.500  1.251");
}

// The widest values a host gives still fit 80 columns, as biosnoop's lines
// do: a 15-character task name (14 shown), a 7-digit pid, a partition of an
// NVMe disk, the last sector of a 16 TiB disk, a 4 MiB request, a latency of
// nearly 10 s, after most of an hour; later times and longer latencies
// keep their width and lose decimals.
TEST(SnoopFormat, WidestLinesFit80Columns) {
  Request r = sample();
  r.set_comm("systemd-journal");
  r.tgid = 4'194'304;
  r.sector = (16ull << 40) / 512 - 8;
  r.bytes = 4 << 20;
  r.issue_ns = 4'000'000'000;
  r.complete_ns = r.issue_ns + 3'599'999'999'999;  // 3600 s
  r.disk_time_ns = 9'999'999'000;
  SnoopOptions opt;
  opt.base_ns = 0;
  std::string l = snoop_line(r, "nvme0n1p1", opt);
  EXPECT_EQ(l, "3604.00000 systemd-journa 4194304 nvme0n1p1 W 34359738360 4194304 3600000  10000");
  EXPECT_LE(l.size(), 80u);
  r.issue_ns = 5'000'000'000;
  r.complete_ns = r.issue_ns + 9'999'999'000;  // 9999.999 ms
  r.disk_time_ns = 12'345'678;
  l = snoop_line(r, "nvme0n1p1", opt);
  EXPECT_EQ(l, " 14.999999 systemd-journa 4194304 nvme0n1p1 W 34359738360 4194304 10000.0 12.346");
  EXPECT_LE(l.size(), 80u);
  EXPECT_EQ(snoop_header(opt).size(), 80u);
}

TEST(SnoopFormat, IssueMajMinAndQueue) {
  SnoopOptions opt{true, true, true, 4'000'000'000};
  std::string h = snoop_header(opt);
  EXPECT_EQ(h.rfind("   TIME(s)   ISSUE(s) COMM", 0), 0u) << h;
  EXPECT_NE(h.find(" MAJ  MIN D"), std::string::npos);
  EXPECT_NE(h.find("QUE(ms) LAT(ms) DT(ms)"), std::string::npos) << h;
  EXPECT_EQ(snoop_line(sample(), "sda2", opt, 250'000),
            "  1.002623   1.000123 postgres          4321 sda2         8    2 W      123456    "
            "4096   0.250   2.500  1.251");
  std::string unknown = snoop_line(sample(), "sda2", opt);
  EXPECT_NE(unknown.find("   - "), std::string::npos) << unknown;
}

TEST(SnoopFormat, UnknownIssue) {
  Request r = sample();
  r.rec_flags = kRecIssueNotSeen;
  SnoopOptions opt{true, false, false, 0};
  std::string l = snoop_line(r, "sda2", opt);
  EXPECT_EQ(l.rfind("  5.002623          - postgres", 0), 0u) << l;
  EXPECT_NE(l.find(" -  1.251"), std::string::npos) << l;
}

// The JSON object is a blkrr.requests record (core/request_json.h).
TEST(SnoopFormat, JsonLine) {
  SnoopOptions opt{false, false, true, 4'000'000'000};
  nlohmann::json j = nlohmann::json::parse(snoop_json(sample(), "sda2", opt, 250'000).dump());
  EXPECT_EQ(j["type"], "request");
  EXPECT_EQ(j["comm"], "postgres");
  EXPECT_EQ(j["pid"], 4321);
  EXPECT_EQ(j["tid"], 4322);
  EXPECT_EQ(j["device"], "sda2");
  EXPECT_EQ(j["dev"], "8:0");
  EXPECT_EQ(j["part"], "8:2");
  EXPECT_EQ(j["op"], "write");
  EXPECT_EQ(j["flags"], "sync");
  EXPECT_EQ(j["sector"], 123456);
  EXPECT_EQ(j["bytes"], 4096);
  EXPECT_EQ(j["latency_ns"], 2500000);
  EXPECT_EQ(j["disk_time_ns"], 1250700);
  EXPECT_EQ(j["queue_ns"], 250000);
  EXPECT_EQ(j["start_ns"], 1000123456);
  EXPECT_EQ(j["issue_ns"], 5000123456u);
  EXPECT_EQ(j["cgroup_id"], "0");
  EXPECT_FALSE(j.contains("record_flags"));
  Request r = sample();
  r.rec_flags = kRecIssueNotSeen;
  j = snoop_json(r, "sda2", opt);
  EXPECT_TRUE(j["start_ns"].is_null());
  EXPECT_TRUE(j["latency_ns"].is_null());
  EXPECT_TRUE(j["queue_ns"].is_null());
  EXPECT_EQ(j["record_flags"], "issue-not-seen");
}

}  // namespace
}  // namespace blkrr::live
