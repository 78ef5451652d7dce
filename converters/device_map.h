// Maps load positions onto the replay device: wrap modulo the device size
// (default) or scale proportionally, and handle requests not aligned to the
// device's logical block size.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "core/result.h"

namespace blkrr {

enum class MapMode { kWrap, kScale };
enum class AlignMode { kRound, kSkip, kFail };

Result<AlignMode> parse_align(std::string_view s);  // round | skip | fail
std::string_view align_name(AlignMode m);

struct MapOptions {
  MapMode mode = MapMode::kWrap;
  AlignMode align = AlignMode::kRound;
  uint64_t device_sectors = 0;   // device size in 512-byte sectors
  uint32_t logical_block = 512;  // bytes, power of two >= 512
  uint64_t load_end_sector = 0;  // kScale: highest end sector of the load
  // Called once, for the first request that lies past the end and wraps
  // (its load sector and length): replay warns at once, not only at the end.
  std::function<void(uint64_t sector, uint32_t sectors)> on_first_wrap;
};

struct MappedExtent {
  uint64_t sector = 0;   // on the device
  uint32_t sectors = 0;  // length
};

struct MapCounters {
  uint64_t misaligned = 0;      // requests not aligned to the logical block size
  uint64_t rounded = 0;         // ... of which rounded outwards (--align round)
  uint64_t skipped_align = 0;   // ... of which skipped (--align skip)
  uint64_t wrapped = 0;         // requests beyond the end, wrapped
  uint64_t clamped = 0;         // wrapped requests that would cross the end, moved back
  uint64_t too_large = 0;       // requests longer than the device, skipped
  uint64_t max_end_sector = 0;  // highest end sector seen in the load
};

class DeviceMap {
 public:
  static Result<DeviceMap> create(const MapOptions& o);

  enum class Outcome { kMapped, kSkipped };
  // Maps one request of the load. Error with --align fail on a misaligned one
  // (`where` names it in the message).
  Result<Outcome> map(uint64_t sector, uint32_t sectors, MappedExtent& out, std::string_view where);
  const MapCounters& counters() const { return c_; }
  const MapOptions& options() const { return o_; }
  // Highest sector of the load divided by the device size (>1: the load wraps).
  double wraparound_factor() const;

 private:
  explicit DeviceMap(const MapOptions& o) : o_(o) {}
  MapOptions o_;
  uint32_t lbs_sectors_ = 1;
  MapCounters c_;
};

}  // namespace blkrr
