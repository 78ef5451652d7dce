#include "core/device_stack.h"

#include "core/sysfs.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace fs = std::filesystem;

namespace blkrr {
namespace {

// The sysfs directory of a whole disk (a partition's parent).
std::optional<fs::path> disk_dir(DevT disk, const std::string& sysfs) {
  auto dir = sysfs::dir_of(disk, sysfs);
  if (dir && sysfs::is_partition_dir(*dir)) return dir->parent_path();
  return dir;
}

bool dir_has_queue(const fs::path& disk) {
  std::error_code ec;
  return fs::is_directory(disk / "mq", ec);
}

// Depth-first through slaves/; `seen` stops a loop in a damaged tree.
void collect_below(const fs::path& disk, std::set<std::string>& seen,
                   std::vector<std::string>& out) {
  std::error_code ec;
  std::vector<fs::path> slaves;
  for (const auto& e : fs::directory_iterator(disk / "slaves", ec)) slaves.push_back(e.path());
  std::sort(slaves.begin(), slaves.end());
  for (const auto& link : slaves) {
    std::string name = link.filename().string();
    if (!seen.insert(name).second) continue;
    auto dir = fs::canonical(link, ec);
    if (ec) continue;
    fs::path whole = sysfs::is_partition_dir(dir) ? dir.parent_path() : dir;
    if (dir_has_queue(whole))
      out.push_back(name);
    else
      collect_below(whole, seen, out);
  }
}

std::string join_names(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const auto& n : v) s += (s.empty() ? "" : sep) + n;
  return s;
}

}  // namespace

bool has_request_queue(DevT disk, const std::string& sysfs) {
  auto dir = disk_dir(disk, sysfs);
  return dir && dir_has_queue(*dir);
}

std::string stacked_kind(DevT disk, const std::string& sysfs) {
  auto dir = disk_dir(disk, sysfs);
  if (!dir) return "bio-based";
  std::error_code ec;
  if (fs::is_directory(*dir / "dm", ec)) {
    std::string name = sysfs::read_line(*dir / "dm" / "name");
    return name.empty() ? "device-mapper" : "device-mapper (/dev/mapper/" + name + ")";
  }
  if (fs::is_directory(*dir / "md", ec)) {
    std::string level = sysfs::read_line(*dir / "md" / "level");
    return level.empty() ? "md RAID" : "md RAID (" + level + ")";
  }
  return "bio-based";
}

std::vector<std::string> request_devices_below(DevT disk, const std::string& sysfs) {
  std::vector<std::string> out;
  auto dir = disk_dir(disk, sysfs);
  if (!dir) return out;
  std::set<std::string> seen;
  collect_below(*dir, seen, out);
  return out;
}

Status require_request_device(const DeviceSelection& sel, const std::string& option,
                              const std::string& sysfs) {
  if (has_request_queue(sel.disk, sysfs)) return {};
  std::string what = option + ": " + sel.disk_name + " is a " + stacked_kind(sel.disk, sysfs) +
                     " device with no requests of its own (bio-based): the block layer issues "
                     "its I/O as requests on the devices below it, so blkrr would see nothing "
                     "here. ";
  auto below = request_devices_below(sel.disk, sysfs);
  if (below.empty())
    return Error(ErrorKind::kUsage,
                 what +
                     "No device below it is known (a RAM disk, zram or a multipath head "
                     "without paths); 'blkrr devices' lists the devices that have requests");
  return Error(ErrorKind::kUsage, what + "Name those instead: -d " + join_names(below, " -d ") +
                                      " (they also carry any other I/O they serve)");
}

}  // namespace blkrr
