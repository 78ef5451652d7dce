#include "report/fleet.h"
#include "report/time_axis.h"

#include "core/distribution.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/trace_format.h"

namespace blkrr::report {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_fleet_file(const std::string& name) {
  return ends_with(name, ".blkrr") || ends_with(name, ".replay.gz");
}

FleetInput input_for(const std::string& path) {
  FleetInput in{path, ""};
  if (ends_with(path, ".replay.gz")) {
    std::string j = path.substr(0, path.size() - std::string(".replay.gz").size()) + ".json";
    if (fs::exists(j)) in.json_path = j;
  }
  return in;
}

std::optional<double> number_at(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

Result<nlohmann::json> read_json(const std::string& path) {
  std::ifstream f(path);
  if (!f)
    return Error(ErrorKind::kNotFound, "cannot open " + path + " (the replay's --json summary)");
  auto j = nlohmann::json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return Error(ErrorKind::kBadInput,
                 path + " is not a JSON object; give the file `blkrr replay --json` wrote");
  return j;
}

}  // namespace

Result<std::vector<FleetInput>> find_fleet_inputs(const std::vector<std::string>& args) {
  std::vector<FleetInput> out;
  for (const auto& a : args) {
    std::error_code ec;
    if (fs::is_directory(a, ec)) {
      for (auto it = fs::recursive_directory_iterator(a, ec); !ec && it != fs::end(it);
           it.increment(ec))
        if (it->is_regular_file() && is_fleet_file(it->path().filename().string()))
          out.push_back(input_for(it->path().string()));
      if (ec) return Error::system("cannot read directory " + a, ec.value());
    } else if (fs::is_regular_file(a, ec)) {
      out.push_back(input_for(a));
    } else {
      return Error(ErrorKind::kUsage, "--fleet: " + a + " is neither a file nor a directory");
    }
  }
  std::sort(out.begin(), out.end(),
            [](const FleetInput& x, const FleetInput& y) { return x.path < y.path; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const FleetInput& x, const FleetInput& y) { return x.path == y.path; }),
            out.end());
  if (out.empty())
    return Error(ErrorKind::kUsage,
                 "--fleet: no traces (*.blkrr) or replay results (*.replay.gz) in the inputs");
  return out;
}

Result<FleetMeta> read_fleet_meta(const FleetInput& in, const Dataset& d) {
  FleetMeta m;
  if (d.kind == DataKind::kTrace) {
    auto rd = TraceReader::open(in.path);
    if (!rd) return rd.error();
    const TraceHeader& h = rd->header();
    m.host = h.host;
    if (h.real_anchor_ns) m.start = static_cast<double>(h.real_anchor_ns) / 1e9;
    auto it = h.settings.find("start_at");
    if (it != h.settings.end()) {
      char* end = nullptr;
      double v = std::strtod(it->second.c_str(), &end);
      if (end && *end == '\0' && v > 0) m.requested_start = v;
    }
    return m;
  }
  if (in.json_path.empty()) return m;
  auto j = read_json(in.json_path);
  if (!j) return j.error();
  m.start = number_at(*j, "start_unix");
  if (j->contains("settings")) m.requested_start = number_at((*j)["settings"], "start_at");
  if (j->contains("validation") && (*j)["validation"].is_object()) {
    const auto& v = (*j)["validation"];
    m.verdict = v.value("verdict", "");
    m.completeness_pct = number_at(v, "completeness_pct");
  }
  if (m.start && !d.samples.empty()) {
    // Set points are rebased to the first request, which a whole-load replay
    // makes due at its start instant: its actual issue is the earliest one.
    m.first_issue = *m.start + static_cast<double>(d.samples.bounds().issue_min) / 1e9;
  }
  return m;
}

namespace {

// Latencies and issue errors in microseconds.
void add_times(const Dataset& d, Distribution& lat, Distribution& delay) {
  d.samples.for_each([&](const Sample& s) {
    if (s.has_latency()) lat.add(static_cast<double>(s.latency_ns) / 1e3);
    if (s.has_delay()) delay.add(static_cast<double>(s.delay_ns) / 1e3);
  });
}

}  // namespace

