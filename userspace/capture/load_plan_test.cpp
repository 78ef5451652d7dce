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
  k.tp_btf = k.ringbuf = k.cgroup_id_helper = {true, ""};
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

TEST(LoadPlan, IteratorsDeniedUseIoDoneAndTheIdleCheckWithOneLine) {
  auto p = plan_programs(FeatureSet{kernel(false, true, true), {}}, false);
  EXPECT_FALSE(p.check);
  EXPECT_TRUE(p.io_done);
  EXPECT_TRUE(p.idle_check);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("map_iter off"), std::string::npos);
  EXPECT_EQ(p.describe().at("lost_completions"), "block_io_done + sysfs idle check");
}

TEST(LoadPlan, Kernel61WithoutIoStartOrIoDone) {
  auto p = plan_programs(FeatureSet{kernel(true, false, false), {}}, true);
  EXPECT_FALSE(p.io_start);
  EXPECT_FALSE(p.insert);  // queue time needs the creator's entry
  EXPECT_TRUE(p.check);
  EXPECT_EQ(p.describe().at("attribution"), "block_rq_issue");
  ASSERT_EQ(p.notes.size(), 2u);  // block_io_start, queue time
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
  EXPECT_EQ(p.describe().at("denied"), "insert,io_done,io_start,iter");
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
  auto p = plan_programs(FeatureSet{kernel(false, true, true), {}}, true);
  auto a = program_autoload(p);
  ASSERT_EQ(a.size(), 10u);
  std::map<std::string, bool> m(a.begin(), a.end());
  EXPECT_EQ(m.size(), 10u);
  EXPECT_TRUE(m["blkrr_issue"] && !m["blkrr_issue_q"]);
  EXPECT_TRUE(m["blkrr_insert"] && !m["blkrr_insert_q"]);
  EXPECT_TRUE(m["blkrr_io_done"] && !m["blkrr_check"]);
  auto old = program_autoload(plan_programs(FeatureSet{kernel(true, false, false, 2), {}}, true));
  std::map<std::string, bool> o(old.begin(), old.end());
  EXPECT_TRUE(!o["blkrr_issue"] && o["blkrr_issue_q"] && o["blkrr_requeue_q"]);
  EXPECT_TRUE(o["blkrr_check"] && !o["blkrr_io_start"] && !o["blkrr_insert_q"]);
}

}  // namespace
}  // namespace blkrr::capture
