// A small command-line parser shared by every blkrr subcommand, so that all of
// them accept options the same way and print help the same way.
//   -x VALUE, -xVALUE, --long VALUE, --long=VALUE, combined short flags (-sN),
//   "--" ends options. Every parser knows -h/--help, -V/--version and the
//   unlisted --man-page (the help as a man page body, for the build; see
//   docs/packaging.md).
// Options of the shared table (core/common_options.h: -d, -p, -n, -o, -j, -q,
// -D, --cgroup, --json-file) are registered with common*(), which take their
// letters and long names from the table; flag()/option() refuse a letter or
// long name of the table (parse() then fails with an internal error), so no
// command can give a shared spelling another meaning.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common_options.h"
#include "core/result.h"

namespace blkrr {

class ArgParser {
 public:
  using Setter = std::function<Status(std::string_view)>;

  ArgParser(std::string prog, std::string synopsis, std::string description);

  // Boolean switch.
  void flag(char short_name, std::string long_name, bool* out, std::string help);
  // Option with a value, converted by `set` (which returns an error for bad values).
  void option(char short_name, std::string long_name, std::string metavar, std::string help,
              Setter set);
  void opt_string(char s, std::string l, std::string metavar, std::string help, std::string* out);
  void opt_strings(char s, std::string l, std::string metavar, std::string help,
                   std::vector<std::string>* out);  // repeatable
  void opt_u64(char s, std::string l, std::string metavar, std::string help, uint64_t* out);
  void opt_double(char s, std::string l, std::string metavar, std::string help, double* out);
  // Options of the shared table. `help` says what the option does in this
  // command (default: the table's meaning); `metavar` may name the value more
  // precisely (DIR instead of FILE).
  void common_flag(CommonOpt id, bool* out, std::string help = {});
  void common(CommonOpt id, std::string help, Setter set, std::string metavar = {});
  void common_string(CommonOpt id, std::string help, std::string* out, std::string metavar = {});
  void common_strings(CommonOpt id, std::string help, std::vector<std::string>* out,
                      std::string metavar = {});
  // A short letter this command no longer takes: "unknown option -X" then says
  // what to write instead (e.g. removed('n', "--dry-run")).
  void removed(char short_name, std::string instead);
  // Positional arguments land here in order.
  void positionals(std::string metavar, std::vector<std::string>* out, size_t min_count,
                   size_t max_count);
  void examples(std::string text) { examples_ = std::move(text); }

  // Returns true to go on, false when --help, --version or --man-page was
  // printed; Error on bad usage (exit code 2).
  Result<bool> parse(int argc, char** argv);
  std::string help() const;
  // The same content as help() in troff (man(7)): SYNOPSIS, DESCRIPTION,
  // OPTIONS and EXAMPLES sections, without .TH and NAME (args_man.cpp).
  std::string man_page() const;

 private:
  struct Opt {
    char short_name;
    std::string long_name;
    std::string metavar;  // empty for flags
    std::string help;
    Setter set;
    bool* flag = nullptr;
  };
  void add(Opt o, bool common);
  const Opt* find_long(std::string_view name) const;
  const Opt* find_short(char c) const;
  Error usage_error(const std::string& msg) const;
  // One option (shown as SHOWN) with its inline value or the next argument
  // (argv[++i]); false when --help or --version was printed.
  Result<bool> apply(const Opt& o, std::string_view shown, std::optional<std::string_view> val,
                     int argc, char** argv, int& i);
  Result<bool> parse_long(std::string_view a, int argc, char** argv, int& i);
  Result<bool> parse_short(std::string_view a, int argc, char** argv, int& i);
  Status check_positionals(std::vector<std::string>& pos) const;
  static bool builtin(const Opt& o) { return o.long_name == "help" || o.long_name == "version"; }

  Error unknown_short(char c) const;
  std::string prog_, synopsis_, description_, examples_;
  std::string bad_registration_;  // a shared spelling misused: parse() fails
  std::vector<std::pair<char, std::string>> removed_;
  std::vector<Opt> opts_;
  std::string pos_metavar_;
  std::vector<std::string>* pos_out_ = nullptr;
  size_t pos_min_ = 0, pos_max_ = 0;
};

// TEXT as lines of at most WIDTH columns (a longer word stands alone), every
// line after the first indented by INDENT; the first starts at column INDENT.
// Newlines in TEXT are spaces: a help text is one paragraph.
std::string wrap_help(std::string_view text, size_t indent, size_t width);

// Strict number parsing used by options and file parsers alike: text that is
// no such number is kBadInput (an option's caller makes it a usage error).
Result<uint64_t> parse_u64(std::string_view s);
Result<int64_t> parse_i64(std::string_view s);
Result<double> parse_double(std::string_view s);
// "512", "4k", "1M", "2G" (powers of 1024). Sizes and durations are option
// values: their errors are kUsage.
Result<uint64_t> parse_size(std::string_view s);
// Durations, the one parser of every command: a bare number is seconds
// ("10", "0.5"); otherwise numbers with units ns, us, ms, s, m, h, largest
// first and each once ("250ms", "2m", "1m30s", "1h2m3.5s") -> nanoseconds.
Result<uint64_t> parse_duration_ns(std::string_view s);

}  // namespace blkrr
