// The clocks blkrr reads, in integer nanoseconds. CLOCK_MONOTONIC is the
// clock of the kernel's bpf_ktime_get_ns(), so user-space times taken with
// mono_ns() compare directly with the capture's timestamps.
#pragma once

#include <time.h>

#include <cstdint>

namespace blkrr {

inline uint64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t mono_ns() {
  return clock_ns(CLOCK_MONOTONIC);
}
inline uint64_t realtime_ns() {
  return clock_ns(CLOCK_REALTIME);
}
inline uint64_t thread_cpu_ns() {
  return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

}  // namespace blkrr
