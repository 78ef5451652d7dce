// The executive summary at the top of index.html: what was measured, the
// numbers that matter, and what looks wrong, in words computed from the data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/dataset.h"
#include "report/timing.h"

namespace blkrr::report {

// What the rules look at, computed once per input.
struct Facts {
  std::string label;
  uint64_t requests = 0;
  double duration_s = 0, iops = 0, bytes_per_s = 0;
  std::optional<double> start_unix;  // wall clock of t = 0
  // Latency (completion minus issue), nanoseconds.
  uint64_t latency_n = 0;
  double lat_p50_ns = 0, lat_p99_ns = 0, lat_max_ns = 0, lat_max_at_s = 0;
  uint64_t outliers = 0;  // latencies above 10x the p99
  // Longest time without any completion while requests were in flight.
  double stall_s = 0, stall_at_s = 0;
  uint64_t stall_inflight = 0;
  // Replays: issue error (actual issue minus set point), the demanded rate,
  // requests issued out of their recorded order.
  uint64_t issue_n = 0;
  std::optional<double> issue_p99_ns;
  std::optional<double> demanded_iops;
  std::optional<double> reordered_percent;
  uint64_t pushed_back = 0;
  bool fake = false;
  // Replays onto a smaller device: the load's extent over the device's size.
  std::optional<double> wraparound_factor;
  // Replays that ended early, and the requests their load demanded.
  bool interrupted = false;
  std::string stop_reason;
  std::optional<uint64_t> planned;
  uint64_t bytes = 0;  // read and written
};
// `t`: the input's Timing (nullptr: requests, rate and duration only).
Facts facts_of(const Dataset& d, const Timing* t);

struct Finding {
  bool warn = false;  // something looks wrong
  std::string text;
};
// The rules, in order: fake result, wrapped onto a smaller device, stalls, outliers, latency tail,
// issue error, achieved vs demanded rate, reordering, push-backs; a single all-clear finding when
// none fired.
std::vector<Finding> findings(const Facts& f);
// "12.3k IOPS, 45.6 MiB/s over 1 h 0 min; latency p50 1.20 ms, p99 8.40 ms
// (n = 1000000); issue error p99 35.0 us" (parts the input lacks are left out).
std::string headline(const Facts& f);

// Comparison of one replay with its original (--compare), in two parts that
// are judged apart. The replay's fidelity: was the load reproduced (its
// requests, their sizes, their timing and order)? This reads the replay
// against its own demand, so one replay gets the same verdict against the
// trace or against the load made from it. How the devices answered (latency)
// is no part of it: a replay onto another device is meant to answer
// differently.
struct FidelityFacts {
  std::string replay, original;
  uint64_t requests = 0;  // replayed
  uint64_t demanded = 0;  // the load's (the replay's plan, else the original's count)
  double size_ratio = 1;  // mean request size, replay / original
  std::optional<double> achieved_ratio;  // achieved / demanded request rate of the replay
  std::optional<double> issue_p99_ns;    // of the replay
  std::optional<double> reordered_percent;
  bool interrupted = false;
  std::string validation_verdict;  // --validate's, when it ran
};
// One finding: the numbers and "faithful" or "NOT a faithful replay" with why.
std::vector<Finding> fidelity_findings(const FidelityFacts& f);

// How the two devices answered: latencies of one layer on both sides when
// both have it (a replay's block layer comes from --validate).
struct LatencySide {
  LatencyLayer layer = LatencyLayer::kNone;
  std::optional<double> p50_ns, p99_ns;
};
struct DeviceFacts {
  std::string replay, original;
  LatencySide orig, rep;
  bool replay_has_block = false;  // false: --validate did not run (or measured none)
};
// Never a warning: a statement of what was compared, and the ratio.
Finding device_finding(const DeviceFacts& f);

// Both from the inputs and their facts (facts_of).
FidelityFacts fidelity_facts(const Facts& fo, const Dataset& rep, const Facts& fr);
DeviceFacts device_facts(const Dataset& orig, const Facts& fo, const Dataset& rep, const Facts& fr);

// A time in the words of a finding: "t = 1 min 23 s (12:03:04 UTC)".
std::string when(double t_s, std::optional<double> start_unix);

}  // namespace blkrr::report
