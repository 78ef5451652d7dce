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

}  // namespace blkrr
