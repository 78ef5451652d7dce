#include "report/provenance.h"

#include <gtest/gtest.h>

namespace blkrr::report {
namespace {

TEST(Provenance, PlainLoadSaysWhatIsUnknown) {
  Dataset d;
  d.path = "tests/data/x.load.gz";
  Provenance p = provenance_of(d);
  EXPECT_EQ(context_line(p),
            "tests/data/x.load.gz: load (this format records no host, kernel, device or capture "
            "time: unknown)");
  EXPECT_TRUE(p.settings.empty());
}

TEST(Provenance, NativeTraceHeader) {
  Dataset d;
  d.path = "prod.blkrr";
  d.kind = DataKind::kTrace;
  d.info.push_back(trace_info_line("db1", "6.1.0", "0.9.0", "sdb", 1024.0 * 1024 * 1024 * 1024, 0));
  EXPECT_EQ(context_line(provenance_of(d)),
            "prod.blkrr: trace on sdb (1.00 TiB), host db1, kernel 6.1.0, blkrr 0.9.0");
  d.info[0] = trace_info_line("db1", "6.1.0", "0.9.0", "sdb", 0, 1e9);
  EXPECT_NE(context_line(provenance_of(d)).find("captured 2001-09-09 01:46:40 UTC"),
            std::string::npos);
}

TEST(Provenance, ReplaySettingsInPlainWords) {
  Dataset d;
  d.path = "r1.replay.gz";
  d.kind = DataKind::kReplay;
  d.info = {
      "blkrr 0.9.0 replay of prod.blkrr on /dev/sdc (block device, 8 GiB)",
      "INFO: host box kernel 6.18.0",
      R"(INFO: settings {"speedup":2,"mapping":"wrap","order":"global","engine":"uring","queue_depth":32})",
      R"(SUMMARY: {"device":{"path":"/dev/sdc","size_bytes":8589934592},"mapping":{"wraparound_factor":59.8305},"load":{"path":"prod.blkrr"},"start_unix":1000000000})"};
  Provenance p = provenance_of(d);
  EXPECT_EQ(context_line(p),
            "r1.replay.gz: replay of prod.blkrr on /dev/sdc (8.00 GiB), host box, kernel 6.18.0, "
            "replayed 2001-09-09 01:46:40 UTC, blkrr 0.9.0");
  ASSERT_EQ(p.settings.size(), 3u);
  EXPECT_EQ(p.settings[0],
            "speedup 2x: the load was issued 2 times as fast as recorded (times are replay "
            "times)");
  EXPECT_EQ(p.settings[1].substr(0, 48), "wraparound factor 59.8: the load spans 59.8 time");
  EXPECT_EQ(p.settings[2], "order global, engine uring, queue depth 32");
}

}  // namespace
}  // namespace blkrr::report
