#include "report/dataset.h"

#include <gtest/gtest.h>

#include "converters/load_format.h"
#include "report/report_fixtures.h"

namespace blkrr::report {
namespace {

using testing::TempDir;

// A replay result written by the converters' LoadWriter, as the replayer does.
std::string write_replay(const std::string& dir, bool fake) {
  std::string path = dir + "/run.replay.gz";
  auto w = LoadWriter::create(path, LoadKind::kReplay, {"replayed by a test"});
  EXPECT_TRUE(w.ok());
  auto rec = [](int64_t start_ms, uint64_t sector, Op op, bool pushed, int64_t delay_us,
                int64_t dur_us) {
    LoadRecord r;
    r.start_ns = 5'000'000'000 + start_ms * 1'000'000;  // set points need not start at 0
    r.sector = sector;
    r.sectors = 8;
    r.op = op;
    r.pushed_back = pushed;
    r.delay_ns = delay_us * 1000;
    r.duration_ns = dur_us * 1000;
    return r;
  };
  EXPECT_TRUE(w->write_line(fake ? "INFO: dry_run=1 (FAKE RESULT)" : "INFO: use_o_direct=1").ok());
  EXPECT_TRUE(w->write(rec(10, 100, Op::kRead, false, 50, 2000)).ok());
  EXPECT_TRUE(w->write(rec(0, 200, Op::kWrite, true, 100, 4000)).ok());
  EXPECT_TRUE(w->write(rec(20, 300, Op::kRead, false, -20, 1000)).ok());
  EXPECT_TRUE(w->write_line("INFO: wraparound_factor=1.5").ok());
  EXPECT_TRUE(w->close().ok());
  return path;
}

TEST(Dataset, ReadsReplayResults) {
  TempDir dir;
  auto d = load_dataset(write_replay(dir.path(), false), "");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->label, "run");
  EXPECT_EQ(d->kind, DataKind::kReplay);
  EXPECT_FALSE(d->fake);
  ASSERT_TRUE(d->wraparound_factor.has_value());
  EXPECT_DOUBLE_EQ(*d->wraparound_factor, 1.5);
  ASSERT_EQ(d->samples.size(), 3u);
  auto v = d->samples.to_vector();
  ASSERT_TRUE(v.ok());
  const Sample& a = (*v)[0];       // file order is kept
  EXPECT_EQ(a.t_ns, 10'000'000u);  // rebased on the earliest set point
  EXPECT_EQ(a.sector, 100u);
  EXPECT_FALSE(a.write());
  EXPECT_EQ(a.delay_ns, 50'000);
  EXPECT_EQ(a.latency_ns, 2'000'000u);
  EXPECT_EQ(a.issue_ns(), 10'050'000u);
  EXPECT_EQ(a.complete_ns(), 12'050'000u);
  EXPECT_TRUE((*v)[1].write());
  EXPECT_TRUE((*v)[1].flags & kSamplePushedBack);
  EXPECT_FALSE(a.flags & kSamplePushedBack);
  EXPECT_EQ((*v)[2].delay_ns, -20'000);
  EXPECT_TRUE(d->has_latency());
  EXPECT_TRUE(d->has_delay());
}

TEST(Dataset, FakeMarkerIsRecognised) {
  TempDir dir;
  auto d = load_dataset(write_replay(dir.path(), true), "mine");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d->fake);
  EXPECT_EQ(d->label, "mine");
  Dataset e;
  e.info = {"INFO: use_o_direct=0"};
  apply_info_markers(e);
  EXPECT_TRUE(e.fake);
  Dataset f;
  f.info = {"INFO: use_o_direct=1", "SUMMARY: fine"};
  apply_info_markers(f);
  EXPECT_FALSE(f.fake);
  EXPECT_FALSE(f.wraparound_factor.has_value());
}

TEST(Dataset, SavedFormRoundTrips) {
  TempDir dir;
  auto d = load_dataset(write_replay(dir.path(), true), "");
  ASSERT_TRUE(d.ok());
  d->procs.push_back({42, "mysqld", 3, 12288, 7000});
  ASSERT_TRUE(d->samples
                  .rewrite([first = true](Sample& s) mutable {
                    if (first) s.proc = 0;
                    first = false;
                  })
                  .ok());
  std::string saved = dir.path() + "/saved.csv.gz";
  ASSERT_TRUE(save_dataset(*d, saved).ok());
  auto back = load_saved_dataset(saved);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->label, d->label);
  EXPECT_EQ(back->kind, DataKind::kReplay);
  EXPECT_TRUE(back->fake);
  EXPECT_EQ(back->info, d->info);
  ASSERT_EQ(back->procs.size(), 1u);
  EXPECT_EQ(back->procs[0].comm, "mysqld");
  EXPECT_EQ(back->procs[0].disk_time_ns, 7000u);
  auto a = d->samples.to_vector(), b = back->samples.to_vector();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(b->size(), a->size());
  EXPECT_EQ((*a)[0].proc, 0u);
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*b)[i].t_ns, (*a)[i].t_ns);
    EXPECT_EQ((*b)[i].sector, (*a)[i].sector);
    EXPECT_EQ((*b)[i].op, (*a)[i].op);
    EXPECT_EQ((*b)[i].flags, (*a)[i].flags);
    EXPECT_EQ((*b)[i].proc, (*a)[i].proc);
    EXPECT_EQ((*b)[i].delay_ns, (*a)[i].delay_ns);
    EXPECT_EQ((*b)[i].latency_ns, (*a)[i].latency_ns);
  }
}

TEST(Dataset, DamagedSavedDataNamesTheLine) {
  TempDir dir;
  std::string p = dir.path() + "/bad.csv";
  {
    std::ofstream f(p);
    f << "# kind=load\nt_ns,sector,sectors,op,flags,proc,delay_ns,latency_ns\n1,2,8,R,0,65535,0,0\n"
         "1,2,x,R,0,0,0,0\n";
  }
  auto d = load_saved_dataset(p);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find(p + ":4"), std::string::npos) << d.error().message;
}

TEST(Dataset, MissingInputIsAnError) {
  auto d = load_dataset("/nonexistent/x.load.gz", "");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("/nonexistent/x.load.gz"), std::string::npos);
}

TEST(Dataset, LabelFromPath) {
  EXPECT_EQ(label_from_path("/a/b/linux-mysql.load.gz"), "linux-mysql");
  EXPECT_EQ(label_from_path("run 1.replay.gz"), "run_1");
  EXPECT_EQ(label_from_path("/x/trace.blkrr"), "trace");
}

}  // namespace
}  // namespace blkrr::report
