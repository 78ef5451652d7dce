#include "validate/report_io.h"
#include "core/json_doc.h"
#include "core/units.h"

#include <cctype>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace blkrr::validate {
namespace {

nlohmann::json ref_json(const RequestRef& r) {
  return {{"id", r.id},
          {"sector", r.sector},
          {"sectors", r.sectors},
          {"op", std::string(op_name(r.op))},
          {"status", status_name(r.status)}};
}

std::string ref_text(const RequestRef& r) {
  return strfmt("#%" PRIu64 " %s sector %" PRIu64 " +%u", r.id, std::string(op_name(r.op)).c_str(),
                r.sector, r.sectors);
}

nlohmann::json stack_json(const StackCheck& c) {
  using nlohmann::json;
  json disks = json::array(), mirrors = json::array();
  for (const auto& d : c.disks) disks.push_back({{"name", d.name}, {"requests", d.requests}});
  for (const auto& m : c.mirrors) {
    json miss = json::array();
    for (const auto& x : m.missing_list) miss.push_back(ref_json(x));
    mirrors.push_back({{"copy", m.copy},
                       {"map", m.extents},
                       {"writes", m.writes},
                       {"covered", m.covered},
                       {"missing", m.missing},
                       {"missing_list", miss}});
  }
  return {{"volume", c.volume},
          {"stack", c.stack},
          {"map", c.map},
          {"disks", disks},
          {"volume_records", c.volume_records},
          {"outside", c.outside},
          {"split", c.split},
          {"mirror_writes", c.mirror_writes},
          {"replayed_split", c.replayed_split},
          {"replayed_pieces", c.replayed_pieces},
          {"mirrors", mirrors}};
}

std::string stack_text(const StackCheck& c) {
  std::string s = "  through the stack " + c.stack + ":";
  for (const auto& d : c.disks)
    s += strfmt(" %" PRIu64 " requests on %s,", d.requests, d.name.c_str());
  s += strfmt(" %" PRIu64 " volume records (%" PRIu64 " from split requests), %" PRIu64
              " outside the volume\n",
              c.volume_records, c.split, c.outside);
  if (c.replayed_split)
    s += strfmt("  %" PRIu64 " replayed requests split by the stack into %" PRIu64
                " pieces (chunks, segments)\n",
                c.replayed_split, c.replayed_pieces);
  for (const auto& m : c.mirrors)
    s += strfmt("  mirror copy %u (%s): %" PRIu64 " writes, %" PRIu64 " served, %" PRIu64
                " missing\n",
                m.copy, m.extents.c_str(), m.writes, m.covered, m.missing);
  return s;
}

// The lists of the JSON report: missing, expected missing, altered, foreign
// requests and processes, the replayer's probe.
void add_lists(nlohmann::json& j, const Report& r) {
  using nlohmann::json;
  json miss = json::array(), exp = json::array(), alt = json::array(), fo = json::array(),
       fp = json::array();
  for (const auto& m : r.missing) miss.push_back(ref_json(m));
  for (const auto& m : r.expected_missing) {
    json e = ref_json(m);
    e["reason"] = "dropped by the replay (--cmode drop)";
    exp.push_back(e);
  }
  for (const auto& a : r.altered) {
    json e = ref_json(a.req);
    e["kind"] = alter_name(a.kind);
    e["seen_op"] = std::string(op_name(a.seen_op));
    e["seen_sector"] = a.seen_sector;
    e["seen_sectors"] = a.seen_sectors;
    e["covered_sectors"] = a.covered_sectors;
    alt.push_back(e);
  }
  for (const auto& f : r.foreign)
    fo.push_back({{"sector", f.sector},
                  {"sectors", f.sectors},
                  {"op", std::string(op_name(f.op))},
                  {"pid", f.pid},
                  {"comm", f.comm},
                  {"issue_ns", f.issue_ns}});
  for (const auto& p : r.foreign_by_process)
    fp.push_back({{"pid", p.pid}, {"comm", p.comm}, {"requests", p.requests}, {"bytes", p.bytes}});
  j["missing"] = miss;
  j["expected_missing"] = exp;
  j["altered"] = alt;
  j["foreign"] = fo;
  j["foreign_by_process"] = fp;
  j["lists_capped_at"] = r.options.max_listed;
  json own = json::array();
  for (const auto& p : r.own_probe)
    own.push_back({{"pid", p.pid},
                   {"comm", p.comm},
                   {"requests", p.requests},
                   {"bytes", p.bytes},
                   {"first_issue_ns", p.first_ns},
                   {"last_issue_ns", p.last_ns}});
  j["replayer_probe"] = own;
}

void add_cost(nlohmann::json& j, const ValidatorCost& c) {
  j["validator_cost"] = {{"records", c.records},
                         {"reader_cpu_ns", c.reader_cpu_ns},
                         {"reader_cpu_ns_per_record", c.reader_cpu_ns / c.records},
                         {"stop_cpu_ns", c.stop_cpu_ns},
                         {"match_ns", c.match_ns},
                         {"max_held_requests", c.max_held_requests},
                         {"max_held_block_requests", c.max_held_blocks},
                         {"max_held_bytes", c.max_held_bytes},
                         {"identical_requests", c.identical_requests},
                         {"identical_block_requests", c.identical_blocks}};
}

// The lists of the text report, at most `list_lines` lines each.
std::string lists_text(const Report& r, size_t list_lines) {
  std::string s;
  auto list = [&](const char* title, size_t total, auto&& each) {
    if (total == 0) return;
    s += strfmt("  %s (%zu):\n", title, total);
    each();
  };
  const char* missing_title = "missing";
  if (r.verdict == Verdict::kUnknown)
    missing_title = r.losses.hides_requests() ? "not seen (the capture lost events: maybe served)"
                                              : "not seen (records came late: maybe served)";
  list(missing_title, r.missing_count, [&] {
    for (size_t i = 0; i < r.missing.size() && i < list_lines; i++)
      s += "    " + ref_text(r.missing[i]) + "\n";
  });
  list("altered", r.altered_count, [&] {
    for (size_t i = 0; i < r.altered.size() && i < list_lines; i++) {
      const auto& a = r.altered[i];
      s += strfmt("    %s: %s, seen %s sector %" PRIu64 " +%u\n", ref_text(a.req).c_str(),
                  alter_name(a.kind), std::string(op_name(a.seen_op)).c_str(), a.seen_sector,
                  a.seen_sectors);
    }
  });
  list("dropped by the replay, expected missing", r.expected_missing_count, [&] {
    for (size_t i = 0; i < r.expected_missing.size() && i < list_lines; i++)
      s += "    " + ref_text(r.expected_missing[i]) + "\n";
  });
  list("foreign I/O by process", r.foreign_by_process.size(), [&] {
    for (size_t i = 0; i < r.foreign_by_process.size() && i < list_lines; i++) {
      const auto& p = r.foreign_by_process[i];
      s += strfmt("    %s[%u]: %" PRIu64 " requests, %s\n", p.comm.c_str(), p.pid, p.requests,
                  fmt_bytes(p.bytes).c_str());
    }
  });
  return s;
}

}  // namespace

