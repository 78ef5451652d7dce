#include "core/volume_stack.h"

#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <string.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>

#include "core/args.h"
#include "core/device_stack.h"
#include "core/fd.h"
#include "core/sysfs.h"
#include "core/volume_stripes.h"

namespace fs = std::filesystem;

namespace blkrr {
namespace {

constexpr int kMaxDepth = 16;

// The ioctl's buffer: wiped before it is freed (it holds a crypt key).
struct WipedBuffer {
  explicit WipedBuffer(size_t n) : bytes(n, 0) {}
  ~WipedBuffer() { explicit_bzero(bytes.data(), bytes.size()); }
  WipedBuffer(const WipedBuffer&) = delete;
  WipedBuffer& operator=(const WipedBuffer&) = delete;
  std::vector<char> bytes;
};

// The targets that follow the dm_ioctl header, each parsed at once.
Result<ExtentMap> parse_targets(const char* buf, const dm_ioctl& io) {
  ExtentMap out;
  size_t at = io.data_start;
  for (uint32_t i = 0; i < io.target_count; ++i) {
    if (at + sizeof(dm_target_spec) > io.data_size)
      return Error(ErrorKind::kBadInput, "device-mapper table status: target " + std::to_string(i) +
                                             " runs past the reply");
    dm_target_spec spec;
    memcpy(&spec, buf + at, sizeof spec);
    const char* params = buf + at + sizeof spec;
    size_t limit = io.data_size - (at + sizeof spec);
    std::string_view p(params, strnlen(params, limit));
    std::string_view type(spec.target_type, strnlen(spec.target_type, sizeof spec.target_type));
    auto e = parse_dm_target(type, spec.sector_start, spec.length, p);
    if (!e) return e.error();
    out.insert(out.end(), e->begin(), e->end());
    if (spec.next == 0) break;
    at = io.data_start + spec.next;  // the kernel's `next` counts from data_start
    if (i + 1 < io.target_count && at <= io.data_start)
      return Error(ErrorKind::kBadInput, "device-mapper table status: bad target offset");
  }
  return out;
}

// An md RAID1's members as a mirror map: each in-sync member's data area
// [offset, offset + size) holds the whole volume; the lowest slot's extent
// takes writes, the others reads only (core/volume_map.h).
Result<ExtentMap> mirror_of(const fs::path& md, uint64_t size) {
  std::vector<std::pair<uint64_t, Extent>> members;  // by slot
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(md / "md", ec)) {
    if (e.path().filename().string().rfind("dev-", 0) != 0) continue;
    if (sysfs::read_line(e.path() / "state").find("in_sync") == std::string::npos) continue;
    auto member = fs::canonical(e.path() / "block", ec);
    if (ec) continue;
    auto dev = parse_majmin(sysfs::read_line(member / "dev"));
    auto slot = parse_u64(sysfs::read_line(e.path() / "slot"));
    if (!dev || !slot) continue;
    members.push_back({*slot, Extent{0, size, *dev, sysfs::read_u64(e.path() / "offset")}});
  }
  if (members.empty())
    return Error(ErrorKind::kUnsupported, md.filename().string() + " has no member in sync");
  if (members.size() > kMirrorCopyBase)
    return Error(ErrorKind::kUnsupported, md.filename().string() + " has more than " +
                                              std::to_string(kMirrorCopyBase) + " members");
  std::sort(members.begin(), members.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  ExtentMap out;
  for (auto& [slot, e] : members) {
    e.reads_only = !out.empty();
    e.copy = static_cast<uint32_t>(out.size());
    out.push_back(e);
  }
  return out;
}

// An md RAID0's members (md/dev-*: slot, offset, size in KiB) as stripes of
// chunk_size bytes. Only one zone (members of one size) is mapped.
Result<ExtentMap> stripes_of(const fs::path& md, uint64_t size) {
  const std::string name = md.filename().string();
  const uint64_t chunk_bytes = sysfs::read_u64(md / "md" / "chunk_size");
  const uint64_t disks = sysfs::read_u64(md / "md" / "raid_disks");
  if (chunk_bytes == 0 || chunk_bytes % 512 || disks == 0 || disks > 4096)
    return Error(ErrorKind::kBadInput,
                 name + ": cannot read md/chunk_size (" + std::to_string(chunk_bytes) +
                     " bytes) and md/raid_disks (" + std::to_string(disks) + ") of its RAID0");
  const uint64_t chunk = chunk_bytes / 512;
  std::vector<std::pair<DevT, uint64_t>> members(disks);
  std::vector<bool> found(disks);
  std::set<uint64_t> sizes;  // in sectors, whole chunks
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(md / "md", ec)) {
    if (e.path().filename().string().rfind("dev-", 0) != 0) continue;
    auto member = fs::canonical(e.path() / "block", ec);
    auto dev = ec ? std::nullopt : parse_majmin(sysfs::read_line(member / "dev"));
    auto slot = parse_u64(sysfs::read_line(e.path() / "slot"));
    if (!dev || !slot || *slot >= disks || found[*slot]) continue;
    found[*slot] = true;
    members[*slot] = {*dev, sysfs::read_u64(e.path() / "offset")};
    const uint64_t kib = sysfs::read_u64(e.path() / "size");
    sizes.insert(kib > UINT64_MAX / 2 ? 0 : kib * 2 / chunk * chunk);
  }
  if (std::find(found.begin(), found.end(), false) != found.end())
    return Error(ErrorKind::kBadInput, name + " is RAID0 of " + std::to_string(disks) +
                                           " members, not all of which sysfs lists in a slot");
  if (sizes.size() != 1 || *sizes.begin() > UINT64_MAX / disks || *sizes.begin() * disks != size)
    return Error(ErrorKind::kUnsupported,
                 name +
                     " is md RAID0 of members of different sizes (several zones), whose "
                     "layout blkrr does not map");
  return striped_area(name + " (raid0)", 0, size, chunk, members);
}

std::string title_of(const fs::path& dir) {
  std::string name = dir.filename().string();
  std::string dm = sysfs::read_line(dir / "dm" / "name");
  return dm.empty() ? name : name + " (" + dm + ")";
}

Result<ExtentMap> map_down(DevT dev, const DmTableReader& read_table, const std::string& sysfs,
                           int depth);

Result<ExtentMap> map_through(ExtentMap m, const DmTableReader& read_table,
                              const std::string& sysfs, int depth) {
  std::set<DevT> below;
  for (const auto& e : m) below.insert(e.dev);
  for (DevT d : below) {
    auto lower = map_down(d, read_table, sysfs, depth + 1);
    if (!lower) return lower.error();
    auto c = compose(m, d, *lower);
    if (!c) return c.error();
    m = std::move(*c);
  }
  return coalesce(m);
}

Result<ExtentMap> map_down(DevT dev, const DmTableReader& read_table, const std::string& sysfs,
                           int depth) {
  auto dir = sysfs::dir_of(dev, sysfs);
  if (!dir) return Error(ErrorKind::kNotFound, "no block device " + dev_to_string(dev));
  if (depth > kMaxDepth)
    return Error(ErrorKind::kBadInput, "a device stack deeper than " + std::to_string(kMaxDepth) +
                                           " levels at " + dir->filename().string());
  const uint64_t size = sysfs::read_u64(*dir / "size");
  std::error_code ec;
  if (sysfs::is_partition_dir(*dir)) {
    auto disk = parse_majmin(sysfs::read_line(dir->parent_path() / "dev"));
    if (!disk) return Error(ErrorKind::kBadInput, "cannot read the disk of " + dir->string());
    ExtentMap m = {{0, size, *disk, sysfs::read_u64(*dir / "start")}};
    if (fs::is_directory(dir->parent_path() / "mq", ec)) return m;
    return map_through(std::move(m), read_table, sysfs, depth);  // a partitioned dm or md
  }
  if (fs::is_directory(*dir / "mq", ec)) return ExtentMap{{0, size, dev, 0}};
  if (fs::is_directory(*dir / "dm", ec)) {
    auto table = read_table(dev);
    if (!table) return table.error().context(title_of(*dir));
    return map_through(std::move(*table), read_table, sysfs, depth);
  }
  if (fs::is_directory(*dir / "md", ec)) {
    std::string level = sysfs::read_line(*dir / "md" / "level");
    if (level == "raid1" || level == "raid0") {
      auto m = level == "raid1" ? mirror_of(*dir, size) : stripes_of(*dir, size);
      if (!m) return m.error();
      return map_through(std::move(*m), read_table, sysfs, depth);
    }
    return Error(ErrorKind::kUnsupported,
                 dir->filename().string() + " is md RAID (" + (level.empty() ? "?" : level) +
                     "), whose sectors are not arithmetically on the devices below");
  }
  return Error(ErrorKind::kUnsupported,
               dir->filename().string() + " is a bio-based device of no known mapping");
}

}  // namespace

