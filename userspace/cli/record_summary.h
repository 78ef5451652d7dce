// The summary of `blkrr record`: what was recorded, per device and
// operation, every drop counter, and the progress line on a terminal.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "capture/capture.h"
#include "core/request.h"
#include "core/trace_format.h"

namespace blkrr::cli {

struct DevStats {
  uint64_t requests = 0, bytes = 0, not_seen = 0;
};

// Everything the summary needs, accumulated as records arrive.
struct Tally {
  std::map<DevT, DevStats> by_dev;  // by partition (== disk when none)
  std::map<Op, uint64_t> by_op;
  uint64_t requests = 0, bytes = 0;
  uint64_t first_issue = UINT64_MAX, last_complete = 0;
  void add(const Request& r);
};

// The progress line on a terminal: time so far, requests and bytes written,
// and every request lost so far (the capture's loss counters).
std::string progress_text(const Tally& t, const Counters& c, double seconds);

void print_summary(const Tally& t, const Counters& c, const std::vector<DeviceBusy>& busy,
                   double seconds, const std::string& path, uint64_t file_bytes);

}  // namespace blkrr::cli
