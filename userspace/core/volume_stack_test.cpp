// Striped levels of a stack read from a fake sysfs: md RAID0 members and
// device-mapper striped tables, mapped down to the disks.
#include "core/volume_stack.h"

#include <gtest/gtest.h>

#include "core/device.h"
#include "core/fake_sysfs_test.h"

namespace blkrr {
namespace {

const DevT kLoop0 = make_dev(7, 0);
const DevT kSda = make_dev(8, 0);

Extent striped(uint64_t vol, uint64_t len, DevT dev, uint64_t at, uint32_t stripe) {
  Extent e{vol, len, dev, at};
  e.stripes = 2;
  e.stripe = stripe;
  e.chunk = 128;
  return e;
}

class StripedSysfs : public FakeSysfs {
 protected:
  // md1: RAID0 of 2048 sectors in chunks of 64 KiB, loop0 in slot 0 (data
  // 8 sectors in) and sda2 in slot 1 (16 sectors in), 512 KiB of each.
  void raid0() {
    disk("devices/virtual/block/md1", "9:1", 2048);
    write("devices/virtual/block/md1/md/level", "raid0");
    write("devices/virtual/block/md1/md/chunk_size", "65536");
    write("devices/virtual/block/md1/md/raid_disks", "2");
    member("loop0", "../../../loop0", "0", "8");
    member("sda2", "../../../../../pci0/block/sda/sda2", "1", "16");
    link("devices/virtual/block/md1/slaves/loop0", "../../loop0");
    link("devices/virtual/block/md1/slaves/sda2", "../../../../pci0/block/sda/sda2");
    link("class/block/md1", "../../devices/virtual/block/md1");
    link("dev/block/9:1", "../../devices/virtual/block/md1");
  }
  void member(const std::string& name, const std::string& block, const char* slot,
              const char* offset) {
    const std::string d = "devices/virtual/block/md1/md/dev-" + name;
    write(d + "/state", "in_sync");
    write(d + "/slot", slot);
    write(d + "/offset", offset);
    write(d + "/size", "512");
    link(d + "/block", block);
  }
  Result<VolumeMap> map(const std::string& name, const DmTableReader& tables) {
    auto sel = resolve_device(name, sys());
    if (!sel) return sel.error();
    return map_volume(*sel, tables, sys());
  }
};

Result<ExtentMap> no_tables(DevT) {
  return Error(ErrorKind::kNotFound, "no table");
}

TEST_F(StripedSysfs, Raid0MapsToStripesOfItsMembers) {
  raid0();
  auto md = map("md1", no_tables);
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_EQ(md->extents,
            (ExtentMap{striped(0, 1920, kLoop0, 8, 0), striped(128, 1920, kSda, 2064, 1)}));
  EXPECT_EQ(md->nr_sectors, 2048u);
  EXPECT_NE(md->stack.find("md1 (raid0)"), std::string::npos) << md->stack;
  EXPECT_EQ(volume_sector_of(md->extents, kSda, 2064 + 130, 8), 386u);  // row 1 of sda2
}

TEST_F(StripedSysfs, Raid0OfMembersOfDifferentSizesIsRefusedWithTheMembers) {
  raid0();
  write("devices/virtual/block/md1/md/dev-sda2/size", "1024");
  write("devices/virtual/block/md1/size", "3072");
  auto md = map("md1", no_tables);
  ASSERT_FALSE(md.ok());
  EXPECT_EQ(md.error().kind, ErrorKind::kUsage);
  EXPECT_NE(md.error().message.find("md1 is md RAID0 of members of different sizes"),
            std::string::npos)
      << md.error().message;
  EXPECT_NE(md.error().message.find("Record the devices below it instead: -d"), std::string::npos)
      << md.error().message;
}

TEST_F(StripedSysfs, Raid0WithUnreadableLayoutIsBadInput) {
  raid0();
  write("devices/virtual/block/md1/md/chunk_size", "0");
  auto zero = map("md1", no_tables);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(zero.error().message.find("md/chunk_size (0 bytes)"), std::string::npos)
      << zero.error().message;
  write("devices/virtual/block/md1/md/chunk_size", "65536");
  write("devices/virtual/block/md1/md/dev-sda2/slot", "none");  // a spare, not a stripe
  auto spare = map("md1", no_tables);
  ASSERT_FALSE(spare.ok());
  EXPECT_NE(spare.error().message.find("not all of which sysfs lists in a slot"), std::string::npos)
      << spare.error().message;
}

// dm-1 (striped over sda2 and loop0) under dm-2 (crypt, 64 sectors in):
// three levels, the stripes shifted by the crypt offset.
TEST_F(StripedSysfs, CryptOverADeviceMapperStripeMapsToTheDisks) {
  for (const char* n : {"dm-1", "dm-2"}) {
    disk(std::string("devices/virtual/block/") + n, n[3] == '1' ? "253:1" : "253:2",
         n[3] == '1' ? 1024 : 960);
    link(std::string("class/block/") + n, std::string("../../devices/virtual/block/") + n);
  }
  write("devices/virtual/block/dm-1/dm/name", "stripes");
  write("devices/virtual/block/dm-2/dm/name", "secret");
  link("dev/block/253:1", "../../devices/virtual/block/dm-1");
  link("dev/block/253:2", "../../devices/virtual/block/dm-2");
  DmTableReader tables = [](DevT dm) -> Result<ExtentMap> {
    if (dm == make_dev(253, 1)) return parse_dm_target("striped", 0, 1024, "2 128 8:2 0 7:0 1024");
    if (dm == make_dev(253, 2))
      return parse_dm_target("crypt", 0, 960, "aes-xts-plain64 00112233 0 253:1 64");
    return no_tables(dm);
  };
  auto crypt = map("/dev/mapper/secret", tables);
  ASSERT_TRUE(crypt.ok()) << crypt.error().message;
  Extent a = striped(0, 832, kSda, 2048 + 64, 0);
  a.phase = 64;
  EXPECT_EQ(crypt->extents, (ExtentMap{a, striped(64, 896, kLoop0, 1024, 1)}));
  auto bad = map("/dev/mapper/stripes", [](DevT) -> Result<ExtentMap> {
    return parse_dm_target("striped", 0, 1000, "2 128 8:2 0 7:0 0");
  });
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kBadInput);
  EXPECT_NE(bad.error().message.find("no whole number of rows"), std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace blkrr
