#include "core/args.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <optional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/units.h"
#include "core/version.h"

namespace blkrr {

ArgParser::ArgParser(std::string prog, std::string synopsis, std::string description)
    : prog_(std::move(prog)), synopsis_(std::move(synopsis)), description_(std::move(description)) {
  add({'h', "help", "", "show this help", nullptr, nullptr}, true);
  add({'V', "version", "", "print the blkrr version", nullptr, nullptr}, true);
}

void ArgParser::add(Opt o, bool common) {
  if (!common) {
    const CommonOptionSpec* by_short = common_option_by_short(o.short_name);
    const CommonOptionSpec* by_long = common_option_by_long(o.long_name);
    if ((by_short || by_long) && bad_registration_.empty())
      bad_registration_ = "option -" + std::string(1, o.short_name ? o.short_name : '?') + "/--" +
                          o.long_name +
                          " uses a spelling of the shared option table "
                          "(core/common_options.h); register it with ArgParser::common";
  }
  for (const auto& e : opts_)
    if ((o.short_name && e.short_name == o.short_name) || e.long_name == o.long_name)
      if (bad_registration_.empty())
        bad_registration_ = "option --" + o.long_name + " registered twice";
  opts_.push_back(std::move(o));
}

void ArgParser::flag(char s, std::string l, bool* out, std::string help) {
  add({s, std::move(l), "", std::move(help), nullptr, out}, false);
}

void ArgParser::option(char s, std::string l, std::string metavar, std::string help, Setter set) {
  add({s, std::move(l), std::move(metavar), std::move(help), std::move(set), nullptr}, false);
}

void ArgParser::common_flag(CommonOpt id, bool* out, std::string help) {
  const CommonOptionSpec& c = common_option(id);
  add({c.short_name, std::string(c.long_name), "",
       help.empty() ? std::string(c.meaning) : std::move(help), nullptr, out},
      true);
}

void ArgParser::common(CommonOpt id, std::string help, Setter set, std::string metavar) {
  const CommonOptionSpec& c = common_option(id);
  add({c.short_name, std::string(c.long_name),
       metavar.empty() ? std::string(c.metavar) : std::move(metavar),
       help.empty() ? std::string(c.meaning) : std::move(help), std::move(set), nullptr},
      true);
}

void ArgParser::common_string(CommonOpt id, std::string help, std::string* out,
                              std::string metavar) {
  common(
      id, std::move(help),
      [out](std::string_view v) -> Status {
        *out = std::string(v);
        return {};
      },
      std::move(metavar));
}

void ArgParser::common_strings(CommonOpt id, std::string help, std::vector<std::string>* out,
                               std::string metavar) {
  common(
      id, std::move(help),
      [out](std::string_view v) -> Status {
        out->emplace_back(v);
        return {};
      },
      std::move(metavar));
}

void ArgParser::removed(char short_name, std::string instead) {
  removed_.emplace_back(short_name, std::move(instead));
}

Error ArgParser::unknown_short(char c) const {
  std::string msg = std::string("unknown option -") + c;
  for (const auto& [letter, instead] : removed_)
    if (letter == c) return usage_error(msg.append(": write ").append(instead));
  if (const CommonOptionSpec* s = common_option_by_short(c))
    msg += strfmt(" (in blkrr -%c is always --%s, which this command does not take)", c,
                  std::string(s->long_name).c_str());
  return usage_error(msg);
}

void ArgParser::opt_string(char s, std::string l, std::string mv, std::string help,
                           std::string* out) {
  option(s, std::move(l), std::move(mv), std::move(help), [out](std::string_view v) -> Status {
    *out = std::string(v);
    return {};
  });
}

void ArgParser::opt_strings(char s, std::string l, std::string mv, std::string help,
                            std::vector<std::string>* out) {
  option(s, std::move(l), std::move(mv), std::move(help), [out](std::string_view v) -> Status {
    out->emplace_back(v);
    return {};
  });
}

void ArgParser::opt_u64(char s, std::string l, std::string mv, std::string help, uint64_t* out) {
  option(s, std::move(l), std::move(mv), std::move(help), [out](std::string_view v) -> Status {
    auto r = parse_u64(v);
    if (!r) return r.error();
    *out = *r;
    return {};
  });
}

void ArgParser::opt_double(char s, std::string l, std::string mv, std::string help, double* out) {
  option(s, std::move(l), std::move(mv), std::move(help), [out](std::string_view v) -> Status {
    auto r = parse_double(v);
    if (!r) return r.error();
    *out = *r;
    return {};
  });
}

void ArgParser::positionals(std::string metavar, std::vector<std::string>* out, size_t min_count,
                            size_t max_count) {
  pos_metavar_ = std::move(metavar);
  pos_out_ = out;
  pos_min_ = min_count;
  pos_max_ = max_count;
}

const ArgParser::Opt* ArgParser::find_long(std::string_view name) const {
  for (const auto& o : opts_)
    if (o.long_name == name) return &o;
  return nullptr;
}

const ArgParser::Opt* ArgParser::find_short(char c) const {
  for (const auto& o : opts_)
    if (c != 0 && o.short_name == c) return &o;
  return nullptr;
}

Error ArgParser::usage_error(const std::string& msg) const {
  // main() prefixes the command name: the message starts with what is wrong.
  return Error(ErrorKind::kUsage, msg + "\nTry '" + prog_ + " --help'.");
}

Result<bool> ArgParser::apply(const Opt& o, std::string_view shown,
                              std::optional<std::string_view> val, int argc, char** argv, int& i) {
  if (o.long_name == "help") {
    fputs(help().c_str(), stdout);
    return false;
  }
  if (o.long_name == "version") {
    std::printf("blkrr %s\n", version());
    return false;
  }
  if (o.flag) {
    if (val) return usage_error("option " + std::string(shown) + " takes no value");
    *o.flag = true;
    return true;
  }
  if (!val) {
    if (i + 1 >= argc)
      return usage_error("option " + std::string(shown) + " needs a value (" + o.metavar + ")");
    val = argv[++i];
  }
  auto st = o.set(*val);
  if (!st)
    return usage_error("bad value '" + std::string(*val) + "' for " + std::string(shown) + ": " +
                       st.error().message);
  return true;
}

// --name, --name=value, --man-page.
Result<bool> ArgParser::parse_long(std::string_view a, int argc, char** argv, int& i) {
  std::string_view body = a.substr(2);
  std::optional<std::string_view> val;
  if (auto eq = body.find('='); eq != std::string_view::npos) {
    val = body.substr(eq + 1);
    body = body.substr(0, eq);
  }
  if (body == "man-page") {
    fputs(man_page().c_str(), stdout);
    return false;
  }
  const Opt* o = find_long(body);
  if (!o) return usage_error("unknown option --" + std::string(body));
  return apply(*o, a.substr(0, 2 + body.size()), val, argc, argv, i);
}

// Short options, possibly combined (-qj); one that takes a value takes the
// rest of the argument or the next one.
Result<bool> ArgParser::parse_short(std::string_view a, int argc, char** argv, int& i) {
  for (size_t k = 1; k < a.size(); ++k) {
    const Opt* o = find_short(a[k]);
    if (!o) return unknown_short(a[k]);
    std::string shown = std::string("-") + a[k];
    if (!o->flag && !builtin(*o)) {
      std::optional<std::string_view> val;
      if (k + 1 < a.size()) val = a.substr(k + 1);
      return apply(*o, shown, val, argc, argv, i);
    }
    auto r = apply(*o, shown, std::nullopt, argc, argv, i);
    if (!r || !*r) return r;
  }
  return true;
}

Status ArgParser::check_positionals(std::vector<std::string>& pos) const {
  if (pos.size() < pos_min_)
    return usage_error("missing " + (pos_metavar_.empty() ? "argument" : pos_metavar_));
  if (pos.size() > pos_max_) {
    std::string extra = pos[pos_max_];
    std::string hint;
    if (find_long("json-file") && extra.size() > 5 && extra.ends_with(".json"))
      hint = " (--json writes to standard output; --json-file FILE writes a file)";
    return usage_error("unexpected argument '" + extra + "'" + hint);
  }
  if (pos_out_) *pos_out_ = std::move(pos);
  return {};
}

Result<bool> ArgParser::parse(int argc, char** argv) {
  if (!bad_registration_.empty())
    return Error(ErrorKind::kInternal, "internal error: " + bad_registration_);
  std::vector<std::string> pos;
  bool only_pos = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (only_pos || a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9')) {
      pos.emplace_back(a);
      continue;
    }
    if (a == "--") {
      only_pos = true;
      continue;
    }
    auto r = a[1] == '-' ? parse_long(a, argc, argv, i) : parse_short(a, argc, argv, i);
    if (!r || !*r) return r;
  }
  auto st = check_positionals(pos);
  if (!st) return st.error();
  return true;
}

