// One complete `blkrr replay`: open the load and the device (safety checks),
// build the engine, run the replay loop, write the result file and the JSON
// summary. Extra sinks (e.g. a validator) see every record as it completes;
// hooks let a validator start before the first request and finish after the
// last completion, with the replay's device and start instant.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "converters/source.h"
#include "replay/conflict.h"
#include "replay/dependency_gate.h"
#include "converters/device_map.h"
#include "replay/ordering.h"
#include "replay/record.h"
#include "replay/schedule.h"
#include "replay/verify_tag.h"

namespace blkrr::replay {

enum class EngineKind { kUring, kThreads };
Result<EngineKind> parse_engine(std::string_view s);

struct SessionOptions {
  std::string load;
  // Further pieces of the rotated recording `load` is the first piece of
  // (docs/recording.md): read after it as one trace.
  std::vector<std::string> more_pieces;
  std::string device;
  SourceOptions source;
  ScheduleOptions schedule;
  std::optional<double> start_at_unix;
  OrderMode order = OrderMode::kNone;
  ConflictMode cmode = ConflictMode::kPartial;
  int strong = 1;
  VerifyMode vmode = VerifyMode::kNone;
  EngineKind engine = EngineKind::kUring;
  uint32_t threads = 16;
  uint32_t queue_depth = 128;
  bool scale = false;
  AlignMode align = AlignMode::kRound;
  bool dry_run = false, fake_io = false, direct = true;
  bool force = false, allow_file = false;
  bool stop_on_error = false;  // the first failed request ends the replay
  uint64_t spin_ns = 100'000;
  bool adaptive_spin = true;  // spin longer when timer wake-ups come late
  uint64_t reap_spin_ns = 0;  // poll this long for a completion before sleeping
  // --timing dependency: take the reaction time off think times (kAuto: under
  // --dep-think recorded only, the stored graph's rule with --dependencies).
  Compensation compensation = Compensation::kAuto;
  // --timing dependency --dependencies FILE: the stored graph (convert
  // --dependencies) instead of inferring one ("" = infer).
  std::string dependency_graph;
  int rt_priority = 0;    // --realtime N: SCHED_FIFO priority of the replay threads (0 = off)
  std::string output;     // -o *.replay.gz ("" = none)
  std::string json_path;  // --json ("" = none)
  bool progress = false;  // progress line on stderr
  std::string command_line;
};

struct SessionHooks {
  std::vector<RecordSink*> sinks;
  // Called once the device is open and before the first request is due.
  std::function<Status(const std::string& device_path)> before_start;
  // Called after the last completion with the start instant (CLOCK_MONOTONIC
  // ns; record times are relative to it); may add to the summary.
  std::function<Status(nlohmann::json& summary, uint64_t start_instant_ns)> after_end;
};

struct SessionOutcome {  // NOLINT(bugprone-exception-escape): see SummaryInput
  nlohmann::json summary;
  std::vector<std::string> report;  // end-of-run block for stderr
  int exit_status = 0;              // 0 ok, 1 I/O or verify errors, 130 interrupted
  // What reading the load met that every command warns about
  // (converters/source.h source_warnings); also in summary["warnings"].
  std::vector<std::string> input_warnings;
  // The device went away during the replay: the error to print (the results
  // so far are written), else "".
  std::string device_gone;
};

Result<SessionOutcome> run_session(const SessionOptions& o, SessionHooks& hooks,
                                   const std::atomic<bool>* stop);

}  // namespace blkrr::replay
