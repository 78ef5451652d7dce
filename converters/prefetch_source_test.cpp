#include "converters/prefetch_source.h"

#include <gtest/gtest.h>

namespace blkrr {
namespace {

// Requests 0..n-1 (sector = index), an error after `fail_at` of them when
// set, and a counter of what was read.
class CountingSource final : public RequestSource {
 public:
  CountingSource(uint64_t n, uint64_t fail_at) : n_(n), fail_at_(fail_at) {
    info_.format = InputFormat::kLoad;
    info_.preamble = {"notice"};
  }
  Result<bool> next(Request& out) override {
    if (i_ == fail_at_)
      return Error(ErrorKind::kBadInput, "x.load:" + std::to_string(i_ + 1) + ": bad line");
    if (i_ == n_) return false;
    out = Request{};
    out.sector = i_++;
    return true;
  }
  Counters counters() const override { return {{"read", i_}}; }

 private:
  uint64_t n_, fail_at_, i_ = 0;
};

TEST(PrefetchSource, SameRequestsInOrderAndTheFinalCounters) {
  const uint64_t n = 3 * kPrefetchBatch * kPrefetchBatches + 17;
  auto s = prefetch_source(std::make_unique<CountingSource>(n, ~0ull));
  EXPECT_EQ(s->info().preamble.size(), 1u);
  Request r;
  uint64_t got = 0;
  for (;;) {
    auto ok = s->next(r);
    ASSERT_TRUE(ok) << ok.error().message;
    if (!*ok) break;
    ASSERT_EQ(r.sector, got);
    ++got;
  }
  EXPECT_EQ(got, n);
  EXPECT_EQ(s->counters().at("read"), n);
  auto again = s->next(r);  // the end stays the end
  ASSERT_TRUE(again);
  EXPECT_FALSE(*again);
}

TEST(PrefetchSource, AnErrorComesAfterTheRequestsBeforeIt) {
  auto s = prefetch_source(std::make_unique<CountingSource>(100000, 5000));
  Request r;
  uint64_t got = 0;
  Result<bool> ok = true;
  while ((ok = s->next(r)) && *ok) ++got;
  EXPECT_EQ(got, 5000u);
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().message, "x.load:5001: bad line");
  EXPECT_EQ(ok.error().kind, ErrorKind::kBadInput);  // the kind crosses the thread
}

TEST(PrefetchSource, StoppingEarlyEndsTheThread) {
  // The reader is blocked on a full queue when the consumer gives up.
  auto s = prefetch_source(std::make_unique<CountingSource>(1000000, ~0ull));
  Request r;
  ASSERT_TRUE(s->next(r));
  s.reset();  // must return (join), not hang
  SUCCEED();
}

}  // namespace
}  // namespace blkrr