Result<ExtentMap> read_dm_table(DevT dm) {
  Fd ctl(open("/dev/mapper/control", O_RDWR | O_CLOEXEC));
  if (!ctl)
    return Error::system("open /dev/mapper/control", errno,
                         "device-mapper tables need root and the dm-mod module");
  for (size_t size = 16 * 1024; size <= 16u << 20; size *= 4) {
    WipedBuffer buf(size);
    dm_ioctl io{};
    io.version[0] = DM_VERSION_MAJOR;
    io.data_size = static_cast<uint32_t>(size);
    io.data_start = sizeof(dm_ioctl);
    io.flags = DM_STATUS_TABLE_FLAG;
    io.dev = (static_cast<uint64_t>(dev_major(dm)) << 8 | (dev_minor(dm) & 0xff)) |
             (static_cast<uint64_t>(dev_minor(dm) & ~0xffu) << 12);
    memcpy(buf.bytes.data(), &io, sizeof io);
    if (ioctl(ctl.get(), DM_TABLE_STATUS, buf.bytes.data()) != 0)
      return Error::system("device-mapper table of " + dev_to_string(dm), errno);
    memcpy(&io, buf.bytes.data(), sizeof io);
    if (io.flags & DM_BUFFER_FULL_FLAG) continue;
    if (io.data_size > size) return Error(ErrorKind::kBadInput, "device-mapper reply too long");
    return parse_targets(buf.bytes.data(), io);
  }
  return Error(ErrorKind::kBadInput,
               "device-mapper table of " + dev_to_string(dm) + " is larger than 16 MiB");
}

