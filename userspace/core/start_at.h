// --start-at UNIX_TIME, shared by `blkrr record` and `blkrr replay`: several
// hosts agree on one wall-clock instant, and each converts it once to its own
// CLOCK_MONOTONIC (which NTP steps cannot move) and waits for that.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/result.h"

namespace blkrr {

// The option's value: UNIX seconds (fractions allowed), e.g. $(date +%s -d '+1 min').
Result<double> parse_start_at(std::string_view v);

// The monotonic start instant for --start-at UNIX_TIME, given the monotonic
// and realtime clocks read at the same moment. Error if the instant is in the
// past (by more than `tolerance_ns`) or more than a day away; within the
// tolerance it is "now".
Result<uint64_t> start_instant_for_unix(double unix_seconds, uint64_t mono_now_ns,
                                        uint64_t real_now_ns, uint64_t tolerance_ns);

// CLOCK_MONOTONIC and CLOCK_REALTIME read at (nearly) the same instant: the
// realtime reading lies between two monotonic ones and is paired with their
// midpoint.
struct ClockPair {
  uint64_t mono_ns = 0;
  uint64_t real_ns = 0;
};
ClockPair read_clock_pair();

// Sleeps until CLOCK_MONOTONIC reaches `t_ns` (absolute; signals do not cut
// the sleep short). Returns at once when `t_ns` has passed.
void sleep_until_monotonic(uint64_t t_ns);

}  // namespace blkrr
