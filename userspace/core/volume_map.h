// Linear volume <-> disk sector mapping: a volume (a partition, a
// device-mapper linear or crypt device, a stack of them) as pieces of the
// devices below it. All numbers are 512-byte sectors.
//
// A level's map comes from sysfs (a partition's start) or from the
// device-mapper table (the DM_TABLE_STATUS ioctl, core/volume_stack.h);
// compose() maps a level's map through the map of the device below it, so a
// stack of any depth becomes extents on the disks that carry its requests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/request.h"
#include "core/result.h"

namespace blkrr {

// Sectors [vol_start, vol_start + len) of the volume are sectors
// [dev_start, dev_start + len) of device `dev`. A mirror (RAID1) holds each
// volume sector on every member: the first member's extent is the volume's,
// the others are `reads_only` (a write reaches every member, a read one:
// writes are taken from the first member, reads from any). `copy` says which
// member's copy the extent is: 0 the first member (and every extent outside
// a mirror), k the k-th other member; through two mirrors, the upper one's
// copy times kMirrorCopyBase plus the lower one's (a level that is no mirror
// keeps the copy of the level above).
//
// A striped volume (device-mapper "striped", md RAID0) deals its sectors out
// to its members in chunks: an extent with `stripes` above 1 is the share of
// member `stripe` (of `stripes`) of the volume sectors [vol_start,
// vol_start + len), chunks of `chunk` sectors, vol_start `phase` sectors
// into its chunk; the member holds them contiguously from dev_start
// (core/volume_stripes.h). Extents of the members of one area overlap in
// volume sectors, each holding only its chunks.
struct Extent {
  uint64_t vol_start = 0;
  uint64_t len = 0;
  DevT dev = 0;
  uint64_t dev_start = 0;
  bool reads_only = false;
  uint32_t copy = 0;
  uint32_t stripes = 1;
  uint32_t stripe = 0;
  uint64_t chunk = 0;
  uint64_t phase = 0;
  bool operator==(const Extent&) const = default;
};
inline constexpr uint32_t kMirrorCopyBase = 64;

// A map: extents sorted by vol_start; only mirrors' and stripes' extents
// overlap.
using ExtentMap = std::vector<Extent>;

// The extents of one device-mapper target from its table line: `type` and
// `params` as DM_TABLE_STATUS reports them (start and length in sectors).
// "linear": "<dev> <offset>"; "crypt": "<cipher> <key> <iv_offset> <dev>
// <offset> [...]" — only the device and offset are read, the key is never
// copied or put in a message; "striped": "<stripes> <chunk sectors> (<dev>
// <offset>)+", one extent per stripe. Other types (raid, mirror, thin,
// snapshot, cache, ...) are refused with kUnsupported, naming the type.
Result<ExtentMap> parse_dm_target(std::string_view type, uint64_t start, uint64_t len,
                                  std::string_view params);

// The pieces of volume sectors [sector, sector + n) on the devices below, in
// volume order (a mirrored sector once per member); sectors no extent covers
// are left out. A striped extent stays one extent per member (its share of
// the range); chunk_pieces() splits a range at its chunks.
ExtentMap map_range(const ExtentMap& map, uint64_t sector, uint64_t n);

// The pieces of volume sectors [sector, sector + n), each on one device and
// in one chunk of a striped extent (as the stacking drivers split a bio),
// sorted by volume sector; none striped. At most n / chunk + 2 per member.
ExtentMap chunk_pieces(const ExtentMap& map, uint64_t sector, uint64_t n);

// `upper` with each extent on `lower_dev` replaced by the pieces `lower`
// (the map of lower_dev) gives it; extents on other devices are kept. An
// extent that `lower` does not cover whole is an error (kBadInput); a
// striped level over a striped level is refused (kUnsupported).
Result<ExtentMap> compose(const ExtentMap& upper, DevT lower_dev, const ExtentMap& lower);

// Adjacent extents that continue each other on one device, joined.
ExtentMap coalesce(const ExtentMap& map);

// The volume sector of device sectors [sector, sector + n) of `dev` when
// they lie inside one extent (and one chunk of a striped one); nullopt otherwise (outside the
// volume, or crossing from one extent to a piece of the volume elsewhere).
std::optional<uint64_t> volume_sector_of(const ExtentMap& map, DevT dev, uint64_t sector,
                                         uint64_t n);

// A device's sector ranges [start, end) the capture's filter holds, at most
// `max_ranges`: the extents on `dev` (a member's share of a striped area is
// one range), sorted and joined where they touch;
// when more remain, the smallest gaps between them are closed until
// `max_ranges` are left (requests in a closed gap are outside the volume and
// are dropped in user space by volume_sector_of).
std::vector<std::pair<uint64_t, uint64_t>> filter_ranges(const ExtentMap& map, DevT dev,
                                                         size_t max_ranges);

// Request `r` on a disk as the volume `volume` saw it: one record per extent
// (and per chunk of a striped extent) it touches (a write none through a reads_only extent) (almost
// always one; two where the block layer merged bios of two places of the volume that lie side by
// side on the disk), each with the volume as its device, the volume's sector, its share of the
// bytes and of the disk time. Empty when no sector of it lies in the volume. A request of no bytes
// (a flush) whose sector lies in the volume gives one record.
std::vector<Request> requests_on_volume(const Request& r, const ExtentMap& map, DevT volume);

// The copies of a mirrored map other than the first (Extent::copy), sorted;
// empty when nothing in it is mirrored.
std::vector<uint32_t> mirror_copies(const ExtentMap& map);

// The map as copy `copy` sees it: that copy's extents take the writes, every
// other copy's extents only reads (copy 0: the map as it is). Following the
// writes of each copy in turn proves that a write reached every member.
ExtentMap mirror_view(const ExtentMap& map, uint32_t copy);

// One piece of a stacked volume on a disk, for attribution through the
// stack: the volume's bios in `extent` reach `extent.dev` at its sectors.
struct VolumePiece {
  DevT volume = 0;
  Extent extent;
  bool operator==(const VolumePiece&) const = default;
};

// The pieces of `volumes` (each volume's map, coalesced; every member of a
// mirror, since a write reaches them all; every member of a striped area,
// one piece each with its stripe, chunk and phase), volume by volume, at
// most `max`: a volume whose pieces do not all fit is left out whole and
// appended to `left_out`; a volume given twice is taken once.
std::vector<VolumePiece> attribution_pieces(const std::vector<std::pair<DevT, ExtentMap>>& volumes,
                                            size_t max, std::vector<DevT>* left_out);

// "0+2048>8:0@4096,2048+1024>8:16@0": the map as one line (trace headers);
// a striped extent adds "/S.N*C" (stripe S of N, chunks of C sectors) and
// "+P" when it starts P sectors into its chunk: "0+1920>8:16@0/0.2*128".
std::string format_extents(const ExtentMap& map);

}  // namespace blkrr