std::string wrap_help(std::string_view text, size_t indent, size_t width) {
  std::string out;
  size_t col = indent;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\n') ++j;
    if (j == i) break;
    std::string_view word = text.substr(i, j - i);
    if (col > indent && col + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      col = indent;
    } else if (col > indent) {
      out += ' ';
      ++col;
    }
    out += word;
    col += word.size();
    i = j;
  }
  return out;
}

std::string ArgParser::help() const {
  constexpr size_t kHelpColumn = 30;
  constexpr size_t kWidth = 80;
  std::string h = "Usage: " + prog_ + " " + synopsis_ + "\n\n" + description_ + "\n\nOptions:\n";
  for (const auto& o : opts_) {
    std::string left = "  ";
    left += o.short_name ? std::string("-") + o.short_name + ", " : "    ";
    left += "--" + o.long_name;
    if (!o.metavar.empty()) left += " " + o.metavar;
    if (left.size() < kHelpColumn)
      left.resize(kHelpColumn, ' ');
    else
      left += "\n" + std::string(kHelpColumn, ' ');
    h += left + wrap_help(o.help, kHelpColumn, kWidth) + "\n";
  }
  if (!examples_.empty()) h += "\nExamples:\n" + examples_ + (examples_.back() == '\n' ? "" : "\n");
  return h;
}

