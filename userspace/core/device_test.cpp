#include "core/device.h"
#include "core/device_stack.h"
#include "core/fake_sysfs_test.h"
#include "core/volume_stack.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace blkrr {
namespace {

TEST_F(FakeSysfs, ResolvesNamesAndMajMin) {
  auto a = resolve_device("loop0", sys());
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->disk, make_dev(7, 0));
  EXPECT_EQ(a->disk_name, "loop0");
  EXPECT_FALSE(a->part.has_value());
  auto b = resolve_device("8:0", sys());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->disk_name, "sda");
}

TEST_F(FakeSysfs, PartitionsResolveToDiskPlusRange) {
  for (const char* spec : {"sda2", "8:2"}) {
    auto p = resolve_device(spec, sys());
    ASSERT_TRUE(p.ok()) << spec << ": " << p.error().message;
    EXPECT_EQ(p->disk, make_dev(8, 0));
    ASSERT_TRUE(p->part.has_value());
    EXPECT_EQ(p->part->dev, make_dev(8, 2));
    EXPECT_EQ(p->part->name, "sda2");
    EXPECT_EQ(p->part->start_sector, 2048u);
    EXPECT_EQ(p->part->nr_sectors, 5000u);
  }
}

// Every way of naming no device is a usage error: exit status 2 in every
// command (docs/cli.md).
TEST_F(FakeSysfs, UnknownDevicesAreClearErrors) {
  auto r = resolve_device("sdz", sys());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("unknown block device 'sdz'"), std::string::npos);
  // "." and ".." name folders of sysfs that hold no device.
  for (const char* bad : {"sdz", "9:9", "/nonexistent/dev", "", "a/b", ".", ".."}) {
    auto e = resolve_device(bad, sys());
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.error().kind, ErrorKind::kUsage) << bad;
  }
  auto n = device_node("sdz", sys(), root_.string());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().kind, ErrorKind::kUsage);
  n = device_node("/nonexistent/dev", sys(), root_.string());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().kind, ErrorKind::kUsage);
}

// replay's DEVICE: a name or MAJ:MIN is the node of that device, a path
// stays as it is.
TEST_F(FakeSysfs, DeviceNodesOfNamesAndNumbers) {
  fs::path devdir = root_ / "devnodes";
  fs::create_directories(devdir / "block");
  if (mknod((devdir / "loop0").c_str(), S_IFBLK | 0600, makedev(7, 0)) != 0 ||
      mknod((devdir / "block/8:2").c_str(), S_IFBLK | 0600, makedev(8, 2)) != 0)
    GTEST_SKIP() << "cannot create device nodes (not root)";
  for (const char* spec : {"loop0", "7:0"}) {
    auto n = device_node(spec, sys(), devdir.string());
    ASSERT_TRUE(n.ok()) << spec << ": " << n.error().message;
    EXPECT_EQ(*n, (devdir / "loop0").string()) << spec;
  }
  auto p = device_node("sda2", sys(), devdir.string());  // no /dev/sda2: the MAJ:MIN link
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(*p, (devdir / "block/8:2").string());
  auto missing = device_node("sda", sys(), devdir.string());  // no node at all
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::kUsage);
  EXPECT_NE(missing.error().message.find("give its path"), std::string::npos);
  std::string path = (root_ / "disk.img").string();
  write("disk.img", "x");
  EXPECT_EQ(*device_node(path, sys(), devdir.string()), path);
}

TEST_F(FakeSysfs, DescribesDevices) {
  auto d = describe_device(make_dev(8, 0), sys());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->name, "sda");
  EXPECT_EQ(d->size_bytes, 1000000u * 512);
  EXPECT_EQ(d->model, "FAKEDISK");
  EXPECT_EQ(d->logical_block_size, 4096u);
  ASSERT_EQ(d->partitions.size(), 1u);
  EXPECT_EQ(d->partitions[0].name, "sda2");
  auto l = describe_device(make_dev(7, 0), sys());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->model, "loop:/dev/shm/x.img");
  EXPECT_EQ(l->scheduler, "none");
  auto all = list_devices(sys());
  ASSERT_EQ(all.size(), 2u);  // partitions are not listed as disks
  EXPECT_EQ(describe_device(make_dev(9, 9), sys()).error().kind, ErrorKind::kNotFound);
}

