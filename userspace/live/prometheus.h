// Prometheus text exposition (format 0.0.4) of top's counters. Counters are
// accumulated in user space from interval deltas so they never go backwards,
// in base units, labelled by device, direction and comm (or cgroup); a pid
// label only on request (one series per process is a cardinality hazard).
#pragma once

#include <map>
#include <string>
#include <tuple>

#include "live/top_model.h"

namespace blkrr::live {

struct MetricsOptions {
  bool by_cgroup = false;  // label "cgroup" instead of "comm"
  bool pid_label = false;  // add "pid"
};

class MetricsAccumulator {
 public:
  // Every loss reason starts at 0, so that rate() and increase() see the
  // first loss (a series that appears with its first increment hides it).
  MetricsAccumulator(MetricsOptions opt, Lookups lookups);
  // Adds one interval (its raw deltas, device deltas and lost counters).
  void add(const Snapshot& s);
  std::string exposition() const;

 private:
  void latency_histogram(std::string& out) const;
  static void build_info(std::string& out);

  // device, direction, comm or cgroup, pid ("" when not labelled)
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  struct Dev {
    uint64_t busy_ns = 0, requests = 0, in_flight = 0, io_ticks_ms = 0;
    bool has_ticks = false;
  };
  MetricsOptions opt_;
  Lookups lk_;
  std::map<Key, AggValue> series_;
  // device, direction -> requests, latency sum and histogram
  std::map<std::pair<std::string, std::string>, AggValue> latency_;
  std::map<std::string, Dev> devices_;
  std::map<std::string, uint64_t> lost_;
  uint64_t intervals_ = 0;
  uint64_t last_wall_ns_ = 0;
};

// The direction label: read, write (also write-zeroes, zone-append), flush,
// discard (also secure-erase) or other.
std::string_view direction_label(Op op);
// Escapes a label value (backslash, double quote, newline).
std::string escape_label(const std::string& v);
// Seconds from nanoseconds, exact decimal ("1.500000000").
std::string ns_to_seconds(uint64_t ns);

}  // namespace blkrr::live