Result<uint64_t> parse_u64(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    return Error(ErrorKind::kBadInput, "not a non-negative integer: '" + std::string(s) + "'");
  return v;
}

Result<int64_t> parse_i64(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size())
    return Error(ErrorKind::kBadInput, "not an integer: '" + std::string(s) + "'");
  return v;
}

Result<double> parse_double(std::string_view s) {
  std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(tmp.c_str(), &end);
  if (tmp.empty() || end != tmp.c_str() + tmp.size() || errno == ERANGE || !std::isfinite(v))
    return Error(ErrorKind::kBadInput, "not a number: '" + tmp + "'");
  return v;
}

Result<uint64_t> parse_size(std::string_view s) {
  if (s.empty()) return Error(ErrorKind::kUsage, "empty size");
  uint64_t mult = 1;
  char c = s.back();
  switch (c) {
    case 'k':
    case 'K':
      mult = 1ull << 10;
      break;
    case 'm':
    case 'M':
      mult = 1ull << 20;
      break;
    case 'g':
    case 'G':
      mult = 1ull << 30;
      break;
    case 't':
    case 'T':
      mult = 1ull << 40;
      break;
    default:
      break;
  }
  if (mult != 1) s.remove_suffix(1);
  auto v = parse_u64(s);
  if (!v)
    return Error(ErrorKind::kUsage, "not a size: '" + std::string(s) + "' (use e.g. 512, 4k, 1M)");
  return *v * mult;
}

namespace {

// The nanoseconds of one duration unit, 0 for an unknown one.
double unit_ns(std::string_view u) {
  if (u == "ns") return 1;
  if (u == "us") return 1e3;
  if (u == "ms") return 1e6;
  if (u == "s") return 1e9;
  if (u == "m") return 60e9;
  if (u == "h") return 3600e9;
  return 0;
}

Error bad_duration(std::string_view s) {
  return Error(
      ErrorKind::kUsage,
      "not a duration: '" + std::string(s) +
          "' (seconds, or numbers with units ns, us, ms, s, m, h: 10, 1.5s, 250ms, 1m30s)");
}

}  // namespace

Result<uint64_t> parse_duration_ns(std::string_view s) {
  // A bare number is seconds ("10", "0.5").
  if (auto v = parse_double(s); v && !s.empty() && (std::isdigit(s[0]) || s[0] == '.')) {
    if (*v * 1e9 >= 1.8e19) return bad_duration(s);
    return static_cast<uint64_t>(std::llround(*v * 1e9));
  }
  // Otherwise number-unit pairs, largest unit first: "1h2m3.5s", "1m30s".
  double total = 0, last_unit = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t n = i;
    while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) ++n;
    size_t u = n;
    while (u < s.size() && std::isalpha(static_cast<unsigned char>(s[u]))) ++u;
    auto num = parse_double(s.substr(i, n - i));
    double mult = unit_ns(s.substr(n, u - n));
    if (n == i || !num || mult == 0 || (last_unit != 0 && mult >= last_unit))
      return bad_duration(s);
    total += *num * mult;
    last_unit = mult;
    i = u;
  }
  if (s.empty() || total >= 1.8e19) return bad_duration(s);
  return static_cast<uint64_t>(std::llround(total));
}

}  // namespace blkrr
