#include "validate/replay_timing.h"

#include <gtest/gtest.h>

namespace blkrr::validate {
namespace {

TEST(ReplayTiming, NoSettingsLineMeansUnknownSpeedupOne) {
  auto t = timing_from_info({"INFO: device /dev/loop0", "INFO: command blkrr replay"}, "r.gz");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_FALSE(t->known);
  EXPECT_EQ(t->submit_ns(5'000'000, 7'000), 5'007'000);
}

TEST(ReplayTiming, SpeedupStartAndPidAreRead) {
  auto t = timing_from_info(
      {"INFO: settings {\"timing\":\"timestamp\",\"speedup\":20.0,\"start_s\":60.0,"
       "\"start_at\":null,\"pid\":4321,\"order\":\"none\"}"},
      "r.gz");
  ASSERT_TRUE(t) << t.error().message;
  EXPECT_TRUE(t->known);
  EXPECT_FALSE(t->fullspeed);
  EXPECT_EQ(t->speedup, 20.0);
  EXPECT_EQ(t->window_start_ns, 60'000'000'000u);
  EXPECT_EQ(t->pid, 4321u);
  EXPECT_FALSE(t->start_at_unix);
  // Load time 62 s is 2 s into the window, due at 0.1 s at 20x.
  EXPECT_EQ(t->submit_ns(62'000'000'000, 3'000), 100'003'000);
  // Before the window start: due at 0.
  EXPECT_EQ(t->submit_ns(1'000, 3'000), 3'000);
  EXPECT_EQ(t->describe(), "timestamp, speedup 20, start 60.000 s");
}

TEST(ReplayTiming, HalfSpeedDoublesTheDueTime) {
  auto t = timing_from_info({"INFO: settings {\"timing\":\"timestamp\",\"speedup\":0.5}"}, "r");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->submit_ns(1'000'000, -500), 1'999'500);
}

TEST(ReplayTiming, FullspeedSubmitIsTheDelay) {
  auto t = timing_from_info(
      {"INFO: settings {\"timing\":\"fullspeed\",\"speedup\":1,\"start_at\":1700000000.5}"}, "r");
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->fullspeed);
  EXPECT_EQ(t->submit_ns(9'000'000'000, 12'345), 12'345);
  ASSERT_TRUE(t->start_at_unix);
  EXPECT_DOUBLE_EQ(*t->start_at_unix, 1700000000.5);
  EXPECT_EQ(t->describe(), "fullspeed, start-at 1700000000.500");
}

TEST(ReplayTiming, BadSettingsNameTheFileAndField) {
  auto bad = [](const std::string& line) {
    auto t = timing_from_info({line}, "run.replay.gz");
    EXPECT_FALSE(t) << line;
    if (!t) {
      EXPECT_EQ(t.error().kind, ErrorKind::kBadInput) << line;
    }
    return t ? std::string() : t.error().message;
  };
  std::string m = bad("INFO: settings {\"speedup\":0}");
  EXPECT_NE(m.find("run.replay.gz"), std::string::npos) << m;
  EXPECT_NE(m.find("'speedup'"), std::string::npos) << m;
  EXPECT_NE(bad("INFO: settings {\"speedup\":\"fast\"}").find("not a number"), std::string::npos);
  EXPECT_NE(bad("INFO: settings {\"timing\":\"slow\"}").find("'timing' is 'slow'"),
            std::string::npos);
  EXPECT_NE(bad("INFO: settings {\"pid\":-1}").find("'pid'"), std::string::npos);
  EXPECT_NE(bad("INFO: settings {\"speedup\":").find("not a JSON object"), std::string::npos);
  EXPECT_NE(bad("INFO: settings [1,2]").find("not a JSON object"), std::string::npos);
}

}  // namespace
}  // namespace blkrr::validate
