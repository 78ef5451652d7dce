#include "core/bio_level.h"

#include <filesystem>

#include "core/device_stack.h"
#include "core/sysfs.h"

namespace blkrr {

namespace fs = std::filesystem;

namespace {

// "zram: no disk below", "brd: no disk below", or "bio-based (NAME)" for a
// bio-based driver that is neither dm nor md.
std::string plain_bio_reason(const std::string& name, DevT disk, const std::string& sysfs) {
  std::string driver;
  if (name.rfind("zram", 0) == 0) driver = "zram";
  if (name.rfind("ram", 0) == 0) driver = "brd";
  if (!driver.empty() && request_devices_below(disk, sysfs).empty())
    return driver + ": no disk below";
  return "bio-based (" + name + "): no known mapping to the devices below";
}

}  // namespace

std::string bio_level_reason(const std::string& map_error, const std::string& kind) {
  const std::string target = "device-mapper target '";
  if (auto at = map_error.find(target); at != std::string::npos) {
    auto from = at + target.size();
    auto end = map_error.find('\'', from);
    if (end != std::string::npos) return "dm " + map_error.substr(from, end - from);
  }
  if (auto at = map_error.find("md RAID ("); at != std::string::npos) {
    auto from = at + 9;
    auto end = map_error.find(')', from);
    if (end != std::string::npos) return "md " + map_error.substr(from, end - from);
  }
  if (map_error.find("striped level over a striped") != std::string::npos)
    return kind + ": a striped level over a striped level";
  return kind + ": " + map_error.substr(0, map_error.find(':'));
}

Result<LevelChoice> choose_capture_level(const DeviceSelection& sel,
                                         const DmTableReader& read_table,
                                         const std::string& sysfs) {
  LevelChoice c;
  if (has_request_queue(sel.disk, sysfs)) return c;
  const std::string option = "-d " + sel.spec;
  std::string why;
  if (is_mapped_volume(sel.disk, sysfs)) {
    auto v = map_volume(sel, read_table, sysfs);
    if (v) {
      c.level = CaptureLevel::kVolume;
      c.volume = std::move(*v);
      return c;
    }
    // map_volume says kUsage only for a level it does not map.
    if (v.error().kind != ErrorKind::kUsage) return v.error();
    c.refusal = v.error().context(option).message;
    why = bio_level_reason(v.error().message, stacked_kind(sel.disk, sysfs));
  } else {
    if (auto st = require_request_device(sel, option, sysfs); !st) c.refusal = st.error().message;
    why = plain_bio_reason(sel.disk_name, sel.disk, sysfs);
  }
  if (sel.part)
    return Error(ErrorKind::kUsage, option + ": " + sel.part->name + " is a partition of " +
                                        sel.disk_name + ", which blkrr records at the bio level (" +
                                        why + "): name the whole device (-d " + sel.disk_name +
                                        ")");
  c.level = CaptureLevel::kBio;
  c.bio = BioLevelDevice{sel.disk, sel.disk_name, why};
  return c;
}

}  // namespace blkrr
