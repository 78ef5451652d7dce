#include "report/provenance.h"

#include <nlohmann/json.hpp>

#include "core/stats.h"
#include "report/csv.h"
#include "report/time_axis.h"

namespace blkrr::report {

namespace {

bool starts_with(const std::string& s, std::string_view p) {
  return s.compare(0, p.size(), p) == 0;
}

nlohmann::json json_after(const std::string& line) {
  size_t b = line.find('{');
  if (b == std::string::npos) return nlohmann::json::object();
  auto j = nlohmann::json::parse(line.begin() + static_cast<std::ptrdiff_t>(b), line.end(), nullptr,
                                 false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string jstr(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<double> jnum(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// "speedup 2x: ..." and the other replay settings that change the meaning.
void replay_settings(const nlohmann::json& set, std::optional<double> wrap, Provenance& p) {
  double speedup = jnum(set, "speedup").value_or(1);
  if (speedup != 1)
    p.settings.push_back("speedup " + fmt_num(speedup) + "x: the load was issued " +
                         fmt_num(speedup) + " times as fast as recorded (times are replay times)");
  std::string timing = jstr(set, "timing");
  if (timing == "fullspeed")
    p.settings.push_back(
        "timing fullspeed: requests were issued as fast as the device took them, "
        "not at their recorded times");
  std::string mapping = jstr(set, "mapping");
  if (mapping == "scale")
    p.settings.push_back("scale mapping: positions were scaled to fit the device");
  else if (wrap && *wrap > 1)
    p.settings.push_back("wraparound factor " + fmt_significant(*wrap) + ": the load spans " +
                         fmt_significant(*wrap) +
                         " times the device size; positions past the end were wrapped around "
                         "(modulo the size), so seek distances are not the original ones");
  std::string order = jstr(set, "order"), engine = jstr(set, "engine");
  if (!order.empty() || !engine.empty()) {
    std::string eng = "order " + (order.empty() ? std::string("?") : order) + ", engine " +
                      (engine.empty() ? std::string("?") : engine);
    if (auto qd = jnum(set, "queue_depth")) eng += ", queue depth " + fmt_num(*qd);
    p.settings.push_back(eng);
  }
  if (auto st = jnum(set, "start_s"); st && *st > 0)
    p.settings.push_back("window from " + fmt_elapsed(*st) + " of the load");
}

void from_summary(const nlohmann::json& j, Provenance& p, nlohmann::json& settings,
                  std::optional<double>& wrap) {
  if (auto dev = j.find("device"); dev != j.end() && dev->is_object()) {
    if (p.device.empty()) p.device = jstr(*dev, "path");
    p.device_bytes = jnum(*dev, "size_bytes");
  }
  if (auto m = j.find("mapping"); m != j.end() && m->is_object())
    wrap = jnum(*m, "wraparound_factor");
  if (auto l = j.find("load"); l != j.end() && l->is_object()) p.original = jstr(*l, "path");
  if (auto s = j.find("settings"); s != j.end() && s->is_object() && settings.empty())
    settings = *s;
  if (auto t = jnum(j, "start_unix"); t && *t > 0) p.start_unix = t;
  if (p.host.empty()) p.host = jstr(j, "host");
  if (p.kernel.empty()) p.kernel = jstr(j, "kernel");
}

}  // namespace

Provenance provenance_of(const Dataset& d) {
  Provenance p;
  p.input = d.path;
  p.kind = kind_name(d.kind);
  nlohmann::json settings = nlohmann::json::object();
  std::optional<double> wrap = d.wraparound_factor;
  for (const auto& l : d.info) {
    if (starts_with(l, "INFO: trace {")) {
      auto j = json_after(l);
      p.host = jstr(j, "host");
      p.kernel = jstr(j, "kernel");
      p.tool_version = jstr(j, "version");
      p.device = jstr(j, "device");
      p.device_bytes = jnum(j, "device_bytes");
      p.start_unix = jnum(j, "start_unix");
    } else if (starts_with(l, "INFO: settings {")) {
      settings = json_after(l);
    } else if (starts_with(l, "SUMMARY: {")) {
      from_summary(json_after(l), p, settings, wrap);
    } else if (starts_with(l, "INFO: host ")) {  // "INFO: host NAME kernel RELEASE"
      auto rest = l.substr(11);
      auto k = rest.find(" kernel ");
      p.host = rest.substr(0, k);
      if (k != std::string::npos) p.kernel = rest.substr(k + 8);
    } else if (starts_with(l, "blkrr ") && l.find(" replay of ") != std::string::npos) {
      auto sp = l.find(' ', 6);
      p.tool_version = l.substr(6, sp - 6);
    }
  }
  if (d.kind == DataKind::kReplay) replay_settings(settings, wrap, p);
  if (d.fake)
    p.settings.push_back("FAKE RESULT: dry run or no O_DIRECT, timings are not the device's");
  return p;
}

std::string context_line(const Provenance& p) {
  std::string s = p.input + ": " + p.kind;
  if (!p.original.empty()) s += " of " + p.original;
  bool known = !p.host.empty() || !p.device.empty() || p.start_unix;
  if (!p.device.empty()) {
    s += " on " + p.device;
    if (p.device_bytes) s += " (" + fmt_bytes(*p.device_bytes) + ")";
  }
  if (!p.host.empty()) s += ", host " + p.host;
  if (!p.kernel.empty()) s += ", kernel " + p.kernel;
  if (p.start_unix)
    s +=
        ", " + std::string(p.kind == "replay" ? "replayed " : "captured ") + fmt_utc(*p.start_unix);
  if (!p.tool_version.empty()) s += ", blkrr " + p.tool_version;
  if (!known)
    s += " (this format records no host, kernel, device or capture time: unknown)";
  else if (p.host.empty())
    s += ", host and kernel not recorded";
  return s;
}

std::string context_with_settings(const Provenance& p) {
  std::string s = context_line(p);
  for (const auto& x : p.settings) s += "; " + x;
  return s;
}

std::string trace_info_line(const std::string& host, const std::string& kernel,
                            const std::string& version, const std::string& device,
                            double device_bytes, double start_unix) {
  nlohmann::json j = {{"host", host},
                      {"kernel", kernel},
                      {"version", version},
                      {"device", device},
                      {"device_bytes", device_bytes}};
  if (start_unix > 0) j["start_unix"] = start_unix;
  return "INFO: trace " + j.dump();
}

}  // namespace blkrr::report
