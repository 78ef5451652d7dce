#include "core/device.h"

#include <blkid/blkid.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "core/args.h"
#include "core/device_stack.h"
#include "core/sysfs.h"

namespace fs = std::filesystem;

namespace blkrr {
namespace {

using sysfs::is_partition_dir;
using sysfs::read_line;
using sysfs::read_u64;

PartitionInfo partition_from_dir(const fs::path& dir) {
  PartitionInfo p;
  p.name = dir.filename().string();
  if (auto d = parse_majmin(read_line(dir / "dev"))) p.dev = *d;
  p.start_sector = read_u64(dir / "start");
  p.nr_sectors = read_u64(dir / "size");
  return p;
}

std::vector<PartitionInfo> partitions_of(const fs::path& disk_dir) {
  std::vector<PartitionInfo> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(disk_dir, ec)) {
    if (e.is_directory(ec) && is_partition_dir(e.path()))
      out.push_back(partition_from_dir(e.path()));
  }
  std::sort(out.begin(), out.end(), [](const PartitionInfo& a, const PartitionInfo& b) {
    return a.start_sector < b.start_sector;
  });
  return out;
}

Result<DeviceSelection> selection_from_dir(const fs::path& dir, std::string_view spec) {
  DeviceSelection sel;
  sel.spec = std::string(spec);
  fs::path disk_dir = dir;
  if (is_partition_dir(dir)) {
    sel.part = partition_from_dir(dir);
    disk_dir = dir.parent_path();
  }
  auto d = parse_majmin(read_line(disk_dir / "dev"));
  if (!d)  // a sysfs folder that is no block device (e.g. "." under /sys/class/block)
    return Error(ErrorKind::kUsage,
                 "device '" + std::string(spec) + "': cannot read " + (disk_dir / "dev").string());
  sel.disk = *d;
  sel.disk_name = disk_dir.filename().string();
  return sel;
}

// The sysfs name of a stacked device named the way device-mapper and LVM
// name it: "/dev/mapper/NAME" and "NAME" by its dm name, "/dev/VG/LV" and
// "VG/LV" by LVM's; "" when none matches. Lets commands take these names
// where /dev has no nodes for them (no udev) and as plain words.
std::string stacked_name_of(const std::string& spec, const std::string& sysfs) {
  std::string rest = spec.rfind("/dev/", 0) == 0 ? spec.substr(5) : spec;
  if (rest.rfind("mapper/", 0) == 0) return dm_device_named(rest.substr(7), sysfs);
  if (!rest.empty() && rest[0] == '/') return {};
  auto slash = rest.find('/');
  if (slash == std::string::npos) {
    std::error_code ec;
    if (fs::exists(fs::path(sysfs) / "class" / "block" / rest, ec)) return rest;  // /dev/md0
    return dm_device_named(rest, sysfs);
  }
  if (rest.find('/', slash + 1) != std::string::npos) return {};
  return dm_device_named(lvm_dm_name(rest.substr(0, slash), rest.substr(slash + 1)), sysfs);
}

Result<DeviceSelection> resolve_by_stacked_name(const std::string& spec, const std::string& sysfs) {
  std::string name = stacked_name_of(spec, sysfs);
  if (name.empty()) return Error(ErrorKind::kNotFound, "");
  std::error_code ec;
  auto dir = fs::canonical(fs::path(sysfs) / "class" / "block" / name, ec);
  if (ec) return Error(ErrorKind::kNotFound, "");
  return selection_from_dir(dir, spec);
}

}  // namespace

std::optional<DevT> parse_majmin(std::string_view s) {
  auto colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto ma = parse_u64(s.substr(0, colon));
  auto mi = parse_u64(s.substr(colon + 1));
  if (!ma || !mi || *ma >= 4096 || *mi >= (1u << 20)) return std::nullopt;
  return make_dev(static_cast<uint32_t>(*ma), static_cast<uint32_t>(*mi));
}

Result<DeviceSelection> resolve_device(std::string_view arg, const std::string& sysfs) {
  std::string spec(arg);
  // Every failure is a device argument that names no device: a usage error,
  // the same exit status in every command (docs/cli.md).
  auto unknown = [](std::string msg) { return Error(ErrorKind::kUsage, std::move(msg)); };
  if (spec.empty()) return unknown("empty device name");
  std::optional<DevT> dev = parse_majmin(spec);
  if (!dev && spec[0] == '/') {
    struct stat st {};
    if (stat(spec.c_str(), &st) != 0) {
      int err = errno;
      if (auto s = resolve_by_stacked_name(spec, sysfs)) return s;
      return Error::system("device '" + spec + "'", err,
                           "give /dev/NAME, NAME, MAJ:MIN, /dev/mapper/NAME or /dev/VG/LV")
          .as(ErrorKind::kUsage);
    }
    if (!S_ISBLK(st.st_mode)) return unknown("'" + spec + "' is not a block device");
    dev = make_dev(major(st.st_rdev), minor(st.st_rdev));
  }
  std::error_code ec;
  if (dev) {
    auto dir = sysfs::dir_of(*dev, sysfs);
    if (!dir) return unknown("no block device " + dev_to_string(*dev) + " (see 'blkrr devices')");
    return selection_from_dir(*dir, spec);
  }
  if (spec.find('/') != std::string::npos) {
    if (auto s = resolve_by_stacked_name(spec, sysfs)) return s;
    return unknown("'" + spec +
                   "' is not a device name (give /dev/NAME, NAME, MAJ:MIN, a device-mapper name "
                   "or VG/LV)");
  }
  auto dir = fs::canonical(fs::path(sysfs) / "class" / "block" / spec, ec);
  if (ec) {
    if (auto s = resolve_by_stacked_name(spec, sysfs)) return s;
    return unknown("unknown block device '" + spec + "' (see 'blkrr devices')");
  }
  return selection_from_dir(dir, spec);
}

