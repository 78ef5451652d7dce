#include "cli/dump_args.h"

#include <gtest/gtest.h>

#include "cli/args_test_util.h"

namespace blkrr::cli {
namespace {

using testing::Argv;
using testing::kind_of;
using testing::parse_printing;

TEST(DumpArgs, OneTraceOrItsPieces) {
  Argv one{"dump", "a.blkrr"};
  auto r = parse_dump_args(one.argc(), one.argv());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->help_printed);
  EXPECT_EQ(r->files, std::vector<std::string>{"a.blkrr"});
  EXPECT_FALSE(r->json);
  EXPECT_FALSE(r->no_header);
  Argv pieces{"dump", "p.000001.blkrr", "p.000002.blkrr", "-"};
  auto p = parse_dump_args(pieces.argc(), pieces.argv());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->files, (std::vector<std::string>{"p.000001.blkrr", "p.000002.blkrr", "-"}));
}

TEST(DumpArgs, AFileIsRequired) {
  Argv none{"dump", "-j"};
  EXPECT_EQ(kind_of(parse_dump_args(none.argc(), none.argv())), ErrorKind::kUsage);
}

TEST(DumpArgs, JsonAndNoHeader) {
  Argv a{"dump", "-jH", "a.blkrr"};
  auto r = parse_dump_args(a.argc(), a.argv());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->json);
  EXPECT_TRUE(r->no_header);
  Argv b{"dump", "--no-header", "a.blkrr"};
  auto s = parse_dump_args(b.argc(), b.argv());
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->json);
  EXPECT_TRUE(s->no_header);
}

TEST(DumpArgs, UnknownOptionsAreUsageErrors) {
  Argv a{"dump", "--bogus", "a.blkrr"};
  EXPECT_EQ(kind_of(parse_dump_args(a.argc(), a.argv())), ErrorKind::kUsage);
}

TEST(DumpArgs, HelpRunsNothing) {
  std::string out;
  auto r = parse_printing(parse_dump_args, {"dump", "-h"}, out);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->help_printed);
  EXPECT_NE(out.find("FILE.blkrr|-"), std::string::npos);
}

}  // namespace
}  // namespace blkrr::cli