TEST_F(FakeSysfs, NamerFindsPartitionOfSector) {
  DeviceNamer n(sys());
  EXPECT_EQ(n.name(make_dev(8, 2)), "sda2");
  EXPECT_EQ(n.name(make_dev(99, 1)), "99:1");
  EXPECT_EQ(n.partition_of(make_dev(8, 0), 2048), make_dev(8, 2));
  EXPECT_EQ(n.partition_of(make_dev(8, 0), 2047), make_dev(8, 0));
  EXPECT_EQ(n.partition_of(make_dev(8, 0), 2048 + 5000), make_dev(8, 0));
}

TEST_F(FakeSysfs, QueueNrRequestsOfDisksAndTheirPartitions) {
  write("devices/pci0/block/sda/queue/nr_requests", "64");
  EXPECT_EQ(queue_nr_requests(make_dev(8, 0), sys()), 64u);
  EXPECT_EQ(queue_nr_requests(make_dev(8, 2), sys()), 64u);           // the disk's queue
  EXPECT_EQ(queue_nr_requests(make_dev(7, 0), sys()), std::nullopt);  // no file
  write("devices/virtual/block/loop0/queue/nr_requests", "0");
  EXPECT_EQ(queue_nr_requests(make_dev(7, 0), sys()), std::nullopt);
  write("devices/virtual/block/loop0/queue/nr_requests", "many");
  EXPECT_EQ(queue_nr_requests(make_dev(7, 0), sys()), std::nullopt);
  EXPECT_EQ(queue_nr_requests(make_dev(9, 9), sys()), std::nullopt);
}

TEST_F(FakeSysfs, KernelInflightSumsReadsAndWrites) {
  write("devices/virtual/block/loop0/inflight", "       3        4");
  EXPECT_EQ(kernel_inflight(make_dev(7, 0), sys()), 7u);
  write("devices/pci0/block/sda/inflight", "0 0");
  EXPECT_EQ(kernel_inflight(make_dev(8, 0), sys()), 0u);
  // No file, garbage, unknown device: unknown, never a made-up 0.
  EXPECT_EQ(kernel_inflight(make_dev(8, 2), sys()), std::nullopt);
  write("devices/pci0/block/sda/sda2/inflight", "x y");
  EXPECT_EQ(kernel_inflight(make_dev(8, 2), sys()), std::nullopt);
  EXPECT_EQ(kernel_inflight(make_dev(9, 9), sys()), std::nullopt);
  // I/O statistics off: the kernel's 0 means nothing.
  write("devices/virtual/block/loop0/queue/iostats", "0");
  EXPECT_EQ(kernel_inflight(make_dev(7, 0), sys()), std::nullopt);
  write("devices/virtual/block/loop0/queue/iostats", "1");
  EXPECT_EQ(kernel_inflight(make_dev(7, 0), sys()), 7u);
}

// Recording a loop device with no file attached recorded nothing without a word.
TEST_F(FakeSysfs, ADeviceOfNoSizeIsNamed) {
  auto sel = resolve_device("loop0", sys());
  ASSERT_TRUE(sel.ok());
  EXPECT_TRUE(require_nonempty_device(*sel, "-d loop0", sys()).ok());
  write("devices/virtual/block/loop0/size", "0");
  fs::create_directories(root_ / "devices/virtual/block/loop0/loop");
  auto st = require_nonempty_device(*sel, "-d loop0", sys());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kUsage);
  EXPECT_EQ(st.error().message,
            "-d loop0: loop0 has a size of 0 bytes: no file is attached to the loop device "
            "(attach one with losetup /dev/loop0 FILE), so it can have no I/O and a recording "
            "of it would be empty");
  auto sda = resolve_device("sda", sys());
  ASSERT_TRUE(sda.ok());
  EXPECT_TRUE(require_nonempty_device(*sda, "-d sda", sys()).ok());
}

