#include "report/html.h"
#include "core/io_guard.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

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

bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::ostringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return !out.empty();
}

const char* kStyle = R"(<style>
body{font-family:sans-serif;margin:1.5em;max-width:1300px}
table{border-collapse:collapse;margin:1em 0;font-size:90%}
caption{text-align:left;font-weight:bold;padding:.3em 0}
td,th{border:1px solid #bbb;padding:.2em .5em;text-align:right}
td:first-child,th:first-child{text-align:left}
.warn{color:#b00;font-weight:bold}
.fake{color:#fff;background:#d00;padding:.5em;font-size:140%;font-weight:bold}
figure{margin:1em 0}
img{max-width:100%;border:1px solid #ddd}
figcaption{font-size:85%;color:#444}
</style>
)";

}  // namespace

Status write_html(const Context& ctx, const std::vector<const Dataset*>& inputs,
                  const RenderResult& render, const std::string& command_line) {
  std::string h =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>blkrr report</title>\n";
  h += kStyle;
  h += "</head><body>\n<h1>blkrr report</h1>\n<p>" + html_escape(command_line) + "</p>\n";
  for (const Dataset* d : inputs)
    if (d->fake)
      h +=
          "<p class=\"fake\">FAKE RESULT: " + html_escape(d->label) +
          " is a dry run or a replay without O_DIRECT. Its timings do not describe a device.</p>\n";
  if (!render.message.empty()) h += note(render.message, true);
  h += "<ul>\n";
  for (const Dataset* d : inputs)
    h += "<li>" + html_escape(d->label) + ": " + html_escape(d->path) + " (" + kind_name(d->kind) +
         ", " + std::to_string(d->samples.size()) + " requests)</li>\n";
  h += "</ul>\n<p>Contents:</p><ol>\n";
  for (size_t i = 0; i < ctx.sections().size(); ++i)
    h += "<li><a href=\"#s" + std::to_string(i) + "\">" + html_escape(ctx.sections()[i].title) +
         "</a></li>\n";
  h += "</ol>\n<p>Data of every plot: data/*.csv; gnuplot scripts: plots/*.gp; summary: "
       "report.json.</p>\n";
  for (size_t i = 0; i < ctx.sections().size(); ++i) {
    const Section& s = ctx.sections()[i];
    h += "<h2 id=\"s" + std::to_string(i) + "\">" + html_escape(s.title) + "</h2>\n";
    for (const auto& b : s.blocks) h += b;
    for (const auto& name : s.plots) {
      std::string title = name;
      for (const auto& p : ctx.plots())
        if (p.name == name) title = p.title;
      h += "<figure>";
      std::string png;
      if (read_file(ctx.dir() + "/plots/" + name + ".png", png))
        h += "<img alt=\"" + html_escape(title) + "\" src=\"data:image/png;base64," + base64(png) +
             "\">";
      else
        h += "<p class=\"warn\">(plot not drawn)</p>";
      h += "<figcaption>" + html_escape(title) + " &mdash; plots/" + html_escape(name) +
           ".gp</figcaption></figure>\n";
    }
  }
  h += "</body></html>\n";
  std::string path = ctx.dir() + "/index.html";
  return write_file_atomic(path, h);
}

}  // namespace blkrr::report
