// Block device resolution and description (sysfs, libblkid).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/request.h"
#include "core/result.h"

namespace blkrr {

struct PartitionInfo {
  DevT dev = 0;
  std::string name;
  uint64_t start_sector = 0;  // on the whole disk
  uint64_t nr_sectors = 0;
};

struct DeviceInfo {
  DevT dev = 0;  // whole disk
  std::string name;
  uint64_t size_bytes = 0;
  uint32_t logical_block_size = 512;
  uint32_t physical_block_size = 512;
  std::string model;
  std::string scheduler;  // the active one, e.g. "none", "mq-deadline"
  std::vector<PartitionInfo> partitions;
};

// A device argument resolved: the whole disk, and the partition if one was named.
struct DeviceSelection {
  DevT disk = 0;
  std::string disk_name;
  std::optional<PartitionInfo> part;
  std::string spec;  // what the user wrote
};

// "MAJ:MIN" as sysfs writes it ("253:3"), or nullopt.
std::optional<DevT> parse_majmin(std::string_view s);

// Accepts "/dev/sdX", "sdX", "MAJ:MIN", and partitions of each ("/dev/sda2",
// "sda2", "8:2"). `sysfs` is the sysfs mount point (tests pass a fake tree).
// Every failure is ErrorKind::kUsage (exit status 2 in every command).
Result<DeviceSelection> resolve_device(std::string_view arg, const std::string& sysfs = "/sys");
// The node to open for a device argument, for the commands that open one
// (replay): a path ("/dev/sdb", "./disk.img") as it is; a name or MAJ:MIN
// ("loop1", "sda2", "7:1") resolved as resolve_device does, to its node in
// `dev_dir` (/dev/NAME, else /dev/block/MAJ:MIN); a name that is no device
// but a file in the working directory, that file (replay --allow-file).
// Errors are ErrorKind::kUsage.
Result<std::string> device_node(std::string_view arg, const std::string& sysfs = "/sys",
                                const std::string& dev_dir = "/dev");
Result<DeviceInfo> describe_device(DevT disk, const std::string& sysfs = "/sys");
// Every whole-disk block device with its partitions.
std::vector<DeviceInfo> list_devices(const std::string& sysfs = "/sys");
// Requests the kernel counts in flight on a device now (sysfs "inflight":
// reads + writes), or nullopt when it cannot be read or the device's I/O
// statistics are off (queue/iostats 0: the kernel then counts nothing).
std::optional<uint64_t> kernel_inflight(DevT dev, const std::string& sysfs = "/sys");
// How many requests the device's queue takes at once (sysfs queue/nr_requests
// of the disk, also for a partition), or nullopt when it cannot be read.
// Past it, a non-blocking submission (io_uring) gets EAGAIN.
std::optional<uint32_t> queue_nr_requests(DevT dev, const std::string& sysfs = "/sys");

// Names devices and partitions by dev_t, caching sysfs lookups.
class DeviceNamer {
 public:
  explicit DeviceNamer(std::string sysfs = "/sys") : sysfs_(std::move(sysfs)) {}
  const std::string& name(DevT dev);
  // The partition of `disk` containing `sector`, or the disk itself.
  DevT partition_of(DevT disk, uint64_t sector);

 private:
  std::string sysfs_;
  std::map<DevT, std::string> names_;
  std::map<DevT, std::vector<PartitionInfo>> parts_;
};

// What libblkid and /proc/self/mountinfo say about a device before we write to it.
struct DeviceSafety {
  bool is_block_device = false;
  bool mounted = false;
  std::string mount_point;
  std::string signature;  // e.g. "filesystem ext4", "partition table gpt", "raid linux_raid_member"
  bool has_partitions = false;
  bool holders = false;  // used by device-mapper/md (sysfs holders)
};
Result<DeviceSafety> probe_device_safety(const std::string& path);

}  // namespace blkrr