TEST_F(FakeSysfs, RequestDevicesPassTheCheck) {
  stack();
  for (const char* name : {"loop0", "sda", "sda2", "8:2"}) {
    auto sel = resolve_device(name, sys());
    ASSERT_TRUE(sel.ok()) << name;
    EXPECT_TRUE(require_request_device(*sel, "-d x", sys()).ok()) << name;
  }
}

// A device-mapper or md device has no requests: naming it is refused with the
// disks below it, through every level, never accepted to record nothing.
TEST_F(FakeSysfs, BioBasedDevicesAreRefusedWithTheDevicesBelow) {
  stack();
  auto dm = resolve_device("dm-0", sys());
  ASSERT_TRUE(dm.ok());
  EXPECT_FALSE(has_request_queue(dm->disk, sys()));
  EXPECT_EQ(stacked_kind(dm->disk, sys()), "device-mapper (/dev/mapper/vg-data)");
  EXPECT_EQ(request_devices_below(dm->disk, sys()), std::vector<std::string>{"sda2"});
  auto st = require_request_device(*dm, "-d dm-0", sys());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().kind, ErrorKind::kUsage);
  EXPECT_NE(st.error().message.find("-d dm-0: dm-0 is a device-mapper (/dev/mapper/vg-data) "
                                    "device with no requests of its own"),
            std::string::npos)
      << st.error().message;
  EXPECT_NE(st.error().message.find("Name those instead: -d sda2 ("), std::string::npos)
      << st.error().message;

  auto md = resolve_device("9:0", sys());
  ASSERT_TRUE(md.ok());
  EXPECT_EQ(stacked_kind(md->disk, sys()), "md RAID (raid1)");
  EXPECT_EQ(request_devices_below(md->disk, sys()), (std::vector<std::string>{"sda2", "loop0"}));
  auto mst = require_request_device(*md, "-d 9:0", sys());
  ASSERT_FALSE(mst.ok());
  EXPECT_NE(mst.error().message.find("-d sda2 -d loop0"), std::string::npos) << mst.error().message;

  auto z = resolve_device("zram0", sys());
  ASSERT_TRUE(z.ok());
  EXPECT_EQ(stacked_kind(z->disk, sys()), "bio-based");
  auto zst = require_request_device(*z, "-d zram0", sys());
  ASSERT_FALSE(zst.ok());
  EXPECT_NE(zst.error().message.find("No device below it is known"), std::string::npos)
      << zst.error().message;
}

// A stacked device is accepted by each of its names: sysfs name, MAJ:MIN,
// device-mapper name (bare or under /dev/mapper, also without a node there)
// and LVM's VG/LV (bare or under /dev).
TEST_F(FakeSysfs, StackedDevicesResolveByEveryName) {
  stack();
  for (const char* spec :
       {"dm-0", "253:0", "vg-data", "/dev/mapper/vg-data", "vg/data", "/dev/vg/data"}) {
    auto r = resolve_device(spec, sys());
    ASSERT_TRUE(r.ok()) << spec << ": " << r.error().message;
    EXPECT_EQ(r->disk, make_dev(253, 0)) << spec;
    EXPECT_EQ(r->disk_name, "dm-0") << spec;
    EXPECT_EQ(r->spec, spec);
  }
  auto md = resolve_device("/dev/md0", sys());  // no node in this fake /dev: sysfs has it
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_EQ(md->disk, make_dev(9, 0));
  EXPECT_FALSE(resolve_device("vg/other", sys()).ok());
  EXPECT_FALSE(resolve_device("/dev/mapper/nothing", sys()).ok());
  EXPECT_FALSE(resolve_device("a/b/c", sys()).ok());
  EXPECT_EQ(dm_device_named("vg-data", sys()), "dm-0");
  EXPECT_EQ(dm_device_named("vg", sys()), "");
  EXPECT_EQ(lvm_dm_name("my-vg", "lv-1"), "my--vg-lv--1");
  EXPECT_EQ(lvm_dm_name("vg", "data"), "vg-data");
}

