// The fake sysfs tree of the device and stack tests (device_test.cpp,
// volume_stack_test.cpp): a fixture that builds it under a temporary folder.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace blkrr {

namespace fs = std::filesystem;

// A fake sysfs: loop0 (7:0), sda (8:0) with partition sda2 (8:2) at 2048.
class FakeSysfs : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("blkrr-sysfs-" + std::to_string(getpid()));
    fs::remove_all(root_);
    disk("devices/virtual/block/loop0", "7:0", 2048);
    write("devices/virtual/block/loop0/loop/backing_file", "/dev/shm/x.img");
    write("devices/virtual/block/loop0/queue/scheduler", "[none] mq-deadline");
    disk("devices/pci0/block/sda", "8:0", 1000000);
    write("devices/pci0/block/sda/device/model", "FAKEDISK  ");
    write("devices/pci0/block/sda/queue/logical_block_size", "4096");
    disk("devices/pci0/block/sda/sda2", "8:2", 5000);
    write("devices/pci0/block/sda/sda2/partition", "2");
    write("devices/pci0/block/sda/sda2/start", "2048");
    link("class/block/loop0", "../../devices/virtual/block/loop0");
    link("class/block/sda", "../../devices/pci0/block/sda");
    link("class/block/sda2", "../../devices/pci0/block/sda/sda2");
    link("dev/block/7:0", "../../devices/virtual/block/loop0");
    link("dev/block/8:0", "../../devices/pci0/block/sda");
    link("dev/block/8:2", "../../devices/pci0/block/sda/sda2");
    fs::create_directories(root_ / "devices/virtual/block/loop0/mq/0");
    fs::create_directories(root_ / "devices/pci0/block/sda/mq/0");
  }
  // Bio-based devices: dm-0 (vg-data) on sda2, md0 (raid1) on dm-0 and
  // loop0, zram0 with nothing below.
  void stack() {
    disk("devices/virtual/block/dm-0", "253:0", 4000);
    write("devices/virtual/block/dm-0/dm/name", "vg-data");
    link("devices/virtual/block/dm-0/slaves/sda2", "../../../../pci0/block/sda/sda2");
    disk("devices/virtual/block/md0", "9:0", 4000);
    write("devices/virtual/block/md0/md/level", "raid1");
    link("devices/virtual/block/md0/slaves/dm-0", "../../dm-0");
    link("devices/virtual/block/md0/slaves/loop0", "../../loop0");
    disk("devices/virtual/block/zram0", "251:0", 4000);
    for (const char* n : {"dm-0", "md0", "zram0"})
      link(std::string("class/block/") + n, std::string("../../devices/virtual/block/") + n);
    link("dev/block/253:0", "../../devices/virtual/block/dm-0");
    link("dev/block/9:0", "../../devices/virtual/block/md0");
    link("dev/block/251:0", "../../devices/virtual/block/zram0");
    link("devices/pci0/block/sda/sda2/holders/dm-0", "../../../../../virtual/block/dm-0");
    link("devices/virtual/block/dm-0/holders/md0", "../../md0");
    link("devices/virtual/block/loop0/holders/md0", "../../md0");
  }
  // md0 of stack() as a RAID1 of 1000 sectors: loop0 in slot 0, dm-0 in
  // slot 1, data 16 sectors into each.
  void raid1_members() {
    write("devices/virtual/block/md0/size", "1000");
    for (const char* m : {"dm-0", "loop0"}) {
      std::string d = std::string("devices/virtual/block/md0/md/dev-") + m;
      write(d + "/state", "in_sync");
      write(d + "/slot", m[0] == 'd' ? "1" : "0");
      write(d + "/offset", "16");
      link(d + "/block", std::string("../../../") + m);
    }
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& content) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << content << "\n";
  }
  void disk(const std::string& rel, const std::string& dev, uint64_t sectors) {
    write(rel + "/dev", dev);
    write(rel + "/size", std::to_string(sectors));
  }
  void link(const std::string& rel, const std::string& target) {
    fs::create_directories((root_ / rel).parent_path());
    fs::create_directory_symlink(target, root_ / rel);
  }
  std::string sys() const { return root_.string(); }
  fs::path root_;
};

}  // namespace blkrr
