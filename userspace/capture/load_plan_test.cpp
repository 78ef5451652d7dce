#include "capture/load_plan.h"

#include <gtest/gtest.h>

namespace blkrr::capture {
namespace {

KernelFeatures kernel(bool iter, bool io_start, bool io_done, int issue_args = 1) {
  KernelFeatures k;
  k.btf = true;
  k.issue_args = k.requeue_args = k.insert_args = issue_args;
  k.complete_args = 3;
  k.io_start_args = io_start ? 1 : -1;
  k.io_done_args = io_done ? 1 : -1;
  k.tp_btf = k.ringbuf = k.cgroup_id_helper = k.atomics = {true, ""};
  k.map_iter = iter ? Probe{true, ""} : Probe{false, "load: EPERM"};
  return k;
}

TEST(LoadPlan, EverythingOnAKernelThatOffersIt) {
  auto p = plan_programs(FeatureSet{kernel(true, true, true), {}}, true);
  EXPECT_TRUE(p.io_start && p.insert && p.check);
  EXPECT_FALSE(p.io_done);     // the checker does its job
  EXPECT_FALSE(p.idle_check);  // likewise
  EXPECT_TRUE(p.notes.empty());
  EXPECT_EQ(p.describe().at("lost_completions"), "checker (map iterator)");
}

TEST(LoadPlan, IteratorsDeniedUseTheIdleCheckWithOneLine) {
  auto p = plan_programs(FeatureSet{kernel(false, true, true), {}}, false);
  EXPECT_FALSE(p.check);
  EXPECT_FALSE(p.io_done);  // only on request
  EXPECT_TRUE(p.idle_check);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("map_iter off"), std::string::npos);
  EXPECT_EQ(p.describe().at("lost_completions"), "sysfs idle check");
}

TEST(LoadPlan, IoDoneOnRequestOnlyWhereTheCheckerCannotRun) {
  auto p = plan_programs(FeatureSet{kernel(false, true, true), {}}, false, true);
  EXPECT_TRUE(p.io_done);
  EXPECT_EQ(p.describe().at("lost_completions"), "block_io_done + sysfs idle check");
  EXPECT_FALSE(plan_programs(FeatureSet{kernel(true, true, true), {}}, false, true).io_done);
  auto none = plan_programs(FeatureSet{kernel(false, true, false), {}}, false, true);
  EXPECT_FALSE(none.io_done);
  ASSERT_EQ(none.notes.size(), 2u);  // map_iter, block_io_done
}

TEST(LoadPlan, Kernel61WithoutIoStartOrIoDone) {
  auto p = plan_programs(FeatureSet{kernel(true, false, false), {}}, true, true);
  EXPECT_FALSE(p.io_start);
  EXPECT_TRUE(p.insert);  // attributes queued requests to the task that queued them
  EXPECT_TRUE(p.check);
  EXPECT_EQ(p.describe().at("attribution"),
            "block_rq_insert (queued requests), else block_rq_issue");
  EXPECT_EQ(p.describe().at("queue_time"), "block_rq_insert");
  ASSERT_EQ(p.notes.size(), 1u);  // block_io_start
  // Without block_rq_insert as well: attribution at issue, one more line.
  auto k = kernel(true, false, false);
  k.insert_args = -1;
  auto bare = plan_programs(FeatureSet{k, {}}, false);
  EXPECT_FALSE(bare.insert);
  EXPECT_EQ(bare.describe().at("attribution"), "block_rq_issue");
  EXPECT_EQ(bare.notes.size(), 2u);
}

TEST(LoadPlan, KernelWithoutFetchingAtomicsLoadsTheCompatObjectWithOneLine) {
  auto k = kernel(true, false, false);
  k.atomics = {false, "load: EINVAL: not supported by this kernel"};
  auto p = plan_programs(FeatureSet{k, {}}, false);
  EXPECT_TRUE(p.compat);
  ASSERT_EQ(p.notes.size(), 2u);  // bpf_atomics, block_io_start
  EXPECT_NE(p.notes[0].find("bpf_atomics off"), std::string::npos);
  EXPECT_TRUE(p.minimal().compat) << "the retry keeps the object the kernel can load";
  EXPECT_FALSE(plan_programs(FeatureSet{kernel(true, true, true), {}}, false).compat);
}

TEST(LoadPlan, Kernel510PicksTheRequestQueuePrototype) {
  auto p = plan_programs(FeatureSet{kernel(true, false, false, 2), {}}, false);
  EXPECT_TRUE(p.queue_arg);
  EXPECT_NE(p.describe().at("tracepoint_args").find("before 5.11"), std::string::npos);
}

TEST(LoadPlan, DenyAllLeavesOnlyTheRequiredProgramsAndTheIdleCheck) {
  auto p = plan_programs(FeatureSet{kernel(true, true, true), *parse_deny("all")}, true);
  EXPECT_FALSE(p.has_optional());
  EXPECT_TRUE(p.idle_check);
  EXPECT_EQ(p.describe().at("denied"), "atomics,insert,io_done,io_start,iter");
  EXPECT_TRUE(p.compat);
  EXPECT_EQ(p.describe().at("bpf_object"), "without fetching atomics or spin locks (before 5.12)");
  EXPECT_EQ(p.describe().at("lost_completions"), "sysfs idle check");
}

TEST(LoadPlan, MinimalIsTheRetryAfterAFailedLoad) {
  auto full = plan_programs(FeatureSet{kernel(true, true, true, 2), {}}, true);
  auto m = full.minimal();
  EXPECT_FALSE(m.has_optional());
  EXPECT_TRUE(m.queue_arg);  // the prototype is not optional
  EXPECT_TRUE(m.idle_check);
  EXPECT_TRUE(m.retried);
  EXPECT_EQ(m.describe().at("optional_programs"), "off after a failed load");
}

TEST(LoadPlan, AutoloadNamesEveryProgramOnceWithTheRightVariant) {
  auto p = plan_programs(FeatureSet{kernel(false, true, true), {}}, true, true);
  auto a = program_autoload(p);
  ASSERT_EQ(a.size(), 15u);
  std::map<std::string, bool> m(a.begin(), a.end());
  EXPECT_EQ(m.size(), 15u);
  EXPECT_TRUE(m["blkrr_issue"] && !m["blkrr_issue_q"]);
  EXPECT_TRUE(m["blkrr_insert"] && !m["blkrr_insert_q"]);
  EXPECT_TRUE(m["blkrr_io_done"] && !m["blkrr_check"]);
  auto old = program_autoload(plan_programs(FeatureSet{kernel(true, false, false, 2), {}}, true));
  std::map<std::string, bool> o(old.begin(), old.end());
  EXPECT_TRUE(!o["blkrr_issue"] && o["blkrr_issue_q"] && o["blkrr_requeue_q"]);
  EXPECT_TRUE(o["blkrr_check"] && !o["blkrr_io_start"] && o["blkrr_insert_q"]);
  EXPECT_TRUE(!m["blkrr_bio_queue"] && !m["blkrr_bio_queue_q"]);  // no volumes given
  // No bio-level device selected: none of the bio-level programs.
  EXPECT_TRUE(!m["blkrr_biolvl_queue"] && !m["blkrr_biolvl_queue_q"] &&
              !m["blkrr_biolvl_complete"]);
  EXPECT_EQ(p.describe().count("bio_level"), 0u);
}

TEST(LoadPlan, StackedVolumesLoadTheBioQueueVariantOfTheKernel) {
  KernelFeatures k = kernel(true, true, false);
  k.bio_queue_args = 1;
  auto p = plan_programs(FeatureSet{k, {}}, false, false, true);
  std::map<std::string, bool> m;
  for (const auto& [name, on] : program_autoload(p)) m[name] = on;
  EXPECT_TRUE(m["blkrr_bio_queue"] && !m["blkrr_bio_queue_q"]);
  EXPECT_EQ(p.describe().count("stack_attribution"), 1u);
  EXPECT_TRUE(p.notes.empty());
  EXPECT_FALSE(p.minimal().bio_queue);  // optional: off in the retry
  k.bio_queue_args = 2;                 // before 5.11
  m.clear();
  for (const auto& [name, on] :
       program_autoload(plan_programs(FeatureSet{k, {}}, false, false, true)))
    m[name] = on;
  EXPECT_TRUE(!m["blkrr_bio_queue"] && m["blkrr_bio_queue_q"]);
  k.bio_queue_args = -1;
  auto none = plan_programs(FeatureSet{k, {}}, false, false, true);
  EXPECT_FALSE(none.bio_queue);
  ASSERT_EQ(none.notes.size(), 1u);
  EXPECT_NE(none.notes[0].find("block_bio_queue"), std::string::npos) << none.notes[0];
}

TEST(LoadPlan, BioLevelDevicesLoadQueueAndCompleteAndKeepThemInTheRetry) {
  KernelFeatures k = kernel(true, true, false);
  k.bio_queue_args = 1;
  k.bio_complete_args = 2;
  auto p = plan_programs(FeatureSet{k, {}}, false, false, false, true);
  EXPECT_TRUE(p.bio_level);
  EXPECT_FALSE(p.bio_queue);  // the attribution program is another matter
  std::map<std::string, bool> m;
  for (const auto& [name, on] : program_autoload(p)) m[name] = on;
  EXPECT_TRUE(m["blkrr_biolvl_queue"] && !m["blkrr_biolvl_queue_q"] && m["blkrr_biolvl_complete"]);
  EXPECT_EQ(p.describe().count("bio_level"), 1u);
  EXPECT_TRUE(p.minimal().bio_level);  // the selected device needs it
  EXPECT_EQ(bio_level_refusal(k), "");
  k.bio_queue_args = 2;  // before 5.11
  m.clear();
  for (const auto& [name, on] :
       program_autoload(plan_programs(FeatureSet{k, {}}, false, false, false, true)))
    m[name] = on;
  EXPECT_TRUE(!m["blkrr_biolvl_queue"] && m["blkrr_biolvl_queue_q"] && m["blkrr_biolvl_complete"]);
  // Not wanted: not loaded, whatever the kernel has.
  EXPECT_FALSE(plan_programs(FeatureSet{k, {}}, false, false, true, false).bio_level);
}

TEST(LoadPlan, BioLevelNeedsBlockBioCompleteWithTheKnownPrototype) {
  KernelFeatures k = kernel(true, true, false);
  k.bio_queue_args = 1;
  k.bio_complete_args = -1;
  EXPECT_FALSE(plan_programs(FeatureSet{k, {}}, false, false, false, true).bio_level);
  EXPECT_EQ(bio_level_refusal(k), "block_bio_complete is not in this kernel's BTF");
  k.bio_complete_args = 3;
  EXPECT_FALSE(plan_programs(FeatureSet{k, {}}, false, false, false, true).bio_level);
  EXPECT_NE(bio_level_refusal(k).find("3 arguments"), std::string::npos);
  k.bio_complete_args = 2;
  k.bio_queue_args = -1;
  EXPECT_FALSE(plan_programs(FeatureSet{k, {}}, false, false, false, true).bio_level);
  EXPECT_EQ(bio_level_refusal(k), "block_bio_queue is not in this kernel's BTF");
}

}  // namespace
}  // namespace blkrr::capture
