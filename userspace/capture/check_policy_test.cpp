#include "capture/check_policy.h"

#include <gtest/gtest.h>

namespace blkrr::capture {
namespace {

constexpr uint64_t kTick = CheckPolicy::kTickNs;

TEST(CheckPolicy, BackstopEverySecondWithoutDeviceState) {
  CheckPolicy p;
  int runs = 0;
  for (uint64_t t = 1; t <= 30; t++) runs += p.tick(t * kTick, {}, 0);
  EXPECT_EQ(runs, 3);  // at 0.1 s (first tick), 1.1 s, 2.1 s
}

TEST(CheckPolicy, SuspectsAreConfirmedOnTheNextTick) {
  CheckPolicy p;
  EXPECT_TRUE(p.tick(kTick, {}, 0));       // first pass marks 2 suspects
  EXPECT_TRUE(p.tick(2 * kTick, {}, 2));   // confirmation pass
  EXPECT_FALSE(p.tick(3 * kTick, {}, 2));  // nothing new marked
}

TEST(CheckPolicy, QuietDiskWithPendingRequestsIsCheckedOncePerState) {
  CheckPolicy p;
  EXPECT_TRUE(p.tick(kTick, {{1, 1, 500}}, 0));  // first tick: backstop
  // Events moved the clock: busy, not quiet.
  EXPECT_FALSE(p.tick(2 * kTick, {{1, 1, 600}}, 0));
  // No event since the last tick, one request pending: check.
  EXPECT_TRUE(p.tick(3 * kTick, {{1, 1, 600}}, 0));
  // Still the same state and nothing was marked (a slow request): no pass
  // until the backstop.
  for (uint64_t t = 4; t <= 12; t++) EXPECT_FALSE(p.tick(t * kTick, {{1, 1, 600}}, 0)) << t;
  EXPECT_TRUE(p.tick(13 * kTick, {{1, 1, 600}}, 0));  // 1 s after the last pass
}

TEST(CheckPolicy, QuietDiskWithNothingPendingIsNotChecked) {
  CheckPolicy p;
  EXPECT_TRUE(p.tick(kTick, {{1, 0, 500}}, 0));
  for (uint64_t t = 2; t <= 10; t++) EXPECT_FALSE(p.tick(t * kTick, {{1, 0, 500}}, 0)) << t;
}

TEST(CheckPolicy, LostCompletionOnAnIdleDiskIsGivenUpWithinTwoTicks) {
  CheckPolicy p;
  p.tick(kTick, {{7, 3, 100}}, 0);
  EXPECT_FALSE(p.tick(2 * kTick, {{7, 2, 200}}, 0));  // completions arrive
  // The last completion was lost: 1 pending; one tick with events, then the
  // disk is quiet.
  EXPECT_FALSE(p.tick(3 * kTick, {{7, 1, 300}}, 0));
  EXPECT_TRUE(p.tick(4 * kTick, {{7, 1, 300}}, 0));
  // That pass marked it; the next tick confirms (gives it up).
  EXPECT_TRUE(p.tick(5 * kTick, {{7, 1, 300}}, 1));
  EXPECT_FALSE(p.tick(6 * kTick, {{7, 0, 300}}, 1));
}

TEST(CheckPolicy, EachDiskHasItsOwnState) {
  CheckPolicy p;
  p.tick(kTick, {{1, 1, 10}, {2, 0, 10}}, 0);
  EXPECT_TRUE(p.tick(2 * kTick, {{1, 1, 10}, {2, 0, 20}}, 0));   // disk 1 quiet
  EXPECT_FALSE(p.tick(3 * kTick, {{1, 1, 10}, {2, 0, 30}}, 0));  // already checked
  EXPECT_TRUE(p.tick(4 * kTick, {{1, 1, 10}, {2, 2, 30}}, 0));   // disk 2 quiet now
}

}  // namespace
}  // namespace blkrr::capture
