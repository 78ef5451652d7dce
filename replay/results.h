// Consumers of replay records: the statistics behind the summary, and the
// blkreplay-compatible result file (*.replay.gz).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "converters/load_format.h"
#include "core/distribution.h"
#include "core/stats.h"
#include "replay/planner.h"
#include "replay/record.h"
#include "replay/replayer.h"

namespace blkrr::replay {

// Delay and latency of the completed requests, overall and per direction
// (µs), in constant memory past Distribution's exact limit.
class StatsSink final : public RecordSink {
 public:
  void on_records(std::span<const ReplayRecord> records) override;
  struct Set {
    Distribution delay_us, latency_us;
  };
  Set all, reads, writes;
};

// Writes completed requests in completion order; pushed-back ones lower-case.
class OutputSink final : public RecordSink {
 public:
  static Result<OutputSink> create(const std::string& path,
                                   const std::vector<std::string>& preamble,
                                   const std::vector<std::string>& info_lines);
  void on_records(std::span<const ReplayRecord> records) override;
  // Verify errors, the statistics tail; then closes. Reports the first write
  // error met on the way.
  Status finish(const std::vector<std::string>& tail_lines);

 private:
  explicit OutputSink(LoadWriter w) : w_(std::move(w)) {}
  LoadWriter w_;
  Status first_error_;
};

// Everything the summary needs besides the records.
// clang-tidy 14 reports the implicit members of json/function aggregates as
// throwing (bugprone-exception-escape); they are noexcept.
struct SummaryInput {       // NOLINT(bugprone-exception-escape)
  nlohmann::json settings;  // every option in force
  nlohmann::json device;    // path, size, logical block
  std::string load_path;
  std::string load_format;
  std::vector<std::string> fake_reasons;  // non-empty: the results are FAKE
  std::vector<std::string> warnings;
  const PlanCounters* plan = nullptr;
  const MapCounters* map = nullptr;
  double wraparound_factor = 0;
  const ReplayResult* result = nullptr;
  StatsSink* stats = nullptr;
};

nlohmann::json build_summary(const SummaryInput& in);
// The statistics tail of the result file and the end-of-run block on stderr,
// from a summary built by build_summary().
std::vector<std::string> summary_lines(const nlohmann::json& summary);

// --timing dependency: the summary's `dependency` block (the inference's
// windows and counts, how the requests were timed, the reaction time) and
// its one line for the end-of-run report.
nlohmann::json dependency_summary(const DependencyOptions& d, bool compensate,
                                  const ReplayResult& res, const DependencyCounters* inferred);
std::string dependency_line(const nlohmann::json& dependency);

}  // namespace blkrr::replay
