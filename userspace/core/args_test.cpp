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
  p.flag('q', "quiet", &q, "");
  p.flag('s', "start", &s, "");
  p.opt_string('o', "output", "FILE", "", &out);
  p.opt_strings('d', "device", "DEV", "", &devs);
  p.opt_u64('n', "count", "N", "", &n);
  p.positionals("FILE", &pos, 1, 2);
  Argv a{"x", "-qs", "-d", "sda", "--device=7:0", "-ofile", "--count", "12", "in", "--", "-weird"};
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
  p.opt_u64('n', "count", "N", "", &n);
  p.positionals("FILE", &pos, 0, 0);
  Argv bad_num{"x", "-n", "12x"};
  auto r = p.parse(bad_num.argc(), bad_num.argv());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().exit_code, 2);
  EXPECT_NE(r.error().message.find("12x"), std::string::npos);
  Argv unknown{"x", "--nope"};
  EXPECT_FALSE(p.parse(unknown.argc(), unknown.argv()).ok());
  Argv missing{"x", "-n"};
  EXPECT_FALSE(p.parse(missing.argc(), missing.argv()).ok());
  Argv extra{"x", "file"};
  EXPECT_FALSE(p.parse(extra.argc(), extra.argv()).ok());
}

TEST(Args, NumbersSizesDurations) {
  EXPECT_EQ(*parse_size("4k"), 4096u);
  EXPECT_EQ(*parse_size("2M"), 2u << 20);
  EXPECT_FALSE(parse_size("k").ok());
  EXPECT_EQ(*parse_duration_ns("1.5s"), 1500000000u);
  EXPECT_EQ(*parse_duration_ns("250ms"), 250000000u);
  EXPECT_EQ(*parse_duration_ns("10"), 10000000000u);
  EXPECT_EQ(*parse_duration_ns("2m"), 120000000000u);
  EXPECT_FALSE(parse_duration_ns("-1").ok());
  EXPECT_FALSE(parse_u64("").ok());
  EXPECT_FALSE(parse_u64("-3").ok());
  EXPECT_EQ(*parse_i64("-3"), -3);
  EXPECT_FALSE(parse_double("nan").ok());
}

}  // namespace
}  // namespace blkrr
