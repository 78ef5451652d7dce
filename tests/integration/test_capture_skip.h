// For integration tests that attach the BPF capture: skip with the reason
// when this is not root or the kernel cannot run it (never pass silently),
// and the CLOCK_MONOTONIC now that the capture's timestamps use.
#pragma once

#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include "core/clock.h"
#include "capture/capture.h"

#define SKIP_UNLESS_CAPTURE()                                                      \
  do {                                                                             \
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF capture, loop devices)"; \
    auto pf = ::blkrr::capture_preflight();                                        \
    if (!pf) GTEST_SKIP() << "capture cannot run here: " << pf.error().message;    \
  } while (0)

namespace blkrr::testing {

using ::blkrr::mono_ns;

}  // namespace blkrr::testing
