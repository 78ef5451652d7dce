#include "report/html.h"
#include "core/version.h"
#include "core/file_io.h"
#include "core/io_guard.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/stats.h"
#include "report/fidelity.h"
#include "report/provenance.h"
#include "report/repeat_report.h"
#include "report/summary.h"
#include "report/time_axis.h"

namespace blkrr::report {

std::string base64(const std::string& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (static_cast<uint8_t>(in[i]) << 16) | (static_cast<uint8_t>(in[i + 1]) << 8) |
                 static_cast<uint8_t>(in[i + 2]);
    out += k[v >> 18];
    out += k[(v >> 12) & 63];
    out += k[(v >> 6) & 63];
    out += k[v & 63];
  }
  if (i < in.size()) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<uint8_t>(in[i + 1]) << 8;
    out += k[v >> 18];
    out += k[(v >> 12) & 63];
    out += i + 1 < in.size() ? k[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

namespace {

const char* kStyle = R"(<style>
body{font-family:sans-serif;margin:1em auto;padding:0 1em;max-width:1300px;line-height:1.35}
h1{margin:.2em 0}
h2{border-bottom:2px solid #ccd;padding-bottom:.2em;margin-top:1.6em}
nav{position:sticky;top:0;background:#fff;border-bottom:1px solid #ccd;padding:.4em 0;z-index:1}
nav a{margin-right:1em;white-space:nowrap}
.block{overflow-x:auto}
table{border-collapse:collapse;margin:1em 0;font-size:90%}
caption{text-align:left;font-weight:bold;padding:.3em 0}
td,th{border:1px solid #bbb;padding:.2em .5em;text-align:right}
td:first-child,th:first-child{text-align:left}
.warn{color:#b00;font-weight:bold}
.fake{color:#fff;background:#d00;padding:.5em;font-size:140%;font-weight:bold}
figure{margin:1.2em 0}
img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:85%;color:#444}
.summary{background:#f4f6fa;border:1px solid #ccd;padding:.3em 1em;margin-bottom:1em}
.summary li{margin:.2em 0}
.cmd{color:#666;font-size:85%;overflow-wrap:anywhere}
</style>
)";

// The page's groups, in order, with their headings and anchors.
struct Group {
  Question question;
  const char* id;
  const char* nav;
  const char* heading;
};
const Group kGroups[] = {
    {Question::kHowMuch, "how-much", "How much",
     "How much: request rates, throughput, sizes, where on the disk"},
    {Question::kHowFast, "how-fast", "How fast",
     "How fast: latency, achieved throughput, requests in flight"},
    {Question::kHowLate, "how-late", "How late", "How late: issue times against the set points"},
    {Question::kWho, "who", "Who", "Who: processes, threads and their dependencies"},
};

// The question a plot answers: its section's, except for delays and the
// comparisons of the fidelity section.
Question plot_question(const std::string& name, Question section) {
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  if (starts("delay-") || name == "latency-delay" || name == "cmp-issue-error")
    return Question::kHowLate;
  if (name == "cmp-iops") return Question::kHowMuch;
  if (starts("cmp-")) return Question::kHowFast;
  return section;
}

// A plot, its caption and links to the CSV files it draws and its script.
std::string figure(const Context& ctx, const std::string& name) {
  const PlotSpec* spec = nullptr;
  for (const auto& p : ctx.plots())
    if (p.name == name) spec = &p;
  std::string title = spec ? spec->title : name;
  std::string h = "<figure id=\"plot-" + html_escape(name) + "\">";
  auto png = read_file(ctx.dir() + "/plots/" + name + ".png");
  if (png && !png->empty())
    h += "<img alt=\"" + html_escape(title) + "\" src=\"data:image/png;base64," + base64(*png) +
         "\">";
  else
    h += "<p class=\"warn\">(plot not drawn)</p>";
  h += "<figcaption>" + html_escape(title) + "<br>data: ";
  std::vector<std::string> files;
  if (spec)
    for (const auto& s : spec->series)
      if (std::find(files.begin(), files.end(), s.file) == files.end()) files.push_back(s.file);
  for (const auto& f : files) h += "<a href=\"" + html_escape(f) + "\">" + html_escape(f) + "</a> ";
  return h + "&middot; script: <a href=\"plots/" + html_escape(name) + ".gp\">plots/" +
         html_escape(name) + ".gp</a></figcaption></figure>\n";
}

// The tables, then the plots, of every section that answer `q`.
std::string group_body(const Context& ctx, Question q) {
  std::string h;
  for (const Section& s : ctx.sections())
    for (const Block& b : s.blocks)
      if ((b.question == Question::kSection ? s.question : b.question) == q)
        h += "<div class=\"block\">" + b.html + "</div>\n";
  for (const Section& s : ctx.sections())
    for (const auto& name : s.plots)
      if (plot_question(name, s.question) == q) h += figure(ctx, name);
  return h;
}

}  // namespace

std::string method_note(const Context& ctx, const std::vector<const Dataset*>& inputs) {
  uint64_t n = 0;
  bool spilled = false, histogram = false;
  for (const Dataset* d : inputs) {
    n += d->samples.size();
    spilled |= d->samples.spilled();
    if (const Timing* t = ctx.timing(*d))
      for (const auto* dist : {&t->latency_ms[0], &t->delay_ms[0]}) histogram |= !dist->exact();
  }
  std::string s =
      "How this report was computed: every analysis reads the " + std::to_string(n) +
      " requests in passes over a store of 40-byte records (" +
      (spilled ? "past " + fmt_bytes(static_cast<double>(SampleStore::memory_budget())) +
                     " in a temporary file"
               : "in memory") +
      "); working sets, seek distances, requests in flight, stalls, reordering and KS distances "
      "read copies sorted by sector, time or latency (an external merge sort on disk for large "
      "inputs): exact, no sampling; memory depends on the plots' bins, not on the requests. "
      "Latency and delay percentiles are ";
  s += histogram ? "from log-bucketed histograms (more than 1 M samples), within " +
                       fmt_significant(100 * LogHistogram::kRelError) + " % relative error."
                 : "exact.";
  return s;
}

Result<std::string> executive_summary(const Context& ctx, const std::vector<const Dataset*>& inputs,
                                      bool compare, nlohmann::json& js) {
  std::vector<Facts> facts;
  facts.reserve(inputs.size());
  for (const Dataset* d : inputs) facts.push_back(facts_of(*d, ctx.timing(*d)));
  std::string h =
      "<section class=\"summary\">\n<h2>Summary</h2>\n<p><b>What was measured</b></p><ul>\n";
  for (const Dataset* d : inputs) {
    std::string c = context_with_settings(provenance_of(*d));
    h += "<li>" + html_escape(c) + "</li>\n";
    js["measured"].push_back(c);
  }
  h += "</ul>\n<p><b>The numbers</b> (throughput; latency p50/p99; issue error p99)</p><ul>\n";
  for (const Facts& f : facts) {
    h += "<li>" + html_escape(headline(f)) + "</li>\n";
    js["numbers"].push_back(headline(f));
  }
  h += "</ul>\n";
  std::vector<Finding> all;
  if (compare && facts.size() > 1) {
    auto item = [&h](const Finding& x) {
      h += std::string("<li") + (x.warn ? " class=\"warn\"" : "") + ">" + html_escape(x.text) +
           "</li>\n";
    };
    h += "<p><b>Replay fidelity</b> (was the load reproduced: requests, sizes, timing, order)</p>"
         "<ul>\n";
    for (size_t i = 1; i < facts.size(); ++i)
      for (const auto& x : fidelity_findings(fidelity_facts(facts[0], *inputs[i], facts[i]))) {
        item(x);
        js["fidelity"].push_back(x.text);
      }
    const std::vector<const Dataset*> replays(inputs.begin() + 1, inputs.end());
    const std::string best = best_timing_sentence(replay_spreads(ctx, *inputs[0], replays));
    if (!best.empty()) {
      item({false, best});
      js["best_timing"] = best;
    }
    h += "</ul>\n<p><b>How the devices answered</b> (latency, like with like: no fidelity "
         "criterion)</p><ul>\n";
    for (size_t i = 1; i < facts.size(); ++i) {
      Finding x = device_finding(device_facts(*inputs[0], facts[0], *inputs[i], facts[i]));
      item(x);
      js["devices"].push_back(x.text);
    }
    h += "</ul>\n";
  }
  h += "<p><b>What looks wrong</b></p><ul>\n";
  for (const Facts& f : facts)
    for (const auto& x : findings(f)) {
      h += std::string("<li") + (x.warn ? " class=\"warn\"" : "") + ">" + html_escape(x.text) +
           "</li>\n";
      js["findings"].push_back({{"warn", x.warn}, {"text", x.text}});
    }
  return h + "</ul>\n</section>\n";
}

Status write_html(const Context& ctx, const std::vector<const Dataset*>& inputs,
                  const RenderResult& render, const std::string& command_line,
                  const std::string& summary) {
  std::string labels;
  for (const Dataset* d : inputs) labels += (labels.empty() ? "" : ", ") + d->label;
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>blkrr report: " +
      html_escape(labels) + "</title>\n";
  h += kStyle;
  h += "</head><body>\n<h1>blkrr report</h1>\n<p class=\"cmd\">";
  for (const Dataset* d : inputs)
    h += html_escape(d->label) + ": " + html_escape(d->path) + " (" + kind_name(d->kind) + ", " +
         std::to_string(d->samples.size()) + " requests)<br>";
  h += "</p>\n";
  for (const Dataset* d : inputs)
    if (d->fake)
      h +=
          "<p class=\"fake\">FAKE RESULT: " + html_escape(d->label) +
          " is a dry run or a replay without O_DIRECT. Its timings do not describe a device.</p>\n";
  if (!render.message.empty()) h += note(render.message, true);
  std::string fidelity = group_body(ctx, Question::kFidelity);
  if (!fidelity.empty())
    h += "<section id=\"fidelity\"><h2 id=\"fidelity-tables\">Replay fidelity</h2>\n" + fidelity +
         "</section>\n";
  h += summary;
  std::string nav = "<nav>", body;
  for (const Group& g : kGroups) {
    std::string b = group_body(ctx, g.question);
    if (b.empty()) continue;
    nav += std::string("<a href=\"#") + g.id + "\">" + g.nav + "</a>\n";
    body += std::string("<section><h2 id=\"") + g.id + "\">" + g.heading + "</h2>\n" + b +
            "</section>\n";
  }
  h += nav + "<a href=\"#method\">How it was made</a></nav>\n" + body;
  h +=
      "<section><h2 id=\"method\">How this report was made</h2>\n" + note(method_note(ctx, inputs));
  h += std::string("<p class=\"cmd\">blkrr ") + version() +
       "; report made by: " + html_escape(command_line) + "</p>\n";
  h += "<p>Data of every plot: <a href=\"data/\">data/</a>*.csv; gnuplot scripts: "
       "<a href=\"plots/\">plots/</a>*.gp (<code>cd DIR &amp;&amp; gnuplot plots/NAME.gp</code>); "
       "summary: <a href=\"report.json\">report.json</a>.</p>\n</section>\n";
  h += "</body></html>\n";
  std::string path = ctx.dir() + "/index.html";
  return write_file_atomic(path, h);
}

}  // namespace blkrr::report
