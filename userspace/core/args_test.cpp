#include "core/args.h"

#include <gtest/gtest.h>

namespace blkrr {
namespace {

struct Argv {
  std::vector<std::string> s;
  std::vector<char*> p;
  explicit Argv(std::initializer_list<const char*> a) {
    for (auto x : a) s.emplace_back(x);
    for (auto& x : s) p.push_back(x.data());
  }
  int argc() { return static_cast<int>(p.size()); }
  char** argv() { return p.data(); }
};

TEST(Args, ParsesShortLongCombinedAndPositionals) {
  bool q = false, s = false;
  std::string out;
  std::vector<std::string> devs, pos;
  uint64_t n = 0;
  ArgParser p("blkrr x", "[options] FILE", "test");
  p.common_flag(CommonOpt::kQuiet, &q);
  p.flag('s', "start", &s, "");
  p.common_string(CommonOpt::kOutput, "", &out);
  p.common_strings(CommonOpt::kDevice, "", &devs);
  p.opt_u64('c', "count", "N", "", &n);
  p.positionals("FILE", &pos, 1, 2);
  Argv a{"x", "-qs", "-d", "sda", "--device=7:0", "-ofile", "-c", "12", "in", "--", "-weird"};
  auto r = p.parse(a.argc(), a.argv());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(*r);
  EXPECT_TRUE(q);
  EXPECT_TRUE(s);
  EXPECT_EQ(out, "file");
  EXPECT_EQ(devs, (std::vector<std::string>{"sda", "7:0"}));
  EXPECT_EQ(n, 12u);
  EXPECT_EQ(pos, (std::vector<std::string>{"in", "-weird"}));
}

TEST(Args, ErrorsAreUsageErrors) {
  uint64_t n = 0;
  std::vector<std::string> pos;
  ArgParser p("blkrr x", "", "");
  p.opt_u64('c', "count", "N", "", &n);
  p.positionals("FILE", &pos, 0, 0);
  Argv bad_num{"x", "-c", "12x"};
  auto r = p.parse(bad_num.argc(), bad_num.argv());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUsage);
  EXPECT_NE(r.error().message.find("12x"), std::string::npos);
  Argv unknown{"x", "--nope"};
  EXPECT_FALSE(p.parse(unknown.argc(), unknown.argv()).ok());
  Argv missing{"x", "-c"};
  EXPECT_FALSE(p.parse(missing.argc(), missing.argv()).ok());
  Argv extra{"x", "file"};
  EXPECT_FALSE(p.parse(extra.argc(), extra.argv()).ok());
}

// The shared table (core/common_options.h): its spellings come only from
// common*(); a command that gives one of them another meaning cannot parse.
TEST(Args, SharedSpellingsComeFromTheTable) {
  bool q = false, x = false;
  ArgParser ok("blkrr x", "", "");
  ok.common_flag(CommonOpt::kQuiet, &q);
  EXPECT_NE(ok.help().find("  -q, --quiet"), std::string::npos) << ok.help();
  EXPECT_NE(ok.help().find("no progress line and no summary on stderr"), std::string::npos);
  for (auto misuse : {std::make_pair('q', "queue-depth"), std::make_pair('x', "quiet"),
                      std::make_pair('j', "jobs")}) {
    ArgParser p("blkrr x", "", "");
    p.flag(misuse.first, misuse.second, &x, "");
    Argv a{"x"};
    auto r = p.parse(a.argc(), a.argv());
    ASSERT_FALSE(r.ok()) << misuse.second;
    EXPECT_EQ(r.error().kind, ErrorKind::kInternal);
    EXPECT_NE(r.error().message.find("shared option table"), std::string::npos);
  }
  ArgParser twice("blkrr x", "", "");
  twice.flag('z', "zap", &x, "");
  twice.flag('z', "zip", &x, "");
  Argv a{"x"};
  EXPECT_FALSE(twice.parse(a.argc(), a.argv()).ok());
  for (const auto& c : common_options()) {
    EXPECT_EQ(&common_option(c.id), &c);
    if (c.short_name) {
      EXPECT_EQ(common_option_by_short(c.short_name), &c);
    }
    EXPECT_EQ(common_option_by_long(c.long_name), &c);
  }
}

// A spelling a command no longer takes, or a shared letter it does not
// take, fails with what to write instead.
TEST(Args, RemovedAndUntakenLettersSayWhatToWrite) {
  bool dry = false, json = false;
  std::string file;
  std::vector<std::string> pos;
  ArgParser p("blkrr x", "", "");
  p.flag(0, "dry-run", &dry, "");
  p.common_flag(CommonOpt::kJson, &json);
  p.common_string(CommonOpt::kJsonFile, "", &file);
  p.removed('n', "--dry-run");
  p.positionals("A B", &pos, 0, 2);
  Argv n{"x", "-n"};
  auto r = p.parse(n.argc(), n.argv());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("unknown option -n: write --dry-run\n", 0), 0u)
      << r.error().message;
  Argv o{"x", "-o", "f"};
  r = p.parse(o.argc(), o.argv());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("-o is always --output"), std::string::npos);
  Argv j{"x", "a", "b", "--json", "run.json"};
  r = p.parse(j.argc(), j.argv());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("--json-file FILE writes a file"), std::string::npos)
      << r.error().message;
}