HostRow host_row(const Dataset& d, const FleetMeta& m) {
  HostRow r;
  r.label = d.label;
  r.kind = kind_name(d.kind);
  r.meta = m;
  Distribution lat, delay;
  add_times(d, lat, delay);
  const SampleBounds& b = d.samples.bounds();
  r.requests = b.count;
  r.bytes = b.read_bytes + b.write_bytes;
  uint64_t first = b.issue_min, last = b.complete_max;
  if (r.requests && last > first) {
    r.span_s = static_cast<double>(last - first) / 1e9;
    r.iops = static_cast<double>(r.requests) / r.span_s;
    r.mib_per_s = static_cast<double>(r.bytes) / kBytesPerMiB / r.span_s;
  }
  r.latency_us = lat.summary();
  r.delay_us = delay.summary();
  return r;
}

std::optional<StartSpread> start_spread(
    const std::vector<std::pair<std::optional<double>, double>>& starts) {
  if (starts.empty()) return std::nullopt;
  StartSpread s;
  s.hosts = starts.size();
  s.earliest = s.latest = starts.front().second;
  bool same = starts.front().first.has_value();
  for (const auto& [req, got] : starts) {
    s.earliest = std::min(s.earliest, got);
    s.latest = std::max(s.latest, got);
    if (!req || !starts.front().first || *req != *starts.front().first) same = false;
    if (req) {
      double off = std::fabs(got - *req) * 1e3;
      s.worst_offset_ms = std::max(s.worst_offset_ms.value_or(0), off);
    }
  }
  if (same) s.requested = starts.front().first;
  s.spread_ms = (s.latest - s.earliest) * 1e3;
  return s;
}

namespace {

HostRow aggregate_row(const std::string& kind, const std::vector<const Dataset*>& ds,
                      const std::vector<HostRow>& rows) {
  HostRow a;
  a.label = "all " + kind + "s";
  a.kind = kind;
  Distribution lat, delay;
  for (const Dataset* d : ds) add_times(*d, lat, delay);
  for (const auto& r : rows) {
    a.requests += r.requests;
    a.bytes += r.bytes;
    a.iops += r.iops;  // in step: the hosts' rates add up
    a.mib_per_s += r.mib_per_s;
    a.span_s = std::max(a.span_s, r.span_s);
  }
  a.latency_us = lat.summary();
  a.delay_us = delay.summary();
  return a;
}

FleetGroup make_group(const std::string& kind, const std::vector<Dataset>& data,
                      const std::vector<FleetMeta>& meta) {
  FleetGroup g;
  g.kind = kind;
  std::vector<const Dataset*> ds;
  std::vector<std::pair<std::optional<double>, double>> starts, firsts;
  for (size_t i = 0; i < data.size(); ++i) {
    if (kind_name(data[i].kind) != kind) continue;
    ds.push_back(&data[i]);
    g.hosts.push_back(host_row(data[i], meta[i]));
    const FleetMeta& m = meta[i];
    if (m.start) starts.emplace_back(m.requested_start, *m.start);
    if (m.first_issue) firsts.emplace_back(m.requested_start, *m.first_issue);
    if (kind == "replay") g.verdicts[m.verdict.empty() ? "not validated" : m.verdict]++;
  }
  g.aggregate = aggregate_row(kind, ds, g.hosts);
  g.start = start_spread(starts);
  g.first_issue = start_spread(firsts);
  return g;
}

}  // namespace

FleetSummary summarize_fleet(const std::vector<Dataset>& data, const std::vector<FleetMeta>& meta) {
  FleetSummary s;
  for (const char* kind : {"trace", "replay", "load"}) {
    FleetGroup g = make_group(kind, data, meta);
    if (!g.hosts.empty()) s.groups.push_back(std::move(g));
  }
  return s;
}

}  // namespace blkrr::report
