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

TEST(SnoopFormat, DefaultColumns) {
  SnoopOptions opt;
  EXPECT_EQ(
      snoop_header(opt),
      "COMM                 PID DEVICE     D       SECTOR    BYTES   LAT(ms) DTIME(\xc2\xb5s)");
  EXPECT_EQ(snoop_line(sample(), "sda2", opt),
            "postgres            4321 sda2       W       123456     4096     2.500       1250");
}

TEST(SnoopFormat, TimesMajMinAndQueue) {
  SnoopOptions opt{true, true, true, true, 4'000'000'000};
  std::string h = snoop_header(opt);
  EXPECT_EQ(h.rfind("       START          END COMM", 0), 0u) << h;
  EXPECT_NE(h.find(" MAJ  MIN D"), std::string::npos);
  EXPECT_NE(h.find("QUE(ms)   LAT(ms)"), std::string::npos) << h;
  EXPECT_EQ(
      snoop_line(sample(), "sda2", opt, 250'000),
      "    1.000123     1.002623 postgres            4321 sda2          8    2 W       123456 "
      "    4096     0.250     2.500       1250");
  std::string unknown = snoop_line(sample(), "sda2", opt);
  EXPECT_NE(unknown.find("     - "), std::string::npos) << unknown;
}

TEST(SnoopFormat, UnknownIssue) {
  Request r = sample();
  r.rec_flags = kRecIssueNotSeen;
  SnoopOptions opt{true, false, false, false, 0};
  std::string l = snoop_line(r, "sda2", opt);
  EXPECT_EQ(l.rfind("           - postgres", 0), 0u) << l;
  EXPECT_NE(l.find(" -       1250"), std::string::npos) << l;
}

TEST(SnoopFormat, JsonLine) {
  SnoopOptions opt{false, false, false, true, 4'000'000'000};
  nlohmann::json j = nlohmann::json::parse(snoop_json(sample(), "sda2", opt, 250'000).dump());
  EXPECT_EQ(j["comm"], "postgres");
  EXPECT_EQ(j["pid"], 4321);
  EXPECT_EQ(j["tid"], 4322);
  EXPECT_EQ(j["device"], "sda2");
  EXPECT_EQ(j["major"], 8);
  EXPECT_EQ(j["minor"], 2);
  EXPECT_EQ(j["disk"], "8:0");
  EXPECT_EQ(j["dir"], "W");
  EXPECT_EQ(j["rwbs"], "WS");
  EXPECT_EQ(j["sector"], 123456);
  EXPECT_EQ(j["bytes"], 4096);
  EXPECT_EQ(j["latency_ns"], 2500000);
  EXPECT_EQ(j["disk_time_ns"], 1250700);
  EXPECT_EQ(j["queue_ns"], 250000);
  EXPECT_DOUBLE_EQ(j["start_s"].get<double>(), 1.000123456);
  EXPECT_FALSE(j.contains("record_flags"));
}

}  // namespace
}  // namespace blkrr::live
