// The compact per-request record every report analysis works on (40 bytes),
// whatever the input was: a load, a native trace or a replay result.
#pragma once

#include <cstdint>
#include <cstddef>

namespace blkrr::report {

enum SampleOp : uint8_t { kSampleRead = 0, kSampleWrite = 1 };

enum SampleFlag : uint8_t {
  kSamplePushedBack = 1u << 0,  // replay: request was pushed back (lower-case r/w)
  kSampleHasLatency = 1u << 1,  // latency_ns is known
  kSampleHasDelay = 1u << 2,    // delay_ns is known (replay results)
};

constexpr uint16_t kNoProc = 0xffff;

struct Sample {
  uint64_t t_ns = 0;  // set point: load start / trace issue time, relative to the dataset start
  uint64_t sector = 0;
  uint32_t sectors = 0;
  uint8_t op = kSampleRead;
  uint8_t flags = 0;
  uint16_t proc = kNoProc;  // index into Dataset::procs (native traces)
  int64_t delay_ns = 0;     // replay: actual issue time minus set point
  uint64_t latency_ns = 0;  // completion minus actual issue

  bool write() const { return op == kSampleWrite; }
  bool has_latency() const { return flags & kSampleHasLatency; }
  bool has_delay() const { return flags & kSampleHasDelay; }
  uint64_t end_sector() const { return sector + sectors; }
  uint64_t bytes() const { return static_cast<uint64_t>(sectors) * 512; }
  // Actual issue and completion time on the dataset clock (set point when no delay known).
  uint64_t issue_ns() const {
    int64_t v = static_cast<int64_t>(t_ns) + delay_ns;
    return v < 0 ? 0 : static_cast<uint64_t>(v);
  }
  uint64_t complete_ns() const { return issue_ns() + latency_ns; }
};
static_assert(sizeof(Sample) == 40, "Sample must stay compact");

}  // namespace blkrr::report
