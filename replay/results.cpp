#include "replay/results.h"

#include <cinttypes>
#include <cstdio>

#include "core/units.h"

namespace blkrr::replay {

void StatsSink::on_records(std::span<const ReplayRecord> records) {
  for (const ReplayRecord& r : records) {
    if (!r.submitted() || (r.flags & kReplayError)) continue;
    const double d = static_cast<double>(r.delay_ns()) / 1000.0;
    const double l = static_cast<double>(r.latency_ns()) / 1000.0;
    all.delay_us.add(d);
    all.latency_us.add(l);
    Set* s = r.req.op == Op::kRead ? &reads : r.req.op == Op::kWrite ? &writes : nullptr;
    if (s) {
      s->delay_us.add(d);
      s->latency_us.add(l);
    }
  }
}

Result<OutputSink> OutputSink::create(const std::string& path,
                                      const std::vector<std::string>& preamble,
                                      const std::vector<std::string>& info_lines) {
  auto w = LoadWriter::create(path, LoadKind::kReplay, preamble);
  if (!w) return w.error().context("creating " + path);
  OutputSink s(std::move(*w));
  for (const auto& l : info_lines) {
    auto st = s.w_.write_line(l);
    if (!st) return st.error().context("writing " + path);
  }
  return s;
}

void OutputSink::on_records(std::span<const ReplayRecord> records) {
  for (const ReplayRecord& r : records) {
    if (!first_error_.ok()) return;
    if (!r.submitted() || r.req.op == Op::kFlush) continue;
    LoadRecord l;
    l.start_ns = static_cast<int64_t>(r.req.load_ns);
    l.sector = r.req.sector;
    l.sectors = r.req.sectors;
    l.op = r.req.op;
    l.pushed_back = (r.flags & kReplayPushedBack) != 0;
    l.delay_ns = r.delay_ns();
    l.duration_ns = static_cast<int64_t>(r.latency_ns());
    Status s = w_.write(l);
    if (s.ok() && (r.flags & kReplayError)) {
      s = w_.write_line("ERROR: request " + std::to_string(r.req.seq) + " at sector " +
                        std::to_string(r.req.sector) + "+" + std::to_string(r.req.sectors) +
                        " returned " + std::to_string(r.result));
    }
    if (!s) first_error_ = s;
  }
}

Status OutputSink::finish(const std::vector<std::string>& tail_lines) {
  if (!first_error_.ok()) return first_error_.error().context("writing " + w_.path());
  for (const auto& l : tail_lines) {
    auto s = w_.write_line(l);
    if (!s) return s.error().context("writing " + w_.path());
  }
  auto s = w_.close();
  if (!s) return s.error().context("closing " + w_.path());
  return {};
}

namespace {

// Delays and latencies are kept in microseconds; JSON has integer ns.
nlohmann::json dist(const Distribution& d) {
  return to_json_ns(d.summary(), 1000);
}

double rate(double n, double span_ns) {
  return span_ns > 0 ? n * 1e9 / span_ns : 0;
}

}  // namespace

nlohmann::json build_summary(const SummaryInput& in) {
  using nlohmann::json;
  const ReplayResult& r = *in.result;
  const PlanCounters& p = *in.plan;
  const MapCounters& m = *in.map;
  json j;
  j["fake"] = !in.fake_reasons.empty();
  j["fake_reasons"] = in.fake_reasons;
  j["interrupted"] = r.interrupted;
  j["load"] = {{"path", in.load_path},
               {"format", in.load_format},
               {"requests_read", p.read},
               {"before_window", p.before_window},
               {"unsupported_ops", p.unsupported_ops},
               {"out_of_order", p.out_of_order}};
  j["device"] = in.device;
  j["settings"] = in.settings;
  j["warnings"] = in.warnings;
  const uint64_t done_ok = r.completed - r.errors;
  j["requests"] = {
      {"planned", p.planned},  {"done", done_ok},          {"completed", r.completed},
      {"errors", r.errors},    {"dropped", r.dropped},     {"pushed_back", r.pushed_back},
      {"waited", r.waited},    {"conflicts", r.conflicts}, {"not_started", r.not_started},
      {"reads", r.reads_done}, {"writes", r.writes_done},  {"flushes", r.flushes_done}};
  if (!r.first_error.empty()) j["requests"]["first_error"] = r.first_error;
  if (r.failures.count > 0 || !r.failures.stop_reason.empty())
    j["requests"]["failures"] = failures_json(r.failures);
  // Demanded: the load's own rate over its span (replay time, speedup applied).
  const double demand_span = static_cast<double>(p.last_due_ns - p.first_due_ns);
  const double planned_bytes = static_cast<double>(p.planned_bytes_read + p.planned_bytes_written);
  j["demanded"] = {{"span_s", demand_span / 1e9},
                   {"iops", rate(static_cast<double>(p.planned), demand_span)},
                   {"mb_per_s", rate(planned_bytes, demand_span) / 1e6}};
  const double span = static_cast<double>(r.last_complete_ns - r.first_submit_ns);
  const double bytes = static_cast<double>(r.bytes_read + r.bytes_written);
  j["achieved"] = {{"span_s", span / 1e9},
                   {"iops", rate(static_cast<double>(r.completed), span)},
                   {"mb_per_s", rate(bytes, span) / 1e6}};
  StatsSink& s = *in.stats;
  j["delay_ns"] = {{"all", dist(s.all.delay_us)},
                   {"read", dist(s.reads.delay_us)},
                   {"write", dist(s.writes.delay_us)}};
  j["latency_ns"] = {{"all", dist(s.all.latency_us)},
                     {"read", dist(s.reads.latency_us)},
                     {"write", dist(s.writes.latency_us)}};
  j["max_in_flight"] = r.max_in_flight;
  j["mapping"] = {{"wraparound_factor", in.wraparound_factor},
                  {"wrapped", m.wrapped},
                  {"clamped", m.clamped},
                  {"misaligned", m.misaligned},
                  {"aligned_rounded", m.rounded},
                  {"aligned_skipped", m.skipped_align},
                  {"too_large", m.too_large},
                  {"highest_sector", m.max_end_sector}};
  json errs = json::array();
  for (const auto& e : r.verify_error_list) errs.push_back(e.to_line());
  j["verify"] = {{"errors", r.verify_errors},
                 {"sectors_verified", r.sectors_verified},
                 {"sectors_unverifiable", r.sectors_unverifiable},
                 {"verify_reads", r.verify_reads},
                 {"verify_read_errors", r.verify_read_errors},
                 {"error_lines", errs}};
  return j;
}

std::vector<std::string> summary_lines(const nlohmann::json& j) {
  std::vector<std::string> out;
  char buf[256];
  auto line = [&](const char* name, const std::string& value) {
    std::snprintf(buf, sizeof buf, "# %-28s: %s", name, value.c_str());
    out.emplace_back(buf);
  };
  auto num = [](const nlohmann::json& v) {
    char b[64];
    if (v.is_number_float())
      std::snprintf(b, sizeof b, "%.3f", v.get<double>());
    else
      std::snprintf(b, sizeof b, "%s", v.dump().c_str());
    return std::string(b);
  };
  if (j.value("fake", false)) out.emplace_back("# FAKE RESULTS: not a measurement of the device");
  const auto& q = j["requests"];
  for (const char* k : {"planned", "done", "errors", "dropped", "pushed_back", "waited",
                        "conflicts", "not_started"})
    line((std::string("requests ") + k).c_str(), num(q[k]));
  line("demanded IOPS", num(j["demanded"]["iops"]));
  line("achieved IOPS", num(j["achieved"]["iops"]));
  line("demanded MB/s", num(j["demanded"]["mb_per_s"]));
  line("achieved MB/s", num(j["achieved"]["mb_per_s"]));
  line("max in flight", num(j["max_in_flight"]));
  line("wraparound factor", num(j["mapping"]["wraparound_factor"]));
  for (const char* what : {"delay", "latency"}) {
    for (const char* dir : {"all", "read", "write"}) {
      const auto& d = j[std::string(what) + "_ns"][dir];
      if (d["count"].get<uint64_t>() == 0) continue;
      auto us = [&](const char* k) { return d[k].get<double>() / 1e3; };
      std::snprintf(buf, sizeof buf,
                    "min %.1f median %.1f mean %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f sd %.1f",
                    us("min"), us("p50"), us("mean"), us("p90"), us("p99"), us("p999"), us("max"),
                    us("stddev"));
      line((std::string(what) + "_us " + dir).c_str(), buf);
    }
  }
  const auto& la = j["latency_ns"]["all"];
  if (la.value("count", uint64_t{0}) > 0) {
    const double e = la.value("percentile_rel_error", 0.0);
    std::snprintf(buf, sizeof buf, "histogram, within %.2f %% relative error", e * 100);
    line("percentiles", la.value("percentiles", "exact") == "exact" ? "exact" : buf);
  }
  if (q.contains("failures")) {
    std::string by;
    for (const auto& [e, n] : q["failures"]["by_errno"].items())
      by += (by.empty() ? "" : ", ") + e + " " + n.dump();
    line("requests failed by errno", by.c_str());
  }
  line("verify errors", num(j["verify"]["errors"]));
  if (j.value("interrupted", false))
    out.emplace_back("# interrupted: results cover what completed");
  if (q.contains("failures") && q["failures"]["stop_reason"].is_string())
    out.emplace_back("# stopped early: " + q["failures"]["stop_reason"].get<std::string>() +
                     "; results cover what completed");
  return out;
}

// --timing dependency: the inference's settings and counts, and how the
// dependent requests were timed (docs/replay.md, "Dependency timing").
nlohmann::json dependency_summary(const DependencyOptions& d, bool compensate,
                                  const ReplayResult& res, const DependencyCounters* inf) {
  const GateCounters& g = res.gate;
  nlohmann::json j = {
      {"thread_window_ns", d.thread_window_ns},
      {"cross_window_ns", d.cross_window_ns},
      {"skew_ns", d.skew_ns},
      {"sibling_ns", d.sibling_ns},
      {"max_fanin", d.max_fanin},
      {"think", think_rule_name(d.think)},
      {"think_quantile", d.think_quantile},
      {"think_tight", d.think_tight},
      {"async", async_rule_name(d.async)},
      {"dependent_replayed", g.dependent},
      {"slot_replayed", g.slot},
      {"paced_replayed", g.paced},
      {"parents_not_replayed", g.parents_unknown},
      {"reaction_compensation", compensate},
      {"reaction_mean_ns", g.reaction_samples ? g.reaction_sum_ns / g.reaction_samples : 0},
      {"reaction_max_ns", g.reaction_max_ns},
      {"reaction_estimate_ns", res.reaction_ns},
      {"compensated_ns", g.compensated_ns},
      {"max_held", g.max_held}};
  if (inf)
    j["inferred"] = {{"requests", inf->requests},
                     {"independent", inf->independent},
                     {"thread", inf->thread},
                     {"cross", inf->cross},
                     {"sibling", inf->sibling},
                     {"slot", inf->slot},
                     {"think_cut_ns", inf->think_cut_ns},
                     {"think_tight", inf->think_tight},
                     {"transitive_dropped", inf->transitive_dropped},
                     {"fanin_capped", inf->fanin_capped},
                     {"skewed", inf->skewed},
                     {"forgotten", inf->forgotten},
                     {"no_completion", inf->no_completion}};
  return j;
}

std::string dependency_line(const nlohmann::json& dep) {
  const uint64_t samples = dep["dependent_replayed"].get<uint64_t>();
  return strfmt(
      "dependency timing: %llu requests after their parents, %llu independent; "
      "replayer reaction mean %s (max %s)%s",
      static_cast<unsigned long long>(samples),
      static_cast<unsigned long long>(
          dep.contains("inferred") ? dep["inferred"]["independent"].get<uint64_t>() : 0),
      fmt_duration_ns(dep["reaction_mean_ns"].get<double>()).c_str(),
      fmt_duration_ns(dep["reaction_max_ns"].get<double>()).c_str(),
      dep["reaction_compensation"].get<bool>() ? ", taken off think times" : "");
}

}  // namespace blkrr::replay