Result<VolumeMap> map_volume(const DeviceSelection& sel, const DmTableReader& read_table,
                             const std::string& sysfs) {
  DevT dev = sel.part ? sel.part->dev : sel.disk;
  auto extents = map_down(dev, read_table, sysfs, 0);
  if (!extents) {
    if (extents.error().kind != ErrorKind::kUnsupported) return extents.error();
    std::string below;
    for (const auto& b : request_devices_below(sel.disk, sysfs)) below += " -d " + b;
    return Error(ErrorKind::kUsage,
                 extents.error().message +
                     ": blkrr records a stacked device only where every level maps its sectors "
                     "arithmetically (partitions, device-mapper linear, crypt and striped, md "
                     "RAID1 and RAID0 of equal members; not RAID5/6, thin, snapshot or cache). "
                     "Record the devices below it instead:" +
                     below +
                     " (their requests stay in their own sectors; a mirror's writes appear "
                     "once per member; see docs/capture.md)");
  }
  VolumeMap v;
  v.volume = dev;
  auto dir = sysfs::dir_of(dev, sysfs);
  v.name = dir ? dir->filename().string() : dev_to_string(dev);
  v.label = dir ? sysfs::read_line(*dir / "dm" / "name") : "";
  v.stack = format_stack(stack_below(dev, sysfs));
  v.nr_sectors = dir ? sysfs::read_u64(*dir / "size") : 0;
  v.extents = std::move(*extents);
  return v;
}

std::vector<DeviceSelection> volume_selections(const VolumeMap& v, const std::string& spec,
                                               size_t max_ranges) {
  std::set<DevT> disks;
  for (const auto& e : v.extents) disks.insert(e.dev);
  std::vector<DeviceSelection> out;
  DeviceNamer names;
  for (DevT disk : disks)
    for (const auto& [start, end] : filter_ranges(v.extents, disk, max_ranges))
      out.push_back(DeviceSelection{disk, names.name(disk),
                                    PartitionInfo{v.volume, v.name, start, end - start}, spec});
  return out;
}

std::vector<VolumeMap> map_top_volumes(const DmTableReader& read_table, const std::string& sysfs) {
  std::vector<VolumeMap> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(sysfs) / "class" / "block", ec)) {
    const fs::path& dir = entry.path();
    const std::string name = dir.filename().string();
    if (name.rfind("dm-", 0) != 0 && name.rfind("md", 0) != 0) continue;
    if (fs::exists(dir / "mq") || fs::exists(dir / "partition")) continue;
    std::error_code hec;
    if (fs::exists(dir / "holders") && !fs::is_empty(dir / "holders", hec)) continue;
    auto dev = parse_majmin(sysfs::read_line(dir / "dev"));
    if (!dev) continue;
    DeviceSelection sel{*dev, name, std::nullopt, name};
    auto v = map_volume(sel, read_table, sysfs);
    if (v && !v->extents.empty()) out.push_back(std::move(*v));
  }
  std::sort(out.begin(), out.end(),
            [](const VolumeMap& a, const VolumeMap& b) { return a.volume < b.volume; });
  return out;
}

}  // namespace blkrr
