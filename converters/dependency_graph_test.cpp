// The dependency graph file of `convert --dependencies`: exact lines from a
// small MSR trace, and the refusal of inputs without completion times.
#include "converters/dependency_graph.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "converters/converter_fixtures.h"

namespace blkrr {
namespace {

using testing::TempDir;

// MSR times are in 100 ns: issue 100 µs, 100 µs latency; the next read 50 µs
// after that completion; a write 10 ms later (independent).
constexpr const char* kMsr =
    "1000,h,0,Read,0,4096,1000\n"
    "2500,h,0,Read,8192,4096,1000\n"
    "100000,h,0,Write,16384,4096,500\n";

TEST(DependencyGraph, WritesOneLinePerRequest) {
  TempDir t;
  GraphOptions o;
  o.inputs = {t.write("m.csv", kMsr)};
  o.output = t.file("m.deps");
  auto r = infer_dependency_graph(o);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->stats.requests(), 3u);
  EXPECT_EQ(r->stats.dependent(), 1u);
  EXPECT_EQ(r->counters.thread, 1u);
  EXPECT_EQ(testing::slurp_raw(o.output),
            graph_header(o) +
                "0\t100000\t200000\t0\tR\t0\t8\tindependent\t0\t0\t-\t0\n"
                "1\t250000\t350000\t0\tR\t16\t8\tthread\t50000\t1\t0\t0\n"
                "2\t10000000\t10050000\t0\tW\t32\t8\tindependent\t0\t0\t-\t0\n");
  const auto j = r->stats.to_json();
  EXPECT_EQ(j["fanin"][0].get<uint64_t>(), 2u);
  EXPECT_EQ(j["fanin"][1].get<uint64_t>(), 1u);
  EXPECT_EQ(j["think_ns"]["max"].get<uint64_t>(), 50000u);
  EXPECT_EQ(j["threads"]["chains"].get<uint64_t>(), 2u);
  EXPECT_EQ(j["threads"]["longest_chain"].get<uint32_t>(), 2u);
}

TEST(DependencyGraph, RefusesLoadsWithoutCompletionTimes) {
  TempDir t;
  GraphOptions o;
  o.inputs = {testing::data_path("linux-mysql.load.gz")};
  o.output = t.file("x.deps");
  auto r = infer_dependency_graph(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::kUsage);
  EXPECT_NE(r.error().message.find("carries no completion times and so no dependencies"),
            std::string::npos)
      << r.error().message;
  EXPECT_FALSE(std::filesystem::exists(o.output));
}

}  // namespace
}  // namespace blkrr
