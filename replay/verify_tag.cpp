#include "replay/verify_tag.h"

#include <cstring>

namespace blkrr::replay {

Result<VerifyMode> parse_vmode(std::string_view s) {
  if (s == "none") return VerifyMode::kNone;
  if (s == "verify") return VerifyMode::kVerify;
  if (s == "final-verify") return VerifyMode::kFinalVerify;
  if (s == "paranoia") return VerifyMode::kParanoia;
  return Error(ErrorKind::kUsage, "unknown vmode '" + std::string(s) +
                                      "' (use none, verify, final-verify or paranoia)");
}

std::string_view vmode_name(VerifyMode m) {
  switch (m) {
    case VerifyMode::kNone:
      return "none";
    case VerifyMode::kVerify:
      return "verify";
    case VerifyMode::kFinalVerify:
      return "final-verify";
    case VerifyMode::kParanoia:
      return "paranoia";
  }
  return "?";
}

namespace {
void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
}  // namespace

void encode_tag(const SectorTag& t, uint8_t* s) {
  put64(s + 0, kTagMagic);
  put64(s + 8, t.run_id);
  put64(s + 16, t.seq);
  put64(s + 24, t.version);
  put64(s + 32, t.sector);
  put32(s + 40, t.req_sectors);
  put32(s + 44, t.offset);
}

std::optional<SectorTag> decode_tag(const uint8_t* s) {
  if (get64(s) != kTagMagic) return std::nullopt;
  SectorTag t;
  t.run_id = get64(s + 8);
  t.seq = get64(s + 16);
  t.version = get64(s + 24);
  t.sector = get64(s + 32);
  t.req_sectors = get32(s + 40);
  t.offset = get32(s + 44);
  return t;
}

std::string tag_to_string(const SectorTag& t) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "run=%016llx seq=%llu version=%llu sector=%llu len=%u offset=%u",
                static_cast<unsigned long long>(t.run_id), static_cast<unsigned long long>(t.seq),
                static_cast<unsigned long long>(t.version),
                static_cast<unsigned long long>(t.sector), t.req_sectors, t.offset);
  return buf;
}

}  // namespace blkrr::replay