Result<std::string> device_node(std::string_view arg, const std::string& sysfs,
                                const std::string& dev_dir) {
  std::string spec(arg);
  struct stat st {};
  // A path that exists is used as it is (a node, or a file for --allow-file).
  if (spec.find('/') != std::string::npos && stat(spec.c_str(), &st) == 0) return spec;
  auto sel = resolve_device(spec, sysfs);
  if (!sel) {
    if (stat(spec.c_str(), &st) == 0) return spec;  // a file in this directory
    return sel.error();
  }
  const PartitionInfo whole{sel->disk, sel->disk_name, 0, 0};
  const PartitionInfo& p = sel->part ? *sel->part : whole;
  // udev's name first, then its /dev/block/MAJ:MIN link.
  for (const std::string& node :
       {dev_dir + "/" + p.name, dev_dir + "/block/" + dev_to_string(p.dev)}) {
    if (stat(node.c_str(), &st) == 0 && S_ISBLK(st.st_mode) &&
        make_dev(major(st.st_rdev), minor(st.st_rdev)) == p.dev)
      return node;
  }
  return Error(ErrorKind::kUsage, "device '" + spec + "' (" + dev_to_string(p.dev) + "): no node " +
                                      dev_dir + "/" + p.name + " for it; give its path");
}

Result<DeviceInfo> describe_device(DevT disk, const std::string& sysfs) {
  auto dir = sysfs::dir_of(disk, sysfs);
  if (!dir) return Error(ErrorKind::kNotFound, "no block device " + dev_to_string(disk));
  if (is_partition_dir(*dir)) dir = dir->parent_path();
  DeviceInfo info;
  info.name = dir->filename().string();
  if (auto d = parse_majmin(read_line(*dir / "dev"))) info.dev = *d;
  info.size_bytes = read_u64(*dir / "size") * 512;
  info.logical_block_size =
      static_cast<uint32_t>(read_u64(*dir / "queue" / "logical_block_size", 512));
  info.physical_block_size =
      static_cast<uint32_t>(read_u64(*dir / "queue" / "physical_block_size", 512));
  info.model = read_line(*dir / "device" / "model");
  if (info.model.empty()) {
    std::string backing = read_line(*dir / "loop" / "backing_file");
    if (!backing.empty()) info.model = "loop:" + backing;
  }
  // "[mq-deadline] kyber none" -> "mq-deadline"
  std::string sched = read_line(*dir / "queue" / "scheduler");
  auto lb = sched.find('['), rb = sched.find(']');
  info.scheduler = (lb != std::string::npos && rb != std::string::npos && rb > lb)
                       ? sched.substr(lb + 1, rb - lb - 1)
                       : sched;
  info.partitions = partitions_of(*dir);
  return info;
}

std::optional<uint64_t> kernel_inflight(DevT dev, const std::string& sysfs) {
  auto dir = sysfs::dir_of(dev, sysfs);
  if (!dir) return std::nullopt;
  // With I/O statistics off the kernel counts nothing in flight: unknown.
  if (read_line(*dir / "queue" / "iostats") == "0") return std::nullopt;
  std::istringstream in(read_line(*dir / "inflight"));
  uint64_t reads = 0, writes = 0;
  if (!(in >> reads >> writes)) return std::nullopt;
  return reads + writes;
}

std::optional<uint32_t> queue_nr_requests(DevT dev, const std::string& sysfs) {
  auto dir = sysfs::dir_of(dev, sysfs);
  if (!dir) return std::nullopt;
  if (is_partition_dir(*dir)) dir = dir->parent_path();
  auto n = parse_u64(read_line(*dir / "queue" / "nr_requests"));
  if (!n || *n == 0 || *n > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(*n);
}

std::vector<DeviceInfo> list_devices(const std::string& sysfs) {
  std::vector<DeviceInfo> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(sysfs) / "class" / "block", ec)) {
    auto dir = fs::canonical(e.path(), ec);
    if (ec || is_partition_dir(dir)) continue;
    auto d = parse_majmin(read_line(dir / "dev"));
    if (!d) continue;
    if (auto info = describe_device(*d, sysfs)) out.push_back(std::move(info.value()));
  }
  std::sort(out.begin(), out.end(),
            [](const DeviceInfo& a, const DeviceInfo& b) { return a.dev < b.dev; });
  return out;
}

