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

bool is_mapped_volume(DevT disk, const std::string& sysfs) {
  return !has_request_queue(disk, sysfs) && stacked_kind(disk, sysfs) != "bio-based";
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

Status require_nonempty_device(const DeviceSelection& sel, const std::string& option,
                               const std::string& sysfs) {
  auto dir = sysfs::dir_of(sel.part ? sel.part->dev : sel.disk, sysfs);
  if (!dir || sysfs::read_u64(*dir / "size", 1) != 0) return {};
  const std::string name = sel.part ? sel.part->name : sel.disk_name;
  auto disk = sysfs::dir_of(sel.disk, sysfs);
  const bool loop = disk && std::filesystem::exists(*disk / "loop");
  const bool loop_disk = sel.disk_name.rfind("loop", 0) == 0;
  return Error(ErrorKind::kUsage,
               option + ": " + name + " has a size of 0 bytes" +
                   (loop || loop_disk ? ": no file is attached to the loop device (attach one "
                                        "with losetup /dev/" +
                                            sel.disk_name + " FILE)"
                                      : " (no medium?)") +
                   ", so it can have no I/O and a recording of it would be empty");
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

namespace {

std::vector<fs::path> links_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<DevT> dev_of_dir(const fs::path& dir) {
  return parse_majmin(sysfs::read_line(dir / "dev"));
}

// `depth` bounds a damaged (looping) tree.
StackNode node_of_dir(const fs::path& dir, int depth) {
  StackNode n;
  n.name = dir.filename().string();
  n.dev = dev_of_dir(dir).value_or(0);
  std::error_code ec;
  if (sysfs::is_partition_dir(dir)) {
    n.kind = "partition";
    if (depth < 16) n.below.push_back(node_of_dir(dir.parent_path(), depth + 1));
    return n;
  }
  if (fs::is_directory(dir / "dm", ec)) {
    n.kind = "dm";
    n.label = sysfs::read_line(dir / "dm" / "name");
  } else if (fs::is_directory(dir / "md", ec)) {
    n.kind = "md";
    n.label = sysfs::read_line(dir / "md" / "level");
  } else {
    n.kind = dir_has_queue(dir) ? "disk" : "bio-based";
  }
  if (depth >= 16) return n;
  for (const auto& link : links_in(dir / "slaves")) {
    auto below = fs::canonical(link, ec);
    if (!ec) n.below.push_back(node_of_dir(below, depth + 1));
  }
  return n;
}

std::string node_title(const StackNode& n) {
  return n.label.empty() ? n.name : n.name + " (" + n.label + ")";
}

void collect_holders(const fs::path& dir, std::set<std::string>& seen,
                     std::vector<std::string>& out, int depth) {
  std::error_code ec;
  for (const auto& link : links_in(dir / "holders")) {
    auto up = fs::canonical(link, ec);
    if (ec || !seen.insert(up.filename().string()).second) continue;
    StackNode n = node_of_dir(up, 16);  // its name and label only
    out.push_back(node_title(n));
    if (depth < 16) collect_holders(up, seen, out, depth + 1);
  }
}

}  // namespace

StackNode stack_below(DevT dev, const std::string& sysfs) {
  auto dir = sysfs::dir_of(dev, sysfs);
  if (!dir) return StackNode{dev_to_string(dev), dev, "unknown", "", {}};
  return node_of_dir(*dir, 0);
}

std::string format_stack(const StackNode& n) {
  std::string s = node_title(n);
  if (n.below.empty()) return s;
  if (n.below.size() == 1) return s + " > " + format_stack(n.below[0]);
  std::string inner;
  for (const auto& b : n.below) inner += (inner.empty() ? "" : ", ") + format_stack(b);
  return s + " > {" + inner + "}";
}

std::vector<std::string> holders_above(DevT dev, const std::string& sysfs) {
  std::vector<std::string> out;
  auto dir = sysfs::dir_of(dev, sysfs);
  if (!dir) return out;
  std::set<std::string> seen;
  collect_holders(*dir, seen, out, 0);
  if (sysfs::is_partition_dir(*dir)) collect_holders(dir->parent_path(), seen, out, 0);
  return out;
}

std::string dm_device_named(const std::string& dm_name, const std::string& sysfs) {
  if (dm_name.empty()) return {};
  for (const auto& e : links_in(fs::path(sysfs) / "class" / "block")) {
    if (e.filename().string().rfind("dm-", 0) != 0) continue;
    if (sysfs::read_line(e / "dm" / "name") == dm_name) return e.filename().string();
  }
  return {};
}

std::string lvm_dm_name(const std::string& vg, const std::string& lv) {
  auto dbl = [](const std::string& x) {
    std::string o;
    for (char c : x) o += (c == '-') ? std::string("--") : std::string(1, c);
    return o;
  };
  return dbl(vg) + "-" + dbl(lv);
}

}  // namespace blkrr