// The stack below a device through every level, and the holders above one.
TEST_F(FakeSysfs, StackBelowAndHoldersAbove) {
  stack();
  StackNode md = stack_below(make_dev(9, 0), sys());
  EXPECT_EQ(md.kind, "md");
  EXPECT_EQ(md.label, "raid1");
  ASSERT_EQ(md.below.size(), 2u);
  EXPECT_EQ(md.below[0].kind, "dm");
  EXPECT_EQ(md.below[0].below[0].kind, "partition");
  EXPECT_EQ(md.below[0].below[0].dev, make_dev(8, 2));
  EXPECT_EQ(md.below[0].below[0].below[0].kind, "disk");
  EXPECT_EQ(format_stack(md), "md0 (raid1) > {dm-0 (vg-data) > sda2 > sda, loop0}");
  EXPECT_EQ(format_stack(stack_below(make_dev(8, 0), sys())), "sda");
  EXPECT_EQ(holders_above(make_dev(8, 2), sys()),
            (std::vector<std::string>{"dm-0 (vg-data)", "md0 (raid1)"}));
  EXPECT_EQ(holders_above(make_dev(7, 0), sys()), std::vector<std::string>{"md0 (raid1)"});
  EXPECT_TRUE(holders_above(make_dev(9, 0), sys()).empty());
}

// Device-mapper tables as DM_TABLE_STATUS gives them, by device.
Result<ExtentMap> fake_tables(DevT dm) {
  if (dm == make_dev(253, 0)) {  // vg-data: two segments, on sda2 and loop0
    auto a = parse_dm_target("linear", 0, 3000, "8:2 100");
    auto b = parse_dm_target("linear", 3000, 1000, "7:0 0");
    return ExtentMap{a->at(0), b->at(0)};
  }
  if (dm == make_dev(253, 1)) {  // a crypt volume on vg-data, 16 sectors of header
    auto c = parse_dm_target("crypt", 0, 3984, "aes-xts-plain64 00112233 0 253:0 16");
    if (!c) return c.error();
    return *c;
  }
  return Error(ErrorKind::kUnsupported, "device-mapper target 'striped' at sector 0");
}

// A partition, a linear volume over a partition and a loop device, and a
// crypt volume on it: each mapped down to the disks with requests.
TEST_F(FakeSysfs, LinearStacksMapThroughEveryLevel) {
  stack();
  disk("devices/virtual/block/dm-1", "253:1", 3984);
  write("devices/virtual/block/dm-1/dm/name", "secret");
  link("devices/virtual/block/dm-1/slaves/dm-0", "../../dm-0");
  link("class/block/dm-1", "../../devices/virtual/block/dm-1");
  link("dev/block/253:1", "../../devices/virtual/block/dm-1");

  auto part = map_volume(*resolve_device("sda2", sys()), fake_tables, sys());
  ASSERT_TRUE(part.ok()) << part.error().message;
  EXPECT_EQ(part->extents, (ExtentMap{{0, 5000, make_dev(8, 0), 2048}}));

  auto lin = map_volume(*resolve_device("vg/data", sys()), fake_tables, sys());
  ASSERT_TRUE(lin.ok()) << lin.error().message;
  EXPECT_EQ(lin->extents,
            (ExtentMap{{0, 3000, make_dev(8, 0), 2148}, {3000, 1000, make_dev(7, 0), 0}}));
  EXPECT_EQ(lin->name, "dm-0");
  EXPECT_EQ(lin->label, "vg-data");
  EXPECT_EQ(lin->stack, "dm-0 (vg-data) > sda2 > sda");

  auto crypt = map_volume(*resolve_device("/dev/mapper/secret", sys()), fake_tables, sys());
  ASSERT_TRUE(crypt.ok()) << crypt.error().message;
  EXPECT_EQ(crypt->extents,
            (ExtentMap{{0, 2984, make_dev(8, 0), 2164}, {2984, 1000, make_dev(7, 0), 0}}));
  EXPECT_EQ(crypt->nr_sectors, 3984u);
  EXPECT_EQ(crypt->stack, "dm-1 (secret) > dm-0 (vg-data) > sda2 > sda");
}

