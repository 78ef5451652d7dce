#include "core/request_json.h"

#include <gtest/gtest.h>

namespace blkrr {
namespace {

Request sample() {
  Request r;
  r.issue_ns = 5'000'000'000;
  r.complete_ns = 5'000'900'000;
  r.disk_time_ns = 450'000;
  r.dev = make_dev(8, 0);
  r.part = make_dev(8, 2);
  r.sector = 4096;
  r.bytes = 8192;
  r.op = Op::kRead;
  r.flags = kFlagSync | kFlagMeta;
  r.pid = 12;   // the thread
  r.tgid = 10;  // the process
  r.cgroup_id = ~uint64_t{0};
  r.set_comm("postgres");
  return r;
}

// One record for dump, snoop and convert: pid is the process, tid the
// thread, times in integer ns, 64-bit ids as strings (docs/json.md).
TEST(RequestJson, KeysOfTheSharedRecord) {
  RequestJsonContext c;
  c.origin_ns = 4'000'000'000;
  c.device = "sda2";
  nlohmann::json j = request_json(sample(), c);
  EXPECT_EQ(j["type"], "request");
  EXPECT_EQ(j["start_ns"], 1'000'000'000);
  EXPECT_EQ(j["issue_ns"], 5'000'000'000u);
  EXPECT_EQ(j["complete_ns"], 5'000'900'000u);
  EXPECT_EQ(j["latency_ns"], 900'000);
  EXPECT_EQ(j["disk_time_ns"], 450'000);
  EXPECT_EQ(j["dev"], "8:0");
  EXPECT_EQ(j["part"], "8:2");
  EXPECT_EQ(j["device"], "sda2");
  EXPECT_EQ(j["op"], "read");
  EXPECT_EQ(j["flags"], "sync,meta");
  EXPECT_EQ(j["pid"], 10);
  EXPECT_EQ(j["tid"], 12);
  EXPECT_EQ(j["cgroup_id"], "18446744073709551615");
  EXPECT_FALSE(j.contains("queue_ns"));
  EXPECT_FALSE(j.contains("record_flags"));
  EXPECT_EQ(j.size(), 18u);
}

TEST(RequestJson, UnknownTimesAreNullAndEarlierRequestsNegative) {
  Request r = sample();
  r.complete_ns = kNoTime;
  r.rec_flags = kRecCompletionNotSeen;
  RequestJsonContext c;
  c.origin_ns = 6'000'000'000;  // a request issued before the origin (reordered trace)
  c.with_queue = true;
  nlohmann::json j = request_json(r, c);
  EXPECT_EQ(j["start_ns"], -1'000'000'000);
  EXPECT_TRUE(j["complete_ns"].is_null());
  EXPECT_TRUE(j["latency_ns"].is_null());
  EXPECT_TRUE(j["queue_ns"].is_null());
  EXPECT_EQ(j["record_flags"], "completion-not-seen");
  EXPECT_FALSE(j.contains("device"));  // no name known: left out
  r.rec_flags = kRecIssueNotSeen;
  j = request_json(r, c);
  EXPECT_TRUE(j["start_ns"].is_null());
  EXPECT_TRUE(j["issue_ns"].is_null());
}

TEST(RequestJson, HeaderNamesTheSchema) {
  nlohmann::json h = requests_header("blkrr dump");
  EXPECT_EQ(h["type"], "header");
  EXPECT_EQ(h["schema"], nlohmann::json({{"name", "blkrr.requests"}, {"version", 1}}));
  EXPECT_EQ(h["tool"], "blkrr dump");
  // Invalid UTF-8 in a string is replaced, not thrown.
  EXPECT_EQ(json_line({{"comm", std::string("a\xff")}}), "{\"comm\":\"a\xEF\xBF\xBD\"}");
}

}  // namespace
}  // namespace blkrr
