// A stacked volume mapped onto the disks that carry its requests: through
// partitions (sysfs start), device-mapper linear, crypt and striped targets
// (the DM_TABLE_STATUS ioctl), md RAID1 (sysfs md/dev-*/offset) and md RAID0
// of equal members (md/chunk_size, md/dev-*/slot), any number of levels deep
// (a striped level over another striped level is refused).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/result.h"
#include "core/volume_map.h"

namespace blkrr {

// One device-mapper table as extents, or an error (kUnsupported for a
// target that is not linear, crypt or striped). The table is read and parsed in one
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

// Maps `sel` (a partition, a dm device or md device whose every level is
// linear, crypt, striped, RAID1 or RAID0) onto whole disks that have request
// queues; a RAID1 level gives a mirror map (Extent::reads_only), a striped
// or RAID0 level striped extents. Other md levels (RAID5/6, RAID10, RAID0
// of members of different sizes), mirror, thin, snapshot and cache targets
// are refused (kUsage) with the level and the request devices to record
// instead.
Result<VolumeMap> map_volume(const DeviceSelection& sel, const DmTableReader& read_table,
                             const std::string& sysfs = "/sys");

// The capture's selections of a volume's pieces: one per sector range of
// each disk below it (filter_ranges, at most `max_ranges` a disk), each a
// "partition" named by the volume; `spec` is how the user named it.
std::vector<DeviceSelection> volume_selections(const VolumeMap& v, const std::string& spec,
                                               size_t max_ranges);

// Every stacked volume at the top of its stack (a dm or md device that no
// other device holds) whose every level is mapped (map_volume), mapped onto
// its disks; the others (RAID5, thin...) are left out. For attribution
// through the stack in every capture, whatever -d names.
std::vector<VolumeMap> map_top_volumes(const DmTableReader& read_table,
                                       const std::string& sysfs = "/sys");

}  // namespace blkrr
