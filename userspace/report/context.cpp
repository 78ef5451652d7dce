#include "report/context.h"

#include <algorithm>
#include <cstdio>

#include "report/provenance.h"

namespace blkrr::report {

Result<CsvFile> Context::csv(const std::string& name, const std::vector<std::string>& columns) {
  json_["data_files"].push_back(data_path(name));
  return CsvFile::create(dir_ + "/" + data_path(name), columns);
}

Section& Context::section(const std::string& title, Question q) {
  for (auto& s : sections_)
    if (s.title == title) return s;
  sections_.push_back({title, q, {}, {}});
  return sections_.back();
}

void Context::add_plot(Section& s, PlotSpec p) {
  if (p.series.empty()) return;
  s.plots.push_back(p.name);
  plots_.push_back(std::move(p));
}

std::string fmt_short(double v) {
  return fmt_significant(v);
}

std::string html_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string table(const std::string& caption, const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows) {
  std::string h = "<table>\n<caption>" + html_escape(caption) + "</caption>\n<tr>";
  for (const auto& c : header) h += "<th>" + html_escape(c) + "</th>";
  h += "</tr>\n";
  for (const auto& r : rows) {
    h += "<tr>";
    for (const auto& c : r) h += "<td>" + html_escape(c) + "</td>";
    h += "</tr>\n";
  }
  return h + "</table>\n";
}

std::string summary_table(const std::string& caption, const std::string& unit,
                          const std::vector<std::pair<std::string, Summary>>& rows) {
  std::vector<std::vector<std::string>> body;
  body.reserve(rows.size());
  for (const auto& [name, s] : rows) {
    uint64_t n = s.count;
    auto q = [n](double v, double p) { return fmt_percentile(v, n, p); };
    if (n == 0) {
      body.push_back({name, "0", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"});
      continue;
    }
    body.push_back({name, std::to_string(n), fmt_short(s.min), q(s.p50, 50), fmt_short(s.mean),
                    q(s.p75, 75), q(s.p90, 90), q(s.p95, 95), q(s.p99, 99), q(s.p999, 99.9),
                    fmt_short(s.max), n > 1 ? fmt_short(s.stddev) : "-"});
  }
  return table(
      caption + " [" + unit +
          "]; a percentile is shown only when count supports it (p99: 100 or more, "
          "p99.9: 1000 or more), else -",
      {"", "count", "min", "median", "mean", "p75", "p90", "p95", "p99", "p99.9", "max", "stddev"},
      body);
}

std::string note(const std::string& text, bool warn) {
  return std::string("<p class=\"") + (warn ? "warn" : "note") + "\">" + html_escape(text) +
         "</p>\n";
}

void mark_plot(PlotSpec& p, const Dataset& d) {
  if (d.fake &&
      std::find(p.fake_labels.begin(), p.fake_labels.end(), d.label) == p.fake_labels.end())
    p.fake_labels.push_back(d.label);
  if (std::find(p.labels.begin(), p.labels.end(), d.label) != p.labels.end()) return;
  p.labels.push_back(d.label);
  std::string c = context_with_settings(provenance_of(d));
  if (d.label != label_from_path(d.path)) c = d.label + " = " + c;
  p.context.insert(p.context.begin() + static_cast<std::ptrdiff_t>(p.labels.size() - 1), c);
}

}  // namespace blkrr::report