nlohmann::json to_json(const Report& r) {
  using nlohmann::json;
  json j;
  j["schema"] = schema_tag(kSchemaValidate);
  j["verdict"] = verdict_name(r.verdict);
  j["verdict_reason"] = r.verdict_reason;
  j["completeness_pct"] = r.completeness_pct();
  j["requests"] = {{"replayed", r.replayed},
                   {"submitted", r.submitted},
                   {"done", r.done},
                   {"failed", r.failed},
                   {"dropped", r.dropped},
                   {"not_started", r.not_started},
                   {"covered", r.covered},
                   {"missing", r.missing_count},
                   {"altered", r.altered_count},
                   {"expected_missing", r.expected_missing_count},
                   {"flushes_absorbed", r.flushes_absorbed},
                   {"late", r.late_requests}};
  j["block_requests"] = {{"observed", r.observed},
                         {"matched", r.matched_block},
                         {"foreign", r.foreign_count},
                         {"foreign_bytes", r.foreign_bytes},
                         {"partly_foreign", r.partly_foreign},
                         {"late", r.late_blocks}};
  j["splits"] = {{"requests", r.split_requests}, {"pieces", r.split_pieces}};
  j["merges"] = {{"block_requests", r.merged_block}, {"requests", r.merged_requests}};
  add_lists(j, r);
  j["latency_known"] = r.latency_known;
  if (r.latency_known) {
    j["latency_ns"] = {{"replay", blkrr::to_json_ns(r.replay_latency_us, 1000)},
                       {"block", blkrr::to_json_ns(r.block_latency_us, 1000)},
                       {"overhead", blkrr::to_json_ns(r.overhead_us, 1000)},
                       {"unknown", r.latency_unknown}};
  } else {
    j["latency_ns"] = {{"unknown", r.latency_unknown},
                       {"inconsistent", r.latency_inconsistent},
                       {"reason", r.latency_reason}};
  }
  if (r.options.per_request) {
    json pr = json::array();
    for (const auto& p : r.per_request) pr.push_back({p.id, p.replay_ns, p.block_ns});
    j["per_request"] = {{"columns", {"id", "replay_ns", "block_ns"}}, {"rows", pr}};
  }
  const Losses& l = r.losses;
  j["losses"] = {{"ringbuf_reserve_failed", l.ringbuf_full},
                 {"inflight_map_full", l.inflight_full},
                 {"completion_without_issue", l.completion_without_issue},
                 {"issue_not_seen_records", l.issue_not_seen_records},
                 {"completion_not_seen", l.completion_not_seen},
                 {"completion_not_seen_served", l.completion_not_seen_served},
                 {"records_lost_in_user_space", l.reader_lost},
                 {"programs_skipped", l.programs_skipped},
                 {"programs_skipped_unexplained", l.skips_unexplained()},
                 {"counters_missing", l.counters_missing},
                 {"gaps_between_pieces", l.trace_gaps},
                 {"hides_requests", l.hides_requests()}};
  j["settings"] = {
      {"pre_slack_ns", r.options.pre_slack_ns},
      {"post_slack_ns", r.options.post_slack_ns},
      {"open_window_ns", r.options.open_window_ns},
      {"flush_reaches_device", r.options.flush_reaches_device},
      {"strict_completions", r.options.strict_completions},
      {"validate_window_ns", r.options.window_ns ? json(r.options.window_ns) : json(nullptr)}};
  if (r.options.max_held_bytes)
    j["held_cap"] = {{"max_held_bytes", r.options.max_held_bytes},
                     {"shrinks", r.window_shrinks},
                     {"min_window_ns", r.min_window_ns}};
  if (r.stack) j["stack"] = stack_json(*r.stack);
  j["notes"] = r.notes;
  if (!r.capture_counters.empty()) j["capture_counters"] = r.capture_counters;
  if (!r.capture_features.empty()) j["capture_features"] = r.capture_features;
  if (r.cost.records) add_cost(j, r.cost);
  return j;
}

