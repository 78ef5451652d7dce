#include "replay/ordering.h"

#include <gtest/gtest.h>

namespace blkrr::replay {
namespace {

TEST(OrderTracker, NoneNeverWaits) {
  OrderTracker t(OrderMode::kNone);
  t.on_start(1);
  EXPECT_TRUE(t.may_start(1));
}

TEST(OrderTracker, GlobalWaitsForEverything) {
  OrderTracker t(OrderMode::kGlobal);
  EXPECT_TRUE(t.may_start(1));
  t.on_start(1);
  EXPECT_FALSE(t.may_start(2));
  t.on_complete(1);
  EXPECT_TRUE(t.may_start(2));
}

TEST(OrderTracker, PerProcessWaitsForSameProcessOnly) {
  OrderTracker t(OrderMode::kPerProcess);
  t.on_start(10);
  EXPECT_FALSE(t.may_start(10));
  EXPECT_TRUE(t.may_start(20));
  t.on_start(20);
  t.on_complete(10);
  EXPECT_TRUE(t.may_start(10));
  EXPECT_FALSE(t.may_start(20));
  EXPECT_EQ(t.in_flight(), 1u);
}

TEST(OrderTracker, Parse) {
  EXPECT_EQ(*parse_order("per-process"), OrderMode::kPerProcess);
  EXPECT_FALSE(parse_order("random").ok());
}

}  // namespace
}  // namespace blkrr::replay
