// Which capture a selected device gets: its own requests (a disk, a loop
// device, a partition), the requests of the disks below it mapped back to
// its sectors (a dm or md volume whose every level maps arithmetically:
// core/volume_stack.h), or its own bios (a dm, md or other bio-based device
// whose mapping blkrr cannot follow: dm thin, snapshot, cache; md RAID5/6/10;
// zram and brd, which have no disk below). docs/capture.md, "Bio-level
// capture".
#pragma once

#include <optional>
#include <string>

#include "core/device.h"
#include "core/result.h"
#include "core/volume_stack.h"

namespace blkrr {

// A device captured at the bio level, and why (for the trace header).
struct BioLevelDevice {
  DevT dev = 0;
  std::string name;  // sysfs name ("zram1", "dm-4", "md0")
  std::string why;   // "dm thin", "md raid5", "zram: no disk below"
};

enum class CaptureLevel { kRequests, kVolume, kBio };

struct LevelChoice {
  CaptureLevel level = CaptureLevel::kRequests;
  std::optional<VolumeMap> volume;  // kVolume
  BioLevelDevice bio;               // kBio
  // kBio: the refusal of a capture without the bio level (the devices to
  // record instead), for kernels that cannot trace bio completions.
  std::string refusal;
};

// The capture level of `sel`. Errors: a partition of a device captured at
// the bio level (kUsage: name the whole device), and whatever reading the
// volume's map failed with other than an unmapped level (no permission for
// the device-mapper table...).
Result<LevelChoice> choose_capture_level(const DeviceSelection& sel,
                                         const DmTableReader& read_table,
                                         const std::string& sysfs = "/sys");

// The short reason of a bio-level capture from the refusal of map_volume:
// "dm thin" (device-mapper target 'thin'), "md raid5", or the message.
std::string bio_level_reason(const std::string& map_error, const std::string& kind);

}  // namespace blkrr
