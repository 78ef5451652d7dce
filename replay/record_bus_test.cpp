#include "replay/record_bus.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace blkrr::replay {
namespace {

// Counts records and the most batches it ever saw queued behind it.
struct SlowSink : RecordSink {
  std::atomic<uint64_t> seen{0};
  void on_records(std::span<const ReplayRecord> r) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    seen += r.size();
  }
};

TEST(RecordBus, DeliversEverythingInline) {
  SlowSink s;
  RecordBus bus(false, 3);
  bus.add_sink(&s);
  for (int i = 0; i < 10; ++i) bus.push(ReplayRecord{});
  bus.finish();
  EXPECT_EQ(s.seen.load(), 10u);
  EXPECT_EQ(bus.waits(), 0u);
}

// Records in the order they were pushed, whatever way they went.
struct OrderSink : SlowSink {
  std::vector<uint64_t> seqs;
  void on_records(std::span<const ReplayRecord> r) override {
    SlowSink::on_records(r);
    for (const auto& x : r) seqs.push_back(x.req.seq);
  }
};

ReplayRecord rec(uint64_t seq) {
  ReplayRecord r;
  r.req.seq = seq;
  r.complete_ns = seq * 10;
  return r;
}

TEST(RecordBus, ASlowSinkSpillsToDiskInOrderWithoutWaiting) {
  OrderSink s;
  RecordBus bus(true, 4, 2);  // at most 2 batches of 4 records in memory
  bus.add_sink(&s);
  for (uint64_t i = 0; i < 400; ++i) bus.push(rec(i));
  bus.finish();
  ASSERT_EQ(s.seqs.size(), 400u);
  for (uint64_t i = 0; i < 400; ++i) ASSERT_EQ(s.seqs[i], i);
  EXPECT_GT(bus.spilled_batches(), 0u);  // 100 batches at 2 ms each cannot all wait in memory
  EXPECT_GT(bus.spill_peak_bytes(), 0u);
  EXPECT_EQ(bus.waits(), 0u);
  EXPECT_EQ(bus.lost(), 0u);
}

TEST(RecordBus, WithoutASpillFileTheProducerWaitsForRoom) {
  const char* old = std::getenv("TMPDIR");
  std::string saved = old ? old : "";
  setenv("TMPDIR", "/nonexistent-blkrr-dir", 1);
  OrderSink s;
  {
    RecordBus bus(true, 4, 2);
    bus.add_sink(&s);
    for (uint64_t i = 0; i < 400; ++i) bus.push(rec(i));
    bus.finish();
    EXPECT_EQ(bus.spilled_batches(), 0u);
    EXPECT_GT(bus.waits(), 0u);
    EXPECT_GT(bus.waited_ns(), 0u);
  }
  if (old)
    setenv("TMPDIR", saved.c_str(), 1);
  else
    unsetenv("TMPDIR");
  ASSERT_EQ(s.seqs.size(), 400u);
  for (uint64_t i = 0; i < 400; ++i) ASSERT_EQ(s.seqs[i], i);
}

// The spill file is bounded: past its cap the producer waits for room, and
// nothing is lost or reordered.
TEST(RecordBus, AFullSpillFileMakesTheProducerWait) {
  OrderSink s;
  const uint64_t cap = 3 * 4 * sizeof(ReplayRecord);  // three batches of 4 records
  RecordBus bus(true, 4, 2, cap);
  bus.add_sink(&s);
  for (uint64_t i = 0; i < 400; ++i) bus.push(rec(i));
  bus.finish();
  ASSERT_EQ(s.seqs.size(), 400u);
  for (uint64_t i = 0; i < 400; ++i) ASSERT_EQ(s.seqs[i], i);
  EXPECT_GT(bus.spilled_batches(), 0u);
  EXPECT_LE(bus.spill_peak_bytes(), cap);
  EXPECT_GT(bus.waits(), 0u);
  EXPECT_EQ(bus.lost(), 0u);
}

TEST(RecordBus, AFastSinkNeverBlocksTheProducer) {
  struct Fast : RecordSink {
    uint64_t n = 0;
    void on_records(std::span<const ReplayRecord> r) override { n += r.size(); }
  } f;
  RecordBus bus(true, 4096, 64);
  bus.add_sink(&f);
  for (int i = 0; i < 10000; ++i) bus.push(ReplayRecord{});
  bus.finish();
  EXPECT_EQ(f.n, 10000u);
}

}  // namespace
}  // namespace blkrr::replay
