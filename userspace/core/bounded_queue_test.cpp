#include "core/bounded_queue.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace blkrr {
namespace {

TEST(BoundedQueue, KeepsOrderAndNeverHoldsMoreThanItsCapacity) {
  BoundedQueue<int> q(3);
  EXPECT_TRUE(q.try_push(1));
  EXPECT_TRUE(q.try_push(2));
  EXPECT_TRUE(q.try_push(3));
  EXPECT_FALSE(q.try_push(4));  // full
  EXPECT_EQ(q.try_pop(), 1);
  EXPECT_TRUE(q.try_push(4));
  EXPECT_EQ(q.pop(), 2);
  EXPECT_EQ(q.pop(), 3);
  EXPECT_EQ(q.pop(), 4);
  EXPECT_EQ(q.try_pop(), std::nullopt);
}

TEST(BoundedQueue, AProducerAheadWaitsForTheConsumer) {
  BoundedQueue<int> q(2);
  std::thread producer([&] {
    for (int i = 0; i < 10000; ++i) ASSERT_TRUE(q.push(i));
  });
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(q.pop(), i);
  producer.join();
}

TEST(BoundedQueue, StopReleasesAWaitingProducerAndConsumer) {
  BoundedQueue<int> full(1);
  ASSERT_TRUE(full.push(0));
  bool pushed = true;
  std::thread producer([&] { pushed = full.push(1); });  // waits: full
  BoundedQueue<int> empty(1);
  std::optional<int> got = 7;
  std::thread consumer([&] { got = empty.pop(); });  // waits: empty
  full.stop();
  empty.stop();
  producer.join();
  consumer.join();
  EXPECT_FALSE(pushed);
  EXPECT_EQ(got, std::nullopt);
  EXPECT_FALSE(full.try_push(2));
}

}  // namespace
}  // namespace blkrr
