// Striped pieces of a volume (device-mapper "striped", md RAID0): the
// arithmetic of an Extent whose `stripes` is above 1 (core/volume_map.h).
//
// The volume's sectors are dealt out to the members in chunks of `chunk`
// sectors: chunk k of the striped area is on member k % stripes, as its
// chunk k / stripes. A striped Extent is one member's share of a window of
// the volume [vol_start, vol_start + len): the window begins and ends in
// chunks of that member, `phase` is where vol_start lies in its chunk, and
// the member holds a contiguous range [dev_start, dev_start + dev_len(e)),
// whose sector dev_start is volume sector vol_start. Every mapping below is
// arithmetic: a volume of any size is one Extent per member.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/volume_map.h"

namespace blkrr {

inline bool is_striped(const Extent& e) {
  return e.stripes > 1;
}

// The sectors of its device an extent holds (len for a linear one).
uint64_t dev_len(const Extent& e);

// The extent's share of volume sectors [a, b) (for a striped one, trimmed
// to the chunks of its member), or nullopt when it holds none of them.
std::optional<Extent> clip_volume(const Extent& e, uint64_t a, uint64_t b);

// The extent's part that lies on its device's sectors [a, b), or nullopt.
std::optional<Extent> clip_device(const Extent& e, uint64_t a, uint64_t b);

// The volume sector of device sector d (in [dev_start, dev_start + dev_len)).
uint64_t volume_sector_at(const Extent& e, uint64_t d);

// Device sectors [a, b) of the extent's range in pieces that each lie in
// one chunk (one piece for a linear extent): fn(device sector, volume
// sector, sectors), in device order.
void for_each_piece(const Extent& e, uint64_t a, uint64_t b,
                    const std::function<void(uint64_t, uint64_t, uint64_t)>& fn);

// `next` continues `e` (same device and pattern, next device sector is
// next's first, and the volume sector that follows in the pattern is next's).
bool stripe_continues(const Extent& e, const Extent& next);

// A striped area: volume sectors [start, start + len) dealt out in chunks
// of `chunk` sectors to `members` (device, offset of the area on it), in
// stripe order. len must be a multiple of chunk * members.size(); every
// number is range-checked (kBadInput naming `what`).
Result<ExtentMap> striped_area(const std::string& what, uint64_t start, uint64_t len,
                               uint64_t chunk,
                               const std::vector<std::pair<DevT, uint64_t>>& members);

}  // namespace blkrr
