#include "cli/record_volumes.h"

#include "core/device.h"
#include "core/volume_stripes.h"

namespace blkrr::cli {

VolumeRecords::VolumeRecords(std::vector<VolumeMap> volumes, const CaptureConfig& cfg)
    : volumes_(std::move(volumes)) {
  std::set<DevT> volume_devs;
  for (const auto& v : volumes_) volume_devs.insert(v.volume);
  for (const auto& s : cfg.devices)
    if (!s.part || !volume_devs.count(s.part->dev)) plain_disks_.insert(s.disk);
}

void VolumeRecords::translate(const Request& r, const std::function<void(const Request&)>& out) {
  if (!active() || plain_disks_.count(r.dev)) {
    out(r);
    return;
  }
  bool any = false;
  for (const auto& v : volumes_) {
    auto pieces = requests_on_volume(r, v.extents, v.volume);
    if (pieces.empty()) continue;
    any = true;
    uint64_t bytes = 0;
    for (const auto& p : pieces) {
      bytes += p.bytes;
      out(p);
    }
    if (pieces.size() > 1) split_ += pieces.size() - 1;
    if (bytes < r.bytes) partial_++;
  }
  if (any) return;
  // A write to a mirror's other member: the first member's copy is recorded.
  for (const auto& v : volumes_)
    for (const auto& e : v.extents)
      if (e.reads_only && e.dev == r.dev && r.sector >= e.dev_start &&
          r.sector - e.dev_start < dev_len(e)) {
        mirror_++;
        return;
      }
  outside_++;
}

Status VolumeRecords::describe(TraceHeader& h) const {
  for (const auto& v : volumes_) {
    auto info = describe_device(v.volume);
    if (!info) return info.error();
    info->partitions.clear();
    if (info->dev != v.volume) {  // a partition: named by itself, its size
      info->dev = v.volume;
      info->name = v.name;
      info->size_bytes = v.nr_sectors * 512;
    }
    h.devices.push_back(*info);
    const std::string k = "volume." + v.name;
    h.settings[k] =
        v.label.empty() ? dev_to_string(v.volume) : dev_to_string(v.volume) + " " + v.label;
    h.settings[k + ".stack"] = v.stack;
    h.settings[k + ".map"] = format_extents(v.extents);
  }
  return {};
}

void VolumeRecords::add_counters(Counters& c) const {
  if (outside_) c["volume_outside"] = outside_;
  if (partial_) c["volume_partial"] = partial_;
  if (split_) c["volume_split"] = split_;
  if (mirror_) c["volume_mirror_copies"] = mirror_;
}

}  // namespace blkrr::cli
