// Stacked block devices (device-mapper, md, other bio-based drivers): which
// devices have requests of their own, and which disks carry the I/O of those
// that do not.
//
// The capture sees block-layer *requests* (block_rq_issue/complete). A
// bio-based device (dm-linear, dm-crypt, md, an NVMe multipath head, zram,
// brd) has no request queue: the kernel makes requests only on the devices
// below it, so recording it directly would record nothing.
#pragma once

#include <string>
#include <vector>

#include "core/device.h"
#include "core/result.h"

namespace blkrr {

// True when the whole disk `disk` has a blk-mq request queue (sysfs "mq").
bool has_request_queue(DevT disk, const std::string& sysfs = "/sys");

// True for a device-mapper or md device (no requests of its own, a map onto
// the devices below: core/volume_stack.h); false for disks and other
// bio-based devices (zram, brd).
bool is_mapped_volume(DevT disk, const std::string& sysfs = "/sys");

// What kind of bio-based device `disk` is, for messages:
// "device-mapper (vg-data)", "md RAID (raid1)", or "bio-based".
std::string stacked_kind(DevT disk, const std::string& sysfs = "/sys");

// The devices (disks or partitions, by sysfs name) below `disk` that have
// requests of their own, following "slaves" through every bio-based level,
// each named once, in sysfs order.
std::vector<std::string> request_devices_below(DevT disk, const std::string& sysfs = "/sys");

// Ok for a device that has requests; else an error (kind kUnsupported, exit
// status 2) that says why nothing would be seen on `sel` and names the
// devices to record instead. `option` is how the user named it ("-d dm-0").
Status require_request_device(const DeviceSelection& sel, const std::string& option,
                              const std::string& sysfs = "/sys");

// One level of a device stack, from sysfs: the device, what it is, and the
// devices below it (its "slaves"), each described the same way.
struct StackNode {
  std::string name;  // sysfs name: "dm-3", "md0", "sda2", "nvme0n1"
  DevT dev = 0;
  std::string kind;   // "disk", "partition", "dm", "md", "bio-based"
  std::string label;  // dm: its name ("vg-data"); md: its level ("raid1")
  std::vector<StackNode> below;
};

// The stack below `dev` (a disk, partition, dm or md device) through every
// level; a partition's node has its disk as the one node below it.
StackNode stack_below(DevT dev, const std::string& sysfs = "/sys");
// "dm-0 (vg-data) > sda2 > sda", branches in braces: "md0 (raid1) > {sdb, sdc}".
std::string format_stack(const StackNode& n);
// The devices that hold `dev` (sysfs "holders", of a partition or its disk),
// upward through every level: "dm-0 (vg-data)", "md0 (raid1)", each once.
std::vector<std::string> holders_above(DevT dev, const std::string& sysfs = "/sys");

// The sysfs name of the device-mapper device called `dm_name` ("vg-data" ->
// "dm-3"), or "" when there is none.
std::string dm_device_named(const std::string& dm_name, const std::string& sysfs = "/sys");
// The device-mapper name LVM gives logical volume `lv` of group `vg`: each
// hyphen in either doubled, the two joined by one ("my-vg", "data" -> "my--vg-data").
std::string lvm_dm_name(const std::string& vg, const std::string& lv);

// Ok for a device with a size; a device of 0 bytes (a loop device with no
// file attached, a drive without its medium) can have no I/O, so recording
// it would record nothing: a usage error that says so and how to attach one.
Status require_nonempty_device(const DeviceSelection& sel, const std::string& option,
                               const std::string& sysfs = "/sys");

}  // namespace blkrr
