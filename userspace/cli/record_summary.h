// The summary of `blkrr record`: what was recorded, per device and
// operation, every drop counter, and the progress line on a terminal.
#pragma once

#include <cstdint>
#include <cstdio>
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

// Where the records go, for the progress line.
struct OutputProgress {
  std::string path;          // the file being written ("standard output")
  uint64_t bytes = 0;        // its size so far
  uint64_t files = 1;        // files created
  uint64_t total_bytes = 0;  // written to all of them
  uint64_t on_disk = 0;      // of them still on disk (retention deletes)
  bool rotating = false;
  std::string extra;  // appended as it is (the flight recorder's memory and dumps)
};

// The progress line on a terminal: time so far, requests and bytes written,
// every request lost so far (the capture's loss counters), and the file.
std::string progress_text(const Tally& t, const Counters& c, double seconds,
                          const OutputProgress& out);

// "drops and anomalies: name=N ...": the counters that are not zero (all of
// them with `verbose`), or "drops and anomalies: none".
std::string drops_text(const Counters& c, bool verbose);

// To `to` (standard error when the trace goes to standard output).
void print_summary(FILE* to, const Tally& t, const Counters& c, const std::vector<DeviceBusy>& busy,
                   double seconds, const std::string& path, uint64_t file_bytes, bool verbose);

}  // namespace blkrr::cli