// Option help is wrapped to 80 columns and continued under its own column,
// whatever line breaks the text had.
TEST(Args, HelpIsWrappedUnderItsColumn) {
  EXPECT_EQ(wrap_help("a b\nc", 4, 80), "a b c");
  EXPECT_EQ(wrap_help("aaaa bbbb cccc", 4, 12), "aaaa\n    bbbb\n    cccc");
  EXPECT_EQ(wrap_help("averyverylongword x", 4, 10), "averyverylongword\n    x");
  EXPECT_EQ(wrap_help("", 4, 80), "");
  ArgParser p("blkrr x", "[opts]", "Test.");
  bool f = false;
  p.flag(0, "flag", &f,
         "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
         "fifteen\nsixteen");
  std::string h = p.help();
  size_t from = 0;
  while (from < h.size()) {
    size_t nl = h.find('\n', from);
    if (nl == std::string::npos) nl = h.size();
    std::string line = h.substr(from, nl - from);
    EXPECT_LE(line.size(), 80u) << line;
    if (line.find("sixteen") != std::string::npos) {
      EXPECT_EQ(line.find_first_not_of(' '), 30u) << line;
    }
    from = nl + 1;
  }
  EXPECT_NE(h.find("fifteen sixteen"), std::string::npos) << h;
}

// Compound durations, as systemd and Go write them, in every command.
TEST(Args, CompoundDurations) {
  EXPECT_EQ(*parse_duration_ns("1m30s"), 90'000'000'000u);
  EXPECT_EQ(*parse_duration_ns("1h2m3.5s"), 3'723'500'000'000u);
  EXPECT_EQ(*parse_duration_ns("2s500ms"), 2'500'000'000u);
  EXPECT_EQ(*parse_duration_ns("1ms250us"), 1'250'000u);
  EXPECT_EQ(*parse_duration_ns("0.5"), 500'000'000u);
  EXPECT_EQ(*parse_duration_ns("90ns"), 90u);
  EXPECT_EQ(*parse_duration_ns("1.5h"), 5'400'000'000'000u);
  for (const char* bad : {"", "s", "1x", "30s1m", "1m1m", "1m 30s", "m30", "1.2.3s", "-1m", "inf",
                          "1e30", "1m-30s", "5000000000h"})
    EXPECT_EQ(parse_duration_ns(bad).error().kind, ErrorKind::kUsage) << bad;
  EXPECT_NE(parse_duration_ns("1x").error().message.find("1m30s"), std::string::npos);
}

TEST(Args, NumbersSizesDurations) {
  EXPECT_EQ(*parse_size("4k"), 4096u);
  EXPECT_EQ(*parse_size("2M"), 2u << 20);
  EXPECT_EQ(parse_size("k").error().kind, ErrorKind::kUsage);
  EXPECT_EQ(parse_size("").error().kind, ErrorKind::kUsage);
  EXPECT_EQ(*parse_duration_ns("1.5s"), 1500000000u);
  EXPECT_EQ(*parse_duration_ns("250ms"), 250000000u);
  EXPECT_EQ(*parse_duration_ns("10"), 10000000000u);
  EXPECT_EQ(*parse_duration_ns("2m"), 120000000000u);
  EXPECT_EQ(parse_duration_ns("-1").error().kind, ErrorKind::kUsage);
  // The plain numbers serve file parsers too: text that is no number is bad input.
  EXPECT_EQ(parse_u64("").error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(parse_u64("-3").error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(*parse_i64("-3"), -3);
  EXPECT_EQ(parse_i64("3x").error().kind, ErrorKind::kBadInput);
  EXPECT_EQ(parse_double("nan").error().kind, ErrorKind::kBadInput);
}

}  // namespace
}  // namespace blkrr