const std::string& DeviceNamer::name(DevT dev) {
  auto it = names_.find(dev);
  if (it != names_.end()) return it->second;
  auto dir = sysfs::dir_of(dev, sysfs_);
  return names_[dev] = dir ? dir->filename().string() : dev_to_string(dev);
}

DevT DeviceNamer::partition_of(DevT disk, uint64_t sector) {
  auto it = parts_.find(disk);
  if (it == parts_.end()) {
    auto dir = sysfs::dir_of(disk, sysfs_);
    it = parts_.emplace(disk, dir ? partitions_of(*dir) : std::vector<PartitionInfo>{}).first;
  }
  for (const auto& p : it->second)
    if (sector >= p.start_sector && sector < p.start_sector + p.nr_sectors) return p.dev;
  return disk;
}

namespace {
struct ProbeFree {
  void operator()(blkid_probe p) const {
    if (p) blkid_free_probe(p);
  }
};
using ProbePtr = std::unique_ptr<std::remove_pointer_t<blkid_probe>, ProbeFree>;

std::string probe_value(blkid_probe pr, const char* name) {
  const char* v = nullptr;
  size_t len = 0;
  if (blkid_probe_lookup_value(pr, name, &v, &len) == 0 && v) return std::string(v);
  return {};
}
}  // namespace

Result<DeviceSafety> probe_device_safety(const std::string& path) {
  DeviceSafety s;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return Error::system("cannot open '" + path + "'", errno);
  s.is_block_device = S_ISBLK(st.st_mode);
  if (s.is_block_device) {
    DevT dev = make_dev(major(st.st_rdev), minor(st.st_rdev));
    std::vector<DevT> devs{dev};
    if (auto dir = sysfs::dir_of(dev, "/sys")) {
      for (const auto& p : partitions_of(*dir)) devs.push_back(p.dev);
      s.has_partitions = devs.size() > 1;
      std::error_code ec;
      s.holders = fs::exists(*dir / "holders", ec) && !fs::is_empty(*dir / "holders", ec);
    }
    // /proc/self/mountinfo: "36 35 98:0 /mnt1 /mnt2 rw ..." (field 3 = MAJ:MIN)
    std::ifstream mi("/proc/self/mountinfo");
    std::string line;
    while (std::getline(mi, line) && !s.mounted) {
      std::istringstream ls(line);
      std::string id, parent, majmin, root, mnt;
      ls >> id >> parent >> majmin >> root >> mnt;
      auto d = parse_majmin(majmin);
      for (DevT x : devs)
        if (d && *d == x) {
          s.mounted = true;
          s.mount_point = mnt;
        }
    }
    std::ifstream swaps("/proc/swaps");
    std::getline(swaps, line);  // header
    while (std::getline(swaps, line) && !s.mounted) {
      std::istringstream ls(line);
      std::string file;
      ls >> file;
      struct stat sw {};
      if (stat(file.c_str(), &sw) == 0 && S_ISBLK(sw.st_mode)) {
        for (DevT x : devs)
          if (make_dev(major(sw.st_rdev), minor(sw.st_rdev)) == x) {
            s.mounted = true;
            s.mount_point = "swap";
          }
      }
    }
  }
  ProbePtr pr(blkid_new_probe_from_filename(path.c_str()));
  if (!pr) return Error::system("libblkid cannot probe '" + path + "'", errno);
  blkid_probe_enable_superblocks(pr.get(), 1);
  blkid_probe_set_superblocks_flags(pr.get(), BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE);
  blkid_probe_enable_partitions(pr.get(), 1);
  int rc = blkid_do_safeprobe(pr.get());
  if (rc == -2) {
    s.signature = "ambivalent (several signatures)";
  } else if (rc == 0) {
    std::string type = probe_value(pr.get(), "TYPE");
    std::string usage = probe_value(pr.get(), "USAGE");
    std::string pttype = probe_value(pr.get(), "PTTYPE");
    if (!pttype.empty())
      s.signature = "partition table " + pttype;
    else if (!type.empty())
      s.signature = (usage.empty() ? "signature" : usage) + " " + type;
  } else if (rc < 0) {
    // A disk that fails reads where signatures live (medium errors): what it
    // holds is unknown, which refuses a replay unless --force, as data does.
    s.signature = "read error where signatures are (contents unknown)";
  }
  return s;
}

namespace sysfs {

std::string read_line(const fs::path& p) {
  std::ifstream in(p);
  std::string s;
  if (in) std::getline(in, s);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

uint64_t read_u64(const fs::path& p, uint64_t dflt) {
  auto v = parse_u64(read_line(p));
  return v ? *v : dflt;
}

std::optional<fs::path> dir_of(DevT dev, const std::string& sysfs) {
  std::error_code ec;
  fs::path link = fs::path(sysfs) / "dev" / "block" / dev_to_string(dev);
  auto real = fs::canonical(link, ec);
  if (ec) return std::nullopt;
  return real;
}

bool is_partition_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "partition", ec);
}

}  // namespace sysfs

}  // namespace blkrr
