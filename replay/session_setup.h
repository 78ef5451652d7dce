// What run_session (replay/session.cpp) prepares before a replay starts: the
// load and its dependency graph, the map onto the device, the engine, the
// result file, the loop's configuration and what the summary says of them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "converters/dependency_graph.h"
#include "converters/device_map.h"
#include "converters/source.h"
#include "replay/buffers.h"
#include "replay/engine.h"
#include "replay/planner.h"
#include "replay/replay_clock.h"
#include "replay/replayer.h"
#include "replay/results.h"
#include "replay/session.h"
#include "replay/session_progress.h"
#include "replay/target.h"

namespace blkrr::replay::setup {

uint64_t random_run_id();
// The settings block of the summary and of the result file's header.
nlohmann::json settings_json(const SessionOptions& o, uint64_t run_id, std::string_view engine);
// The load, checked against the options that depend on its format.
Result<std::unique_ptr<RequestSource>> open_load(const SessionOptions& o);
// --dependencies FILE: the stored graph, for a dependency replay of one pass.
Result<std::optional<DependencyGraphReader>> open_graph(const SessionOptions& o);
// Whether think times lose the reaction time: by the rule they come from, the
// stored graph's or the inference's.
bool compensate_for(const SessionOptions& o, const std::optional<DependencyGraphReader>& graph);
// The summary's dependency block: the windows of the stored graph or of the
// inference, and the graph's file.
nlohmann::json dependency_block(const SessionOptions& o,
                                const std::optional<DependencyGraphReader>& graph,
                                const ReplayResult& res, const Planner& planner,
                                const ReplayConfig& cfg);
// How the load's positions land on the target (--scale or wrap, --align).
Result<DeviceMap> device_map_for(const SessionOptions& o, const Target& tgt);
Result<std::unique_ptr<Engine>> make_engine(const SessionOptions& o, Clock& clock,
                                            const Target& tgt, BufferPool& pool);
// Why the results are not those of a real replay (empty: they are).
std::vector<std::string> fake_reasons(const SessionOptions& o);
// The result file (-o), opened with its header lines: what ran where, how.
Result<std::optional<OutputSink>> open_output(const SessionOptions& o, const Target& tgt,
                                              const std::vector<std::string>& fake,
                                              const nlohmann::json& settings);
// An open-ended replay's progress line learns the load's total from a count
// beside the replay (none without a progress line, or for a load that
// cannot be read twice).
std::unique_ptr<LoadCounter> load_counter(const SessionOptions& o, const Schedule& sched);
ReplayConfig replay_config(const SessionOptions& o, const Target& tgt, uint64_t run_id,
                           uint64_t window_ns, const LoadCounter* total);
// What build_summary needs to know before the run: options, device, load.
SummaryInput summary_input(const SessionOptions& o, const nlohmann::json& settings,
                           const Target& tgt, InputFormat format,
                           const std::vector<std::string>& fake);

}  // namespace blkrr::replay::setup