std::string format_text(const Report& r, size_t list_lines) {
  std::string s;
  std::string verdict = verdict_name(r.verdict);
  for (char& c : verdict) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!r.latency_known) verdict += ", LATENCY UNKNOWN";
  s += strfmt("validate: %s  %.3f%% of %" PRIu64
              " submitted requests served by the block layer (%" PRIu64 " covered)\n",
              verdict.c_str(), r.completeness_pct(), r.submitted, r.covered);
  s += "  " + r.verdict_reason + "\n";
  s += strfmt("  missing %" PRIu64 ", altered %" PRIu64 ", dropped (expected missing) %" PRIu64
              ", not started %" PRIu64 ", failed %" PRIu64 "\n",
              r.missing_count, r.altered_count, r.expected_missing_count, r.not_started, r.failed);
  s += strfmt("  block layer: %" PRIu64 " requests, %" PRIu64 " foreign (%s), %" PRIu64
              " partly foreign\n",
              r.observed, r.foreign_count, fmt_bytes(r.foreign_bytes).c_str(), r.partly_foreign);
  if (r.stack) s += stack_text(*r.stack);
  s += strfmt("  splits: %" PRIu64 " requests in %" PRIu64 " pieces; merges: %" PRIu64
              " block requests serving %" PRIu64 " requests\n",
              r.split_requests, r.split_pieces, r.merged_block, r.merged_requests);
  if (r.options.window_ns)
    s += strfmt("  window %s: %" PRIu64 " requests and %" PRIu64
                " block-layer requests came after it (late, not matched)\n",
                fmt_duration_ns(static_cast<double>(r.options.window_ns)).c_str(), r.late_requests,
                r.late_blocks);
  if (r.window_shrinks)
    s += strfmt("  held-record cap of %.1f MB reached %" PRIu64
                " times: the window shrank to as little as %s (records later than that are "
                "late: the loss of exactness)\n",
                static_cast<double>(r.options.max_held_bytes) / 1e6, r.window_shrinks,
                fmt_duration_ns(static_cast<double>(r.min_window_ns)).c_str());
  if (r.flushes_absorbed)
    s += strfmt("  flushes ended by the kernel (no volatile write cache): %" PRIu64 "\n",
                r.flushes_absorbed);
  if (r.block_latency_us.count) {
    s += strfmt("  latency us     median      p99    p99.9      max\n");
    auto row = [&](const char* n, const Summary& x) {
      s += strfmt("    %-9s %9.1f %8.1f %8.1f %8.1f\n", n, x.p50, x.p99, x.p999, x.max);
    };
    row("replay", r.replay_latency_us);
    row("block", r.block_latency_us);
    row("overhead", r.overhead_us);
    if (!r.replay_latency_us.exact)
      s += strfmt("    (percentiles from a histogram, within %.2f %% relative error)\n",
                  r.replay_latency_us.rel_error * 100);
  }
  if (!r.latency_known) s += "  latency unknown: " + r.latency_reason + "\n";
  if (r.latency_unknown)
    s += strfmt("  latency unknown (block-layer completion or issue not captured): %" PRIu64
                " requests\n",
                r.latency_unknown);
  for (const auto& p : r.own_probe)
    s +=
        strfmt("  the replayer's own probe before its first request (not foreign): %s[%u]: %" PRIu64
               " requests, %s\n",
               p.comm.c_str(), p.pid, p.requests, fmt_bytes(p.bytes).c_str());
  const Losses& l = r.losses;
  s += strfmt(
      "  capture losses: ringbuf %" PRIu64 ", inflight-map %" PRIu64 ", issue not seen %" PRIu64
      ", completion not seen %" PRIu64 " (%" PRIu64 " of them served replayed requests)%s%s\n",
      l.ringbuf_full, l.inflight_full, l.completion_without_issue + l.issue_not_seen_records,
      l.completion_not_seen, l.completion_not_seen_served,
      l.counters_missing ? ", loss counters missing" : "",
      l.trace_gaps ? strfmt(", %" PRIu64 " gaps between rotated pieces", l.trace_gaps).c_str()
                   : "");
  if (l.programs_skipped)
    s += strfmt("  programs skipped by the kernel: %" PRIu64 " (%" PRIu64
                " left no trace: a request may be missing from the capture)\n",
                l.programs_skipped, l.skips_unexplained());
  s += lists_text(r, list_lines);
  for (const auto& n : r.notes) s += "  note: " + n + "\n";
  return s;
}

}  // namespace blkrr::validate
