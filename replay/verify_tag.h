// The tag blkrr writes at the start of every 512-byte sector it writes, so
// that later reads can tell which write a sector holds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace blkrr::replay {

enum class VerifyMode { kNone, kVerify, kFinalVerify, kParanoia };

Result<VerifyMode> parse_vmode(std::string_view s);  // none | verify | final-verify | paranoia
std::string_view vmode_name(VerifyMode m);

constexpr uint64_t kTagMagic = 0x4741'5452'524b'4c42ull;  // "BLKRRTAG" little-endian
constexpr size_t kTagBytes = 48;

struct SectorTag {
  uint64_t run_id = 0;
  uint64_t seq = 0;          // request sequence number in the load
  uint64_t version = 0;      // how many times this run has written the sector (1 = first)
  uint64_t sector = 0;       // device sector the tag was written to
  uint32_t req_sectors = 0;  // length of the writing request in sectors
  uint32_t offset = 0;       // index of this sector within the request

  bool operator==(const SectorTag&) const = default;
};

// Writes the tag into the first kTagBytes of `sector512` (little-endian).
void encode_tag(const SectorTag& t, uint8_t* sector512);
// The tag at the start of `sector512`, or nullopt when there is none.
std::optional<SectorTag> decode_tag(const uint8_t* sector512);
std::string tag_to_string(const SectorTag& t);

}  // namespace blkrr::replay
