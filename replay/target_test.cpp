// The replay target's policies: what is refused and why, and how deep the
// queue may go on a device.
#include "replay/target.h"

#include <gtest/gtest.h>

namespace blkrr::replay {
namespace {

TEST(FitQueueDepth, CapsAtTheDeviceRequestSlotsAndSaysSo) {
  Target t;
  t.path = "/dev/loop9";
  t.nr_requests = 128;
  EXPECT_EQ(fit_queue_depth(64, t), 64u);
  EXPECT_EQ(fit_queue_depth(128, t), 128u);
  EXPECT_TRUE(t.warnings.empty());
  EXPECT_EQ(fit_queue_depth(256, t), 128u);
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("queue depth 256 capped at 128"), std::string::npos);
  EXPECT_NE(t.warnings[0].find("/dev/loop9"), std::string::npos);
}

TEST(FitQueueDepth, UnknownSlotsKeepTheRequestedDepth) {
  Target t;  // a regular file, or sysfs unreadable
  EXPECT_EQ(fit_queue_depth(4096, t), 4096u);
  EXPECT_TRUE(t.warnings.empty());
}

TEST(SafetyRefusal, MountedSignedPartitionedAndHeldDevicesAreRefused) {
  DeviceSafety clean;
  EXPECT_FALSE(safety_refusal("/dev/x", clean).has_value());
  DeviceSafety mounted;
  mounted.mounted = true;
  mounted.mount_point = "/mnt/data";
  auto m = safety_refusal("/dev/x", mounted);
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("mounted on /mnt/data"), std::string::npos);
  DeviceSafety fs;
  fs.signature = "ext4 filesystem";
  auto f = safety_refusal("/dev/x", fs);
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->find("ext4"), std::string::npos);
  DeviceSafety parts;
  parts.has_partitions = true;
  EXPECT_TRUE(safety_refusal("/dev/x", parts).has_value());
  DeviceSafety held;
  held.holders = true;
  EXPECT_TRUE(safety_refusal("/dev/x", held).has_value());
}

}  // namespace
}  // namespace blkrr::replay
