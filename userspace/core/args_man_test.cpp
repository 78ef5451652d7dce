#include <gtest/gtest.h>

#include <cstdio>

#include "core/args.h"
#include "core/version.h"

namespace blkrr {
namespace {

ArgParser sample_parser(std::string* out, bool* quiet) {
  ArgParser p("blkrr x", "[-q] -o FILE IN", "First line.\n.dot at start\n\nSecond paragraph.");
  p.common_flag(CommonOpt::kQuiet, quiet, "say less");
  p.opt_string(0, "out-file", "FILE", "write to FILE (not C:\\x)", out);
  p.examples("  blkrr x -q in\n  blkrr x --out-file=o in   long form\n");
  return p;
}

TEST(ArgsMan, RendersEverySectionWithEscapes) {
  std::string out;
  bool q = false;
  ArgParser p = sample_parser(&out, &q);
  EXPECT_EQ(p.man_page(),
            ".SH SYNOPSIS\n.B blkrr x\n[\\-q] \\-o FILE IN\n"
            ".SH DESCRIPTION\nFirst line.\n\\&.dot at start\n.PP\nSecond paragraph.\n"
            ".SH OPTIONS\n"
            ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow this help\n"
            ".TP\n\\fB\\-V\\fR, \\fB\\-\\-version\\fR\nprint the blkrr version\n"
            ".TP\n\\fB\\-q\\fR, \\fB\\-\\-quiet\\fR\nsay less\n"
            ".TP\n\\fB\\-\\-out\\-file\\fR \\fIFILE\\fR\nwrite to FILE (not C:\\ex)\n"
            ".SH EXAMPLES\n.PP\n.nf\nblkrr x \\-q in\nblkrr x \\-\\-out\\-file=o in   long form\n"
            ".fi\n");
}

TEST(ArgsMan, HelpListsTheSameOptions) {
  std::string out;
  bool q = false;
  ArgParser p = sample_parser(&out, &q);
  std::string h = p.help();
  EXPECT_NE(h.find("  -V, --version"), std::string::npos) << h;
  EXPECT_NE(h.find("      --out-file FILE"), std::string::npos) << h;
  EXPECT_EQ(h.find("man-page"), std::string::npos) << "--man-page is not listed: " << h;
}

TEST(ArgsMan, VersionAndManPageStopParsingLikeHelp) {
  for (const char* opt : {"-V", "--version", "--man-page", "-qV"}) {
    std::string out;
    bool q = false;
    ArgParser p = sample_parser(&out, &q);
    std::string a0 = "x", a1 = opt;
    char* argv[] = {a0.data(), a1.data(), nullptr};
    testing::internal::CaptureStdout();
    auto r = p.parse(2, argv);
    std::string printed = testing::internal::GetCapturedStdout();
    ASSERT_TRUE(r.ok()) << opt << ": " << r.error().message;
    EXPECT_FALSE(*r) << opt;
    if (std::string_view(opt) == "--man-page")
      EXPECT_EQ(printed, p.man_page());
    else
      EXPECT_EQ(printed, std::string("blkrr ") + version() + "\n") << opt;
  }
}

TEST(ArgsMan, VersionIsNotEmptyAndStartsWithADigit) {
  std::string v = version();
  ASSERT_FALSE(v.empty());
  EXPECT_TRUE(v[0] >= '0' && v[0] <= '9') << v;
}

}  // namespace
}  // namespace blkrr
