// The inferred dependency graph of a trace (core/dependency.h), as a file one
// can read and diff: `blkrr convert --dependencies FILE`. Also its statistics
// (core/dependency_stats.h) for convert's summary and `blkrr report`.
//
// File: text, one line per request in issue order, tab-separated:
//   seq issue_ns complete_ns tid op sector sectors kind think_ns depth parents slots
// complete_ns is "-" when unknown, parents a comma-separated list of seqs or
// "-", slots the thread's depth for kind slot (else 0). Version 2; version 1
// (no slots column, no kind slot) is read too. Lines starting with '#' are the header: the format's
// name and version, the input, the inference's options (JSON) and the column names.
#pragma once

#include <string>
#include <vector>

#include "converters/text_io.h"

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

// Reads a graph file back, beside the trace it was inferred from, so that a
// replay follows the stored (possibly edited) graph instead of inferring one:
// `blkrr replay TRACE --timing dependency --dependencies FILE`. Line k must
// describe request k of the trace in issue order (same issue time, operation,
// sector and length); a graph of another trace is an error naming the line.
// Parents must be earlier requests; the kind must agree with them
// (independent and slot exactly when there is none; slots > 0 exactly for
// kind slot). Memory: one line.
class DependencyGraphReader {
 public:
  static Result<DependencyGraphReader> open(const std::string& path);

  // The stored dependencies of the trace's request `seq` (seq 0, 1, ... in turn).
  Result<Dependency> next(const Request& r, uint64_t seq);
  // The trace ended: a graph with more lines belongs to a longer trace.
  Status finish();
  // The inference options the header names (what `convert` used).
  const DependencyOptions& options() const { return options_; }
  // Requests read so far, by kind (the inference's other counters stay 0).
  const DependencyCounters& counters() const { return counters_; }
  const std::string& path() const { return in_.path(); }

 private:
  explicit DependencyGraphReader(LineReader in) : in_(std::move(in)) {}
  Status read_header();
  Result<bool> next_line(std::string_view& line);
  Status parse(std::string_view line, const Request& r, uint64_t seq, Dependency& d) const;

  LineReader in_;
  DependencyOptions options_;
  DependencyCounters counters_;
  std::string pending_;  // the first request line, read with the header
  bool have_pending_ = false;
  int version_ = 2;
};

}  // namespace blkrr
