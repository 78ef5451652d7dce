// Output of the fleet summary: JSON, a text table and a small HTML page.
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/io_guard.h"
#include "report/fleet.h"
#include "core/json_doc.h"
#include "core/units.h"

namespace blkrr::report {

namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json spread_json(const std::optional<StartSpread>& s) {
  if (!s) return nullptr;
  return {{"hosts", s->hosts},
          {"requested_unix", opt(s->requested)},
          {"earliest_unix", s->earliest},
          {"latest_unix", s->latest},
          {"spread_ns", std::llround(s->spread_ms * 1e6)},
          {"worst_offset_ns", s->worst_offset_ms
                                  ? nlohmann::json(std::llround(*s->worst_offset_ms * 1e6))
                                  : nlohmann::json()}};
}

nlohmann::json row_json(const HostRow& r) {
  nlohmann::json j = {{"label", r.label},
                      {"kind", r.kind},
                      {"requests", r.requests},
                      {"bytes", r.bytes},
                      {"span_s", r.span_s},
                      {"iops", r.iops},
                      {"mib_per_s", r.mib_per_s},
                      {"latency_ns", to_json_ns(r.latency_us, 1e3)},
                      {"issue_error_ns", to_json_ns(r.delay_us, 1e3)}};
  const FleetMeta& m = r.meta;
  j["host"] = m.host;
  j["requested_start_unix"] = opt(m.requested_start);
  j["start_unix"] = opt(m.start);
  j["first_issue_unix"] = opt(m.first_issue);
  j["verdict"] = m.verdict.empty() ? nlohmann::json() : nlohmann::json(m.verdict);
  j["completeness_pct"] = opt(m.completeness_pct);
  return j;
}

std::string pcts(const Summary& s) {
  if (s.count == 0) return "-";
  return strfmt("%.0f/%.0f/%.0f", s.p50, s.p99, s.max);
}

std::string offset_ms(const FleetMeta& m) {
  if (!m.start) return "-";
  if (!m.requested_start) return "no --start-at";
  std::string s = strfmt("%+.3f", (*m.start - *m.requested_start) * 1e3);
  if (m.first_issue) s += strfmt(" (1st %+.3f)", (*m.first_issue - *m.requested_start) * 1e3);
  return s;
}

std::string verdict_text(const FleetMeta& m) {
  if (m.verdict.empty()) return "-";
  return m.completeness_pct ? strfmt("%s %.1f%%", m.verdict.c_str(), *m.completeness_pct)
                            : m.verdict;
}

std::string row_text(const HostRow& r) {
  return strfmt("%-14s %9llu %9.1f %7.2f %9.1f %8.2f %18s %18s %-17s %s\n", r.label.c_str(),
                static_cast<unsigned long long>(r.requests),
                static_cast<double>(r.bytes) / 1048576.0, r.span_s, r.iops, r.mib_per_s,
                pcts(r.latency_us).c_str(), pcts(r.delay_us).c_str(), verdict_text(r.meta).c_str(),
                offset_ms(r.meta).c_str());
}

std::string spread_text(const char* what, const std::optional<StartSpread>& s) {
  if (!s) return "";
  std::string t = strfmt("%s: spread %.3f ms across %zu hosts", what, s->spread_ms, s->hosts);
  if (s->requested) t += strfmt(", requested %.3f", *s->requested);
  if (s->worst_offset_ms) t += strfmt(", worst offset from requested %.3f ms", *s->worst_offset_ms);
  return t + "\n";
}

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

}  // namespace

nlohmann::json to_json(const FleetSummary& s) {
  nlohmann::json j;
  j["schema"] = schema_tag(kSchemaFleet);
  j["tool"] = "blkrr report --fleet";
  j["groups"] = nlohmann::json::array();
  for (const auto& g : s.groups) {
    nlohmann::json gj = {{"kind", g.kind},
                         {"aggregate", row_json(g.aggregate)},
                         {"start", spread_json(g.start)},
                         {"first_issue", spread_json(g.first_issue)},
                         {"verdicts", g.verdicts}};
    for (const auto& h : g.hosts) gj["hosts"].push_back(row_json(h));
    j["groups"].push_back(gj);
  }
  return j;
}

std::string format_text(const FleetSummary& s) {
  std::string t = "blkrr fleet report\n";
  for (const auto& g : s.groups) {
    t += strfmt("\n%s (%zu hosts)\n",
                g.kind == "replay" ? "replay results" : (g.kind + "s").c_str(), g.hosts.size());
    t += strfmt("%-14s %9s %9s %7s %9s %8s %18s %18s %-17s %s\n", "HOST", "REQUESTS", "MiB",
                "SPAN(s)", "IOPS", "MiB/s", "LAT p50/p99/max us", "ISSUE-ERR us", "VERDICT",
                "START-REQUESTED ms");
    for (const auto& h : g.hosts) t += row_text(h);
    t += row_text(g.aggregate);
    t += spread_text("start instants achieved", g.start);
    t += spread_text("first requests issued", g.first_issue);
    if (!g.verdicts.empty()) {
      t += "verdicts:";
      for (const auto& [v, n] : g.verdicts) t += strfmt(" %s %d", v.c_str(), n);
      t += "\n";
    }
  }
  return t;
}

Status write_fleet_files(const FleetSummary& s, const std::string& dir) {
  BLKRR_TRY(write_file_atomic(dir + "/fleet.json", to_json(s).dump(1) + "\n"));
  const std::string text = format_text(s);
  BLKRR_TRY(write_file_atomic(dir + "/fleet.txt", text));
  std::string html =
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>blkrr fleet report</title>"
      "</head><body><h1>blkrr fleet report</h1><pre>" +
      html_escape(text) +
      "</pre><p>Per-host series in the same plots, statistics per input: "
      "<a href=\"index.html\">index.html</a>. Data: <a href=\"fleet.json\">fleet.json</a>.</p>"
      "</body></html>\n";
  return write_file_atomic(dir + "/fleet.html", html);
}

}  // namespace blkrr::report
