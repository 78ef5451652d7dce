// Fleet summary of `blkrr report --fleet`: several hosts recorded or
// replayed in step (scripts/fleet/ansible). Per host and per kind (traces,
// replay results): requests, throughput, latency and issue-error percentiles,
// validation verdicts, and the start instants the hosts actually achieved
// (from each input's wall-clock anchor) next to the requested --start-at.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"
#include "core/stats.h"
#include "report/dataset.h"

namespace blkrr::report {

struct FleetInput {
  std::string path;       // trace (*.blkrr) or replay result (*.replay.gz)
  std::string json_path;  // replay results: the `replay --json` summary beside it, if any
};

// Files as given; directories are searched (recursively) for *.blkrr and
// *.replay.gz. A result X.replay.gz is paired with X.json when it exists.
// Sorted by path, so that the order does not depend on the directory.
Result<std::vector<FleetInput>> find_fleet_inputs(const std::vector<std::string>& args);

// What an input says about its clock and its validation.
struct FleetMeta {
  std::string host;                       // recording host (trace header), empty otherwise
  std::optional<double> requested_start;  // --start-at (UNIX seconds)
  std::optional<double> start;            // wall clock of the start instant achieved
  std::optional<double> first_issue;      // replays: when the first request actually went
  std::string verdict;                    // --validate verdict; empty when not validated
  std::optional<double> completeness_pct;
};

// Trace: header anchors and settings. Replay result: the JSON summary
// (start_unix, settings.start_at, validation) and the first request's delay.
Result<FleetMeta> read_fleet_meta(const FleetInput& in, const Dataset& d);

struct HostRow {
  std::string label;
  std::string kind;  // "trace" or "replay"
  FleetMeta meta;
  uint64_t requests = 0, bytes = 0;
  double span_s = 0, iops = 0, mib_per_s = 0;  // first issue to last completion
  Summary latency_us;                          // count 0: no latencies
  Summary delay_us;                            // issue error (replays); count 0: none
};

// Start instants of one group: achieved minus requested, per host, and the
// spread (latest - earliest achieved).
struct StartSpread {
  size_t hosts = 0;
  std::optional<double> requested;  // when every host was given the same instant
  double earliest = 0, latest = 0;  // UNIX seconds
  double spread_ms = 0;
  std::optional<double> worst_offset_ms;  // largest |achieved - requested|
};

struct FleetGroup {
  std::string kind;  // "trace" or "replay"
  std::vector<HostRow> hosts;
  HostRow aggregate;  // requests, bytes, IOPS, MiB/s summed; percentiles of all samples
  std::optional<StartSpread> start, first_issue;
  std::map<std::string, int> verdicts;  // verdict -> hosts ("not validated" included)
};

struct FleetSummary {
  std::vector<FleetGroup> groups;  // traces first, then replay results
};

HostRow host_row(const Dataset& d, const FleetMeta& m);
// `starts` are (requested or nullopt, achieved) pairs of the hosts that have one.
std::optional<StartSpread> start_spread(
    const std::vector<std::pair<std::optional<double>, double>>& starts);
FleetSummary summarize_fleet(const std::vector<Dataset>& data, const std::vector<FleetMeta>& meta);

nlohmann::json to_json(const FleetSummary& s);
std::string format_text(const FleetSummary& s);
// DIR/fleet.json, DIR/fleet.txt and DIR/fleet.html (links to the plots of
// index.html), each written to a temporary file and renamed.
Status write_fleet_files(const FleetSummary& s, const std::string& dir);

}  // namespace blkrr::report
