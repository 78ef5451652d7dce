// The inferred dependency graph of a trace (core/dependency.h), as a file one
// can read and diff: `blkrr convert --dependencies FILE`. Also its statistics
// (core/dependency_stats.h) for convert's summary and `blkrr report`.
//
// File: text, one line per request in issue order, tab-separated:
//   seq issue_ns complete_ns tid op sector sectors kind think_ns depth parents
// complete_ns is "-" when unknown, parents a comma-separated list of seqs or
// "-". Lines starting with '#' are the header: the format's name and version,
// the input, the inference's options (JSON) and the column names.
#pragma once

#include <string>
#include <vector>

#include "converters/source.h"
#include "core/dependency.h"
#include "core/dependency_stats.h"
#include "core/io_guard.h"

namespace blkrr {

struct GraphOptions {
  std::vector<std::string> inputs;
  SourceOptions source;
  DependencyOptions deps;
  std::string output;                     // the graph file; "" = statistics only
  Existing existing = Existing::kRefuse;  // an existing graph file: --overwrite
  uint64_t reorder_window_ns = 10'000'000'000ull;
};

struct GraphResult {
  DependencyStats stats;
  DependencyCounters counters;
  uint64_t out_of_order = 0;  // requests later than the reorder window allowed
};

// Refuses (exit 2) inputs without completion times: they carry no dependencies.
Result<GraphResult> infer_dependency_graph(const GraphOptions& o);

// The header and one line, as the file has them (for tests and tools).
std::string graph_header(const GraphOptions& o);
std::string graph_line(const Request& r, const Dependency& d);

}  // namespace blkrr
