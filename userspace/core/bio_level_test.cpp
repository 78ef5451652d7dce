// Which devices are captured at the bio level: read from a fake sysfs with
// dm, md and zram devices.
#include "core/bio_level.h"

#include <gtest/gtest.h>

#include "core/fake_sysfs_test.h"

namespace blkrr {
namespace {

// dm-0 (vg-data): a thin volume; every other table is unknown.
Result<ExtentMap> thin_tables(DevT dm) {
  if (dm == make_dev(253, 0)) return parse_dm_target("thin", 0, 4000, "253:9 1");
  return Error(ErrorKind::kNotFound, "no table");
}

// dm-0 (vg-data): linear on sda2.
Result<ExtentMap> linear_tables(DevT) {
  return parse_dm_target("linear", 0, 4000, "8:2 0");
}

class BioLevel : public FakeSysfs {
 protected:
  Result<LevelChoice> choose(const std::string& name, const DmTableReader& tables) {
    auto sel = resolve_device(name, sys());
    if (!sel) return sel.error();
    return choose_capture_level(*sel, tables, sys());
  }
};

TEST_F(BioLevel, DisksLoopDevicesAndPartitionsKeepTheirRequests) {
  stack();
  for (const char* n : {"loop0", "sda", "sda2"}) {
    auto c = choose(n, thin_tables);
    ASSERT_TRUE(c.ok()) << n << ": " << c.error().message;
    EXPECT_EQ(c->level, CaptureLevel::kRequests) << n;
    EXPECT_TRUE(c->bio.name.empty()) << n;
  }
}

TEST_F(BioLevel, MappedVolumesKeepTheDiskLevel) {
  stack();
  raid1_members();
  auto md = choose("md0", linear_tables);
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_EQ(md->level, CaptureLevel::kVolume);
  ASSERT_TRUE(md->volume.has_value());
  EXPECT_EQ(md->volume->volume, make_dev(9, 0));
  auto dm = choose("dm-0", linear_tables);
  ASSERT_TRUE(dm.ok()) << dm.error().message;
  EXPECT_EQ(dm->level, CaptureLevel::kVolume);
}

TEST_F(BioLevel, ZramHasNoDiskBelowAndGoesBioLevel) {
  stack();
  auto c = choose("zram0", thin_tables);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->level, CaptureLevel::kBio);
  EXPECT_EQ(c->bio.dev, make_dev(251, 0));
  EXPECT_EQ(c->bio.name, "zram0");
  EXPECT_EQ(c->bio.why, "zram: no disk below");
  // What a kernel without block_bio_complete says instead: today's refusal.
  EXPECT_NE(c->refusal.find("zram0 is a bio-based device"), std::string::npos) << c->refusal;
}

TEST_F(BioLevel, UnmappedLevelsGoBioLevelWithTheirTargetOrLevel) {
  stack();
  auto dm = choose("dm-0", thin_tables);
  ASSERT_TRUE(dm.ok()) << dm.error().message;
  EXPECT_EQ(dm->level, CaptureLevel::kBio);
  EXPECT_EQ(dm->bio.why, "dm thin");
  EXPECT_EQ(dm->bio.dev, make_dev(253, 0));
  EXPECT_NE(dm->refusal.find("Record the devices below it instead: -d sda2"), std::string::npos)
      << dm->refusal;
  write("devices/virtual/block/md0/md/level", "raid5");
  auto md = choose("md0", linear_tables);
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_EQ(md->level, CaptureLevel::kBio);
  EXPECT_EQ(md->bio.why, "md raid5");
  EXPECT_NE(md->refusal.find("-d sda2 -d loop0"), std::string::npos) << md->refusal;
}

TEST_F(BioLevel, OtherMapErrorsAreNotTurnedIntoBioLevel) {
  stack();
  auto c = choose("dm-0", [](DevT) -> Result<ExtentMap> {
    return Error(ErrorKind::kPermission, "open /dev/mapper/control: EACCES");
  });
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::kPermission);
}

TEST_F(BioLevel, APartitionOfABioLevelDeviceIsRefusedWithTheWholeDevice) {
  stack();
  disk("devices/virtual/block/zram0/zram0p1", "251:1", 100);
  write("devices/virtual/block/zram0/zram0p1/partition", "1");
  write("devices/virtual/block/zram0/zram0p1/start", "8");
  link("class/block/zram0p1", "../../devices/virtual/block/zram0/zram0p1");
  link("dev/block/251:1", "../../devices/virtual/block/zram0/zram0p1");
  auto c = choose("zram0p1", thin_tables);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::kUsage);
  EXPECT_NE(c.error().message.find("name the whole device (-d zram0)"), std::string::npos)
      << c.error().message;
}

TEST(BioLevelReason, ShortNamesOfTheMapping) {
  EXPECT_EQ(bio_level_reason("dm-4 (pool): device-mapper target 'snapshot' at sector 0 does",
                             "device-mapper"),
            "dm snapshot");
  EXPECT_EQ(bio_level_reason("md0 is md RAID (raid6), whose sectors", "md RAID (raid6)"),
            "md raid6");
  EXPECT_EQ(bio_level_reason("a striped level over a striped device (253:1)", "device-mapper"),
            "device-mapper: a striped level over a striped level");
}

}  // namespace
}  // namespace blkrr
