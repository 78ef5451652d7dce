#include "core/common_options.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace blkrr {
namespace {

// One meaning per letter and per long name, and the letters docs/cli.md
// promises (bcc/iotop habits): -d device, -p pid, -n comm, -o output,
// -j json, -q quiet, -D duration, -h, -V; --cgroup and --json-file long only.
TEST(CommonOptions, OneMeaningPerSpelling) {
  std::set<char> letters;
  std::set<std::string> longs;
  std::string table;
  for (const auto& o : common_options()) {
    if (o.short_name) EXPECT_TRUE(letters.insert(o.short_name).second) << o.short_name;
    EXPECT_TRUE(longs.insert(std::string(o.long_name)).second) << o.long_name;
    EXPECT_FALSE(o.meaning.empty()) << o.long_name;
    table += std::string(o.short_name ? std::string(1, o.short_name) : std::string("-")) + "=" +
             std::string(o.long_name) + " ";
  }
  EXPECT_EQ(table,
            "h=help V=version d=device p=pid n=comm -=cgroup o=output j=json -=json-file q=quiet "
            "D=duration v=verbose -=overwrite ");
  EXPECT_EQ(common_option(CommonOpt::kJsonFile).metavar, "FILE");
  EXPECT_EQ(common_option_by_short('c'), nullptr);  // not used: it was the task name before
  EXPECT_EQ(common_option_by_long("name"), nullptr);
}

}  // namespace
}  // namespace blkrr
