#include "core/clock.h"
#include "core/start_at.h"

#include <time.h>

#include <cerrno>
#include <cmath>
#include <string>

#include "core/args.h"

namespace blkrr {

namespace {
constexpr const char* kExample = "e.g. $(date +%s -d '+1 min')";
}  // namespace

Result<double> parse_start_at(std::string_view v) {
  auto d = parse_double(v);
  if (!d || !std::isfinite(*d) || *d <= 0)
    return Error(ErrorKind::kUsage,
                 "'" + std::string(v) + "' is not a UNIX time in seconds (" + kExample + ")");
  return *d;
}

Result<uint64_t> start_instant_for_unix(double unix_seconds, uint64_t mono_now_ns,
                                        uint64_t real_now_ns, uint64_t tolerance_ns) {
  if (!std::isfinite(unix_seconds) || unix_seconds <= 0)
    return Error(ErrorKind::kUsage,
                 std::string("--start-at must be a UNIX time in seconds, ") + kExample);
  long double target = static_cast<long double>(unix_seconds) * 1e9L;
  long double delta = target - static_cast<long double>(real_now_ns);
  if (delta < -static_cast<long double>(tolerance_ns)) {
    return Error(ErrorKind::kUsage, "--start-at " + std::to_string(unix_seconds) + " is " +
                                        std::to_string(static_cast<double>(-delta / 1e9L)) +
                                        " s in the past; choose an instant in the future");
  }
  if (delta > 86400e9L)
    return Error(ErrorKind::kUsage,
                 "--start-at " + std::to_string(unix_seconds) + " is more than a day away");
  if (delta < 0) delta = 0;
  return mono_now_ns + static_cast<uint64_t>(delta);
}

ClockPair read_clock_pair() {
  uint64_t m0 = clock_ns(CLOCK_MONOTONIC);
  uint64_t r = clock_ns(CLOCK_REALTIME);
  uint64_t m1 = clock_ns(CLOCK_MONOTONIC);
  return {m0 + (m1 - m0) / 2, r};
}

void sleep_until_monotonic(uint64_t t_ns) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(t_ns / 1'000'000'000ull);
  ts.tv_nsec = static_cast<long>(t_ns % 1'000'000'000ull);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace blkrr
