#include "converters/device_map.h"

#include <string>

namespace blkrr {

Result<AlignMode> parse_align(std::string_view s) {
  if (s == "round") return AlignMode::kRound;
  if (s == "skip") return AlignMode::kSkip;
  if (s == "fail") return AlignMode::kFail;
  return Error(ErrorKind::kUsage,
               "unknown align mode '" + std::string(s) + "' (use round, skip or fail)");
}

std::string_view align_name(AlignMode m) {
  switch (m) {
    case AlignMode::kRound:
      return "round";
    case AlignMode::kSkip:
      return "skip";
    case AlignMode::kFail:
      return "fail";
  }
  return "?";
}

Result<DeviceMap> DeviceMap::create(const MapOptions& o) {
  if (o.logical_block < 512 || (o.logical_block & (o.logical_block - 1)) != 0)
    return Error(ErrorKind::kUnsupported, "logical block size " + std::to_string(o.logical_block) +
                                              " is not a power of two >= 512");
  uint32_t lbs = o.logical_block / 512;
  if (o.device_sectors < lbs) return Error(ErrorKind::kUsage, "the replay device is empty");
  if (o.mode == MapMode::kScale && o.load_end_sector == 0)
    return Error(ErrorKind::kBadInput,
                 "--scale needs the highest sector of the load, which is 0 (empty load?)");
  DeviceMap m(o);
  m.lbs_sectors_ = lbs;
  m.o_.device_sectors = o.device_sectors / lbs * lbs;  // whole logical blocks only
  return m;
}

Result<DeviceMap::Outcome> DeviceMap::map(uint64_t sector, uint32_t sectors, MappedExtent& out,
                                          std::string_view where) {
  uint64_t end = sector + sectors;
  if (end > c_.max_end_sector) c_.max_end_sector = end;
  const uint64_t lbs = lbs_sectors_;
  if (sector % lbs != 0 || sectors % lbs != 0 || sectors == 0) {
    ++c_.misaligned;
    switch (o_.align) {
      case AlignMode::kFail:
        return Error(ErrorKind::kBadInput,
                     std::string(where) + (where.empty() ? "" : ": ") + "request at sector " +
                         std::to_string(sector) + " length " + std::to_string(sectors) +
                         " sectors is not aligned to the device's logical block size of " +
                         std::to_string(o_.logical_block) +
                         " bytes (use --align round or --align skip)");
      case AlignMode::kSkip:
        ++c_.skipped_align;
        return Outcome::kSkipped;
      case AlignMode::kRound:
        ++c_.rounded;
        sector = sector / lbs * lbs;
        end = (end + lbs - 1) / lbs * lbs;
        if (end == sector) end = sector + lbs;
        sectors = static_cast<uint32_t>(end - sector);
        break;
    }
  }
  const uint64_t dev = o_.device_sectors;
  if (sectors > dev) {
    ++c_.too_large;
    return Outcome::kSkipped;
  }
  uint64_t s = sector;
  if (o_.mode == MapMode::kScale) {
    long double f = static_cast<long double>(dev) / static_cast<long double>(o_.load_end_sector);
    s = static_cast<uint64_t>(static_cast<long double>(sector) * f) / lbs * lbs;
    if (s + sectors > dev) s = (dev - sectors) / lbs * lbs;
  } else if (s + sectors > dev) {
    if (++c_.wrapped == 1 && o_.on_first_wrap) o_.on_first_wrap(sector, sectors);
    s = sector % dev;
    if (s + sectors > dev) {
      ++c_.clamped;
      s = dev - sectors;  // both multiples of lbs
    }
  }
  out.sector = s;
  out.sectors = sectors;
  return Outcome::kMapped;
}

double DeviceMap::wraparound_factor() const {
  if (o_.device_sectors == 0) return 0;
  return static_cast<double>(c_.max_end_sector) / static_cast<double>(o_.device_sectors);
}

}  // namespace blkrr
