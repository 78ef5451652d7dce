#include "report/dependency_report.h"

#include <filesystem>

#include "converters/dependency_graph.h"
#include "core/units.h"

namespace blkrr::report {

namespace {

std::string count_share(uint64_t n, uint64_t of) {
  return std::to_string(n) + strfmt(" (%.1f %%)", of ? 100.0 * static_cast<double>(n) / of : 0.0);
}

std::vector<std::string> overview_row(const Dataset& d, const nlohmann::json& j) {
  const uint64_t n = j["requests"].get<uint64_t>();
  const auto& k = j["kinds"];
  const auto& t = j["think_ns"];
  const uint64_t dep = j["dependent"].get<uint64_t>();
  auto think = [&](const char* p) {
    return dep ? fmt_duration_ns(t[p].get<double>()) : std::string("-");
  };
  std::string fan;
  for (size_t i = 0; i < j["fanin"].size(); ++i)
    fan += (i ? " / " : "") + std::to_string(j["fanin"][i].get<uint64_t>());
  return {d.label,
          std::to_string(n),
          count_share(dep, n),
          std::to_string(k["thread"].get<uint64_t>()),
          std::to_string(k["cross"].get<uint64_t>()),
          std::to_string(k["sibling"].get<uint64_t>()),
          std::to_string(k.value("slot", uint64_t{0})),
          fan,
          think("p50"),
          think("p90"),
          think("p99"),
          std::to_string(j["threads"]["chains"].get<uint64_t>()),
          fmt_short(j["threads"]["mean_chain"].get<double>())};
}

std::string thread_table(const Dataset& d, const nlohmann::json& j) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : j["threads"]["top"])
    rows.push_back({std::to_string(r["tid"].get<uint32_t>()), r["comm"].get<std::string>(),
                    std::to_string(r["requests"].get<uint64_t>()),
                    count_share(r["dependent"].get<uint64_t>(), r["requests"].get<uint64_t>()),
                    std::to_string(r["chains"].get<uint64_t>()),
                    std::to_string(r["longest_chain"].get<uint32_t>())});
  return table(d.label + ": chains of the busiest threads",
               {"tid", "comm", "requests", "dependent", "chains", "longest chain"}, rows);
}

}  // namespace

Status add_dependencies(Context& ctx, const std::vector<const Dataset*>& data) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> blocks;
  for (const Dataset* d : data) {
    if (d->kind != DataKind::kTrace || !std::filesystem::exists(d->path)) continue;
    GraphOptions o;
    o.inputs = {d->path};
    auto g = infer_dependency_graph(o);
    if (!g) {
      if (g.error().kind == ErrorKind::kUsage) continue;  // no completion times: no dependencies
      blocks.push_back(note(d->label + ": dependencies not inferred: " + g.error().message, true));
      continue;
    }
    const nlohmann::json j = g->stats.to_json();
    ctx.json()["dependencies"][d->label] = j;
    rows.push_back(overview_row(*d, j));
    blocks.push_back(thread_table(*d, j));
  }
  if (rows.empty() && blocks.empty()) return {};
  Section& s = ctx.section("Dependencies", Question::kWho);
  s.blocks.push_back(
      table("Inferred dependencies (replay --timing dependency; default windows: own thread 1 ms, "
            "other threads 100 us)",
            {"input", "requests", "depend on another", "thread", "cross", "sibling", "slot",
             "fan-in 0/1/2/3/4", "think p50", "think p90", "think p99", "chains", "mean chain"},
            rows));
  for (auto& b : blocks) s.blocks.push_back(std::move(b));
  return {};
}

}  // namespace blkrr::report
