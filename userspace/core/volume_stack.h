// A stacked volume mapped onto the disks that carry its requests: through
// partitions (sysfs start), device-mapper linear and crypt targets (the
// DM_TABLE_STATUS ioctl) and md RAID1 (sysfs md/dev-*/offset), any number of
// levels deep.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/result.h"
#include "core/volume_map.h"

namespace blkrr {

// One device-mapper table as extents, or an error (kUnsupported for a
// target that is not linear or crypt). The table is read and parsed in one
// step so that a crypt key never leaves the reader.
using DmTableReader = std::function<Result<ExtentMap>(DevT dm)>;

// The live table of `dm` through /dev/mapper/control (DM_TABLE_STATUS with
// DM_STATUS_TABLE_FLAG). The ioctl's buffer, which holds a crypt key, is
// wiped before it is freed.
Result<ExtentMap> read_dm_table(DevT dm);

struct VolumeMap {
  DevT volume = 0;    // the device named (a partition, dm or md device)
  std::string name;   // its sysfs name ("dm-3")
  std::string label;  // its device-mapper name, if any ("vg-data")
  std::string stack;  // format_stack() of it, as it was when mapped
  ExtentMap extents;  // volume sectors -> sectors of whole disks with requests
  uint64_t nr_sectors = 0;
};

// Maps `sel` (a partition, a dm device or md RAID1 whose every level is
// linear, crypt or RAID1) onto whole disks that have request queues; a RAID1
// level gives a mirror map (Extent::reads_only). Other md levels, striped,
// mirror, thin and snapshot targets are refused (kUsage) with the level that
// is not linear and the request devices to record instead.
Result<VolumeMap> map_volume(const DeviceSelection& sel, const DmTableReader& read_table,
                             const std::string& sysfs = "/sys");

// The capture's selections of a volume's pieces: one per sector range of
// each disk below it (filter_ranges, at most `max_ranges` a disk), each a
// "partition" named by the volume; `spec` is how the user named it.
std::vector<DeviceSelection> volume_selections(const VolumeMap& v, const std::string& spec,
                                               size_t max_ranges);

// Every stacked volume at the top of its stack (a dm or md device that no
// other device holds) whose every level maps linearly, mapped onto its
// disks; the others (striped, RAID5, thin...) are left out. For attribution
// through the stack in every capture, whatever -d names.
std::vector<VolumeMap> map_top_volumes(const DmTableReader& read_table,
                                       const std::string& sysfs = "/sys");

}  // namespace blkrr
