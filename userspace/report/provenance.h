// Where an input came from and what changes the meaning of its numbers:
// host, kernel, device, capture or replay time, replay settings, blkrr
// version. Read from the lines a Dataset keeps (a native trace's header, a
// replay result's settings and summary); whatever the input does not record
// is reported as unknown.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/dataset.h"

namespace blkrr::report {

struct Provenance {
  std::string input;  // file path
  std::string kind;   // "load", "trace", "replay"
  std::string host, kernel, tool_version;
  std::string device;  // name or path
  std::optional<double> device_bytes;
  std::optional<double> start_unix;  // wall-clock time of t = 0
  std::string original;              // replays: the load they replayed
  // Settings that change what the numbers mean, each in plain words.
  std::vector<std::string> settings;
};

Provenance provenance_of(const Dataset& d);

// One line naming the input and where/when it was measured, e.g.
// "run1.replay.gz: replay of prod.blkrr on /dev/sdb (1.00 TiB), 2026-11-24
// 23:00:00 UTC, blkrr 0.9" or "x.load.gz: load (host, kernel, device and
// time not recorded in this format)".
std::string context_line(const Provenance& p);
// context_line plus the settings, joined with "; ".
std::string context_with_settings(const Provenance& p);

// The JSON object stored as "INFO: trace {...}" for native traces (see
// dataset.cpp): the parts of the trace header a report shows.
std::string trace_info_line(const std::string& host, const std::string& kernel,
                            const std::string& version, const std::string& device,
                            double device_bytes, double start_unix);

}  // namespace blkrr::report