// md RAID1: the lowest slot's member takes the volume's writes, every
// member its reads; each member's data starts at its md offset.
TEST_F(FakeSysfs, Raid1MapsToAMirrorOfItsMembers) {
  stack();
  raid1_members();
  auto md = map_volume(*resolve_device("/dev/md0", sys()), fake_tables, sys());
  ASSERT_TRUE(md.ok()) << md.error().message;
  EXPECT_EQ(md->extents, (ExtentMap{{0, 1000, make_dev(7, 0), 16, false},
                                    {0, 1000, make_dev(8, 0), 2164, true, 1}}));
  write("devices/virtual/block/md0/md/dev-loop0/state", "faulty");
  auto degraded = map_volume(*resolve_device("md0", sys()), fake_tables, sys());
  ASSERT_TRUE(degraded.ok());
  EXPECT_EQ(degraded->extents, (ExtentMap{{0, 1000, make_dev(8, 0), 2164, false}}));
}

// Attribution through the stack maps every volume at the top of its stack:
// here md0 (a mirror of dm-0 and loop0) and dm-1 (crypt on dm-0); dm-0 is held
// by both, zram0 is no dm or md device. A RAID5 at the top is left out.
TEST_F(FakeSysfs, TopVolumesAreTheLinearOnesNothingHolds) {
  stack();
  raid1_members();
  disk("devices/virtual/block/dm-1", "253:1", 3984);
  write("devices/virtual/block/dm-1/dm/name", "secret");
  link("devices/virtual/block/dm-1/slaves/dm-0", "../../dm-0");
  link("class/block/dm-1", "../../devices/virtual/block/dm-1");
  link("dev/block/253:1", "../../devices/virtual/block/dm-1");
  link("devices/virtual/block/dm-0/holders/dm-1", "../../dm-1");
  auto top = map_top_volumes(fake_tables, sys());
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].name, "md0");
  EXPECT_EQ(top[0].extents.size(), 2u);
  EXPECT_EQ(top[1].name, "dm-1");
  EXPECT_EQ(top[1].extents,
            (ExtentMap{{0, 2984, make_dev(8, 0), 2164}, {2984, 1000, make_dev(7, 0), 0}}));
  write("devices/virtual/block/md0/md/level", "raid5");
  top = map_top_volumes(fake_tables, sys());
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].name, "dm-1");
}

// Other md levels and targets that are not linear are refused, naming the
// level and the request devices to record instead.
TEST_F(FakeSysfs, NonLinearStacksAreRefusedWithTheMembers) {
  stack();
  write("devices/virtual/block/md0/md/level", "raid5");
  auto md = map_volume(*resolve_device("md0", sys()), fake_tables, sys());
  ASSERT_FALSE(md.ok());
  EXPECT_EQ(md.error().kind, ErrorKind::kUsage);
  EXPECT_NE(md.error().message.find("md0 is md RAID (raid5)"), std::string::npos)
      << md.error().message;
  EXPECT_NE(md.error().message.find("instead: -d sda2 -d loop0"), std::string::npos)
      << md.error().message;
  auto striped = map_volume(
      *resolve_device("dm-0", sys()),
      [](DevT) -> Result<ExtentMap> { return Error(ErrorKind::kUnsupported, "target 'striped'"); },
      sys());
  ASSERT_FALSE(striped.ok());
  EXPECT_NE(striped.error().message.find("dm-0 (vg-data): target 'striped'"), std::string::npos)
      << striped.error().message;
}

TEST(DeviceSafety, RegularFileWithoutSignature) {
  std::string path = fs::temp_directory_path() / ("blkrr-safety-" + std::to_string(getpid()));
  {
    std::ofstream f(path);
    f << std::string(1 << 20, '\0');
  }
  auto s = probe_device_safety(path);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_FALSE(s->is_block_device);
  EXPECT_FALSE(s->mounted);
  EXPECT_EQ(s->signature, "");
  fs::remove(path);
  EXPECT_FALSE(probe_device_safety(path).ok());
}

}  // namespace
}  // namespace blkrr
