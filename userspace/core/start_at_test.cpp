#include "core/start_at.h"

#include <time.h>

#include <gtest/gtest.h>

namespace blkrr {
namespace {

TEST(StartAt, FutureInstantMapsToMonotonic) {
  // realtime 1000 s <-> monotonic 5 s; start at realtime 1002.5 s -> monotonic 7.5 s.
  auto r = start_instant_for_unix(1002.5, 5'000'000'000, 1'000'000'000'000, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 7'500'000'000u);
}

TEST(StartAt, PastInstantIsRefused) {
  auto r = start_instant_for_unix(999.0, 5'000'000'000, 1'000'000'000'000, 1'000'000);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("1.000000 s in the past"), std::string::npos);
  EXPECT_EQ(r.error().kind, ErrorKind::kUsage);
}

TEST(StartAt, WithinToleranceStartsNow) {
  auto r = start_instant_for_unix(999.9995, 5'000'000'000, 1'000'000'000'000, 1'000'000);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 5'000'000'000u);
}

TEST(StartAt, MoreThanADayAwayIsRefused) {
  auto r = start_instant_for_unix(1000.0 + 86401, 5'000'000'000, 1'000'000'000'000, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("more than a day away"), std::string::npos);
}

TEST(StartAt, ParseTakesPositiveSeconds) {
  EXPECT_EQ(*parse_start_at("1763740800"), 1763740800.0);
  EXPECT_EQ(*parse_start_at("1763740800.25"), 1763740800.25);
  for (const char* bad : {"", "0", "-5", "soon", "12x", "nan", "inf"}) {
    auto r = parse_start_at(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().message.find("'" + std::string(bad) + "' is not a UNIX time in seconds"),
              0u);
  }
}

TEST(StartAt, ClockPairAgreesWithTheClocks) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  const uint64_t before = static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + ts.tv_nsec;
  ClockPair p = read_clock_pair();
  EXPECT_GE(p.real_ns, before);
  EXPECT_LT(p.real_ns - before, 1'000'000'000ull);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t mono_after = static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + ts.tv_nsec;
  EXPECT_LE(p.mono_ns, mono_after);
}

TEST(StartAt, SleepUntilMonotonicWaitsForTheInstant) {
  ClockPair p = read_clock_pair();
  const uint64_t target = p.mono_ns + 20'000'000;  // 20 ms
  sleep_until_monotonic(target);
  EXPECT_GE(read_clock_pair().mono_ns, target);
  sleep_until_monotonic(p.mono_ns);  // in the past: returns at once
}

}  // namespace
}  // namespace blkrr
