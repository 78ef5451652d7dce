// ArgParser::man_page(): the --help of a command as the body of its man page,
// so that the options of the page and of --help come from the same calls
// (scripts/packaging/gen-man.sh adds .TH, NAME and the hand-written sections).
#include <string_view>

#include "core/args.h"

namespace blkrr {
namespace {

// Text for troff: backslashes and hyphens escaped (\- is a minus that can be
// copied into a shell), a line that would start with a control character
// protected by \&.
std::string roff(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 8);
  bool line_start = true;
  for (char c : s) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
    line_start = c == '\n';
  }
  return out;
}

// Paragraphs of the description: blank lines become .PP, other line breaks
// are kept as they are (troff fills the text).
std::string paragraphs(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    out += line.empty() ? std::string(".PP") : roff(line);
    out += '\n';
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

// Example lines without the two-space indentation of --help, unfilled.
std::string example_block(std::string_view text) {
  std::string out = ".PP\n.nf\n";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    if (line.substr(0, 2) == "  ") line.remove_prefix(2);
    out += roff(line) + "\n";
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out + ".fi\n";
}

}  // namespace

std::string ArgParser::man_page() const {
  std::string m = ".SH SYNOPSIS\n.B " + roff(prog_) + "\n" + roff(synopsis_) + "\n";
  m += ".SH DESCRIPTION\n" + paragraphs(description_);
  m += ".SH OPTIONS\n";
  for (const auto& o : opts_) {
    m += ".TP\n";
    if (o.short_name) m += std::string("\\fB\\-") + o.short_name + "\\fR, ";
    m += "\\fB" + roff("--" + o.long_name) + "\\fR";
    if (!o.metavar.empty()) m += " \\fI" + roff(o.metavar) + "\\fR";
    m += "\n" + roff(o.help) + "\n";
  }
  if (!examples_.empty()) m += ".SH EXAMPLES\n" + example_block(examples_);
  return m;
}

}  // namespace blkrr
