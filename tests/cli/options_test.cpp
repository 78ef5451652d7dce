// The command-line table (docs/cli.md): every command's short options, read
// from its --help as a user sees them, against the shared table of
// core/common_options.h. A shared letter means one thing everywhere, any
// other letter means one thing across commands, and old spellings that would
// now mean something else fail with a hint instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/common_options.h"
#include "tests/cli/test_cli_run.h"

namespace blkrr {
namespace {

using testing::blkrr_run;

struct OptLine {
  char short_name = 0;
  std::string long_name;
};

std::vector<OptLine> options_of(const std::vector<std::string>& cmd) {
  std::vector<std::string> args = cmd;
  args.push_back("--help");
  auto r = blkrr_run(args);
  EXPECT_EQ(r.status, 0) << r.out;
  std::vector<OptLine> out;
  static const std::regex line(R"(^  (?:-([A-Za-z0-9]), |    )--([a-z0-9-]+))");
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_search(l, m, line)) continue;
    out.push_back({m[1].matched ? m[1].str()[0] : '\0', m[2].str()});
  }
  return out;
}

// The short options of every command: the cli table of docs/cli.md.
const std::map<std::string, std::string> kShortOptions = {
    {"record", "DVdhnopqv"}, {"top", "CVdhjnpqrs"},      {"snoop", "DQVdhjnp"},
    {"convert", "Vdhnopqv"}, {"replay", "DVehjoqt"},     {"validate", "Vdhjq"},
    {"report", "Vhloq"},     {"report --fleet", "Vhoq"}, {"devices", "Vhj"},
    {"dump", "HVhj"},        {"features", "Vhj"},
};

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> v;
  for (std::string w; in >> w;) v.push_back(w);
  return v;
}

TEST(Options, EveryCommandsShortOptionsAreTheTable) {
  std::map<char, std::pair<std::string, std::string>> letter_owner;  // letter -> long, command
  for (const auto& [cmd, want] : kShortOptions) {
    std::string got;
    for (const auto& o : options_of(words(cmd))) {
      if (!o.short_name) continue;
      got += o.short_name;
      // One long name per letter across all commands.
      auto [it, fresh] = letter_owner.emplace(o.short_name, std::make_pair(o.long_name, cmd));
      EXPECT_TRUE(fresh || it->second.first == o.long_name)
          << "-" << o.short_name << " is --" << o.long_name << " in " << cmd << " but --"
          << it->second.first << " in " << it->second.second;
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << cmd;
  }
}

TEST(Options, SharedSpellingsHaveTheTablesMeaning) {
  for (const auto& [cmd, _] : kShortOptions) {
    for (const auto& o : options_of(words(cmd))) {
      const CommonOptionSpec* by_short = common_option_by_short(o.short_name);
      const CommonOptionSpec* by_long = common_option_by_long(o.long_name);
      if (by_short) {
        EXPECT_EQ(o.long_name, by_short->long_name)
            << cmd << ": -" << o.short_name << " must be --" << by_short->long_name;
      }
      if (by_long) {
        EXPECT_EQ(o.short_name, by_long->short_name)
            << cmd << ": --" << o.long_name << " must be spelled as in the table";
      }
    }
  }
}

TEST(Options, HelpAndVersionEverywhere) {
  for (const auto& [cmd, _] : kShortOptions) {
    auto w = words(cmd);
    w.push_back("-V");
    auto v = blkrr_run(w);
    EXPECT_EQ(v.status, 0) << cmd << ": " << v.out;
    EXPECT_EQ(v.out.rfind("blkrr ", 0), 0u) << v.out;
    auto h = blkrr_run({"help", words(cmd)[0]});
    auto d = blkrr_run({words(cmd)[0], "--help"});
    EXPECT_EQ(h.status, 0);
    EXPECT_EQ(h.out, d.out) << "blkrr help " << cmd;
  }
}

// A removed spelling is an error that says what to write now, never a
// silent change of meaning.
TEST(Options, OldSpellingsFailWithAHint) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"replay", "-n", "a", "b"}, "write --dry-run"},
      {{"replay", "a", "b", "--json", "run.json"}, "--json-file FILE writes a file"},
      {{"record", "-c", "mysqld"}, "write -n COMM"},
      {{"convert", "in", "-o", "x.csv", "-c", "mysqld"}, "write -n COMM"},
      {{"top", "-o"}, "write --disktime"},
      {{"top", "-P"}, "write --by pid"},
      {{"top", "-t", "5"}, "write -r N"},
      // iotop's -n NUM: -n is the task name, and a number gets the hint
      {{"top", "-n", "5", "-d", "nosuchdev9"}, "write blkrr top 1 5"},
      {{"top", "-d", "5"}, "the interval is an argument: blkrr top 5"},  // iotop's -d SEC
      {{"snoop", "-s"}, "write --issue"},
      {{"report", "-d", "x"}, "write --dynamic"},
      {{"validate", "-F", "a", "b"}, "its long form"},
      {{"devices", "-o", "x"}, "-o is always --output, which this command does not take"},
  };
  for (const auto& [args, hint] : cases) {
    auto r = blkrr_run(args);
    EXPECT_EQ(r.status, 2) << args[0] << " " << args[1] << ": " << r.out;
    EXPECT_NE(r.out.find(hint), std::string::npos) << args[0] << " " << args[1] << ": " << r.out;
  }
  // replay -q is --quiet now: it takes no value.
  auto q = blkrr_run({"replay", "-q", "64", "a", "b"});
  EXPECT_EQ(q.status, 2);
  EXPECT_NE(q.out.find("unexpected argument 'b'"), std::string::npos) << q.out;
}

}  // namespace
}  // namespace blkrr
